// This file speaks JSON-RPC 2.0 with LSP framing (Content-Length headers) to one language
// server over its stdin and stdout: requests with answers, notifications both ways, and
// the few requests a server sends its client.

package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxFrame bounds one message from a server (a workspace's diagnostics can be large).
const maxFrame = 64 << 20

// message is any JSON-RPC message.
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

// rpcError is an error answer.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// errClosed is returned for requests once the connection has ended.
var errClosed = errors.New("the language server's connection is closed")

// conn is one connection. Its methods are safe for concurrent use.
type conn struct {
	w io.Writer
	// onNotify receives the server's notifications, on the read goroutine; onRequest answers
	// the server's requests (result, or an error), on the read goroutine.
	onNotify  func(method string, params json.RawMessage)
	onRequest func(method string, params json.RawMessage) (any, *rpcError)

	// wmu serializes writes.
	wmu sync.Mutex
	// mu guards the fields below it.
	mu      sync.Mutex
	next    int64
	pending map[int64]chan *message
	err     error // why the connection ended; nil while it runs
	done    chan struct{}
}

func newConn(w io.Writer, onNotify func(string, json.RawMessage), onRequest func(string, json.RawMessage) (any, *rpcError)) *conn {
	return &conn{w: w, onNotify: onNotify, onRequest: onRequest, pending: map[int64]chan *message{}, done: make(chan struct{})}
}

// read reads messages from r until it ends, then fails the pending requests with err.
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var m *message
		if m, err = readFrame(br); err != nil {
			break
		}
		c.dispatch(m)
	}
	c.mu.Lock()
	c.err = fmt.Errorf("%w: %v", errClosed, err)
	pending := c.pending
	c.pending = map[int64]chan *message{}
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	close(c.done)
}

func (c *conn) dispatch(m *message) {
	switch {
	case m.Method != "" && m.ID != nil:
		res, rerr := c.onRequest(m.Method, m.Params)
		out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if rerr != nil {
			out["error"] = rerr
		} else {
			out["result"] = res
		}
		_ = c.write(out)
	case m.Method != "":
		c.onNotify(m.Method, m.Params)
	case m.ID != nil:
		id, err := strconv.ParseInt(string(*m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// call sends a request and waits for its answer, decoded into result (when not nil), or for
// ctx: then the server is sent $/cancelRequest.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.forget(id)
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return err
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.notify("$/cancelRequest", map[string]any{"id": id})
		return ctx.Err()
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *conn) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err = c.w.Write(body)
	return err
}

// readFrame reads one framed message.
func readFrame(br *bufio.Reader) (*message, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length < 0 {
				continue // blank lines before a header: tolerated
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxFrame {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("a message that is not JSON-RPC: %v", err)
	}
	return &m, nil
}

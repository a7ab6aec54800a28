// This file is the connection: framing what the editor sends, splitting and keeping what
// the daemon writes, waiting for a message, and requests correlated with their responses.

package pidtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

// Framing is how messages are delimited on the wire.
type Framing int

const (
	// LSP frames each message with a Content-Length header (package rpc's face).
	LSP Framing = iota
	// Lines writes each message as one line of JSON (the ACP face, `pid --acp`).
	Lines
)

// DefaultHangGuard bounds a wait when ConnOptions.HangGuard is zero.
const DefaultHangGuard = 30 * time.Second

// ErrEnded is the error of a wait whose message can no longer come: the daemon's output
// ended.
var ErrEnded = errors.New("the daemon's output ended")

// Omit, as params, leaves the params member out of a request or notification (nil sends
// "params":null).
var Omit = omit{}

type omit struct{}

// ConnOptions configure a Conn. The zero value is an LSP connection that keeps every
// message, with the default hang guard.
type ConnOptions struct {
	Framing Framing
	// Discard keeps no message: Messages and Await see none, and only the responses to
	// this Conn's own requests (Request, Call) are kept, each until Response takes it.
	Discard bool
	// HangGuard bounds every wait; 0 is DefaultHangGuard.
	HangGuard time.Duration
	// FirstID is the id of the first request Request numbers (later ones count up from it);
	// 0 is 1. A test that sends ids of its own picks a range they do not reach.
	FirstID int64
	// Check, when set, is called with every message before it is kept, on the read
	// goroutine; an error it returns is a wire error (Err), and the message is kept anyway.
	Check func(raw []byte) error
	// OnMessage, when set, is called with every message after it is kept (and before a
	// Response waiting for it returns), on the read goroutine. It may send; it must not
	// wait for a later message.
	OnMessage func(*Msg)
}

// Conn is the editor's end of one connection to a daemon. See the package comment for
// who may call what concurrently.
type Conn struct {
	opts  ConnOptions
	guard time.Duration
	done  chan struct{} // closed when the read goroutine has ended

	// wmu serializes writes, so that frames never interleave.
	wmu sync.Mutex
	w   io.Writer

	nextID atomic.Int64

	// mu guards the fields below it.
	mu      sync.Mutex
	msgs    []*Msg
	seq     int           // the Seq of the next message read
	changed chan struct{} // closed and replaced whenever a message is kept or the output ends
	ended   bool
	err     error                // the first wire error
	pending map[string]chan *Msg // Discard: our requests' ids (compact) -> their response's channel
}

// NewConn starts reading r (the daemon's output) on a goroutine of its own and returns the
// Conn that writes to w (its input). The goroutine ends when r ends or breaks the framing.
func NewConn(w io.Writer, r io.Reader, opts ConnOptions) *Conn {
	c := &Conn{opts: opts, guard: opts.HangGuard, done: make(chan struct{}), w: w,
		changed: make(chan struct{}), pending: map[string]chan *Msg{}}
	if c.guard <= 0 {
		c.guard = DefaultHangGuard
	}
	first := opts.FirstID
	if first == 0 {
		first = 1
	}
	c.nextID.Store(first - 1)
	go c.readLoop(r)
	return c
}

// Done returns a channel closed once the daemon's output has ended and the read goroutine
// with it.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns the first wire error: a frame or line that breaks the framing or is not
// JSON, an error of ConnOptions.Check, or a read error other than the output's end.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Ended reports whether the daemon's output has ended.
func (c *Conn) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// HangGuard returns the bound of the Conn's waits.
func (c *Conn) HangGuard() time.Duration { return c.guard }

func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *Conn) readLoop(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var body []byte
		var err error
		if c.opts.Framing == Lines {
			body, err = readLine(br)
		} else {
			body, err = ReadFrame(br)
		}
		if err != nil {
			if err != io.EOF {
				c.fail(err)
			}
			break
		}
		if !json.Valid(body) {
			c.fail(fmt.Errorf("a message that is not JSON: %q", truncate(string(body), 200)))
			continue
		}
		if c.opts.Check != nil {
			if err := c.opts.Check(body); err != nil {
				c.fail(err)
			}
		}
		c.keep(body)
	}
	c.mu.Lock()
	c.ended = true
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// keep records one message, runs OnMessage and hands a response to the request waiting
// for it.
func (c *Conn) keep(body []byte) {
	c.mu.Lock()
	m := &Msg{Seq: c.seq, Raw: body}
	c.seq++
	if !c.opts.Discard {
		c.msgs = append(c.msgs, m)
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.mu.Unlock()
	if c.opts.OnMessage != nil {
		c.opts.OnMessage(m)
	}
	if c.opts.Discard && m.IsResponse() {
		id := m.ID()
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m: // Response takes it (and the entry)
			default: // a second response to one id: the first stays
			}
		}
	}
}

// ReadFrame reads one Content-Length frame and returns its body, strictly: header lines end
// in \r\n, the only header is Content-Length, and it is there. io.EOF means the output ended
// between frames. Whether the body is JSON is the caller's to check.
func ReadFrame(br *bufio.Reader) ([]byte, error) {
	length := -1
	for first := true; ; first = false {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && first && line == "" {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading a header: %v (got %q)", err, line)
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("header line without \\r\\n: %q", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		v, ok := strings.CutPrefix(line, "Content-Length: ")
		if !ok {
			return nil, fmt.Errorf("unexpected header line %q", line)
		}
		if length, err = strconv.Atoi(v); err != nil || length < 0 {
			return nil, fmt.Errorf("bad Content-Length %q", v)
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("reading a body of %d bytes: %v", length, err)
	}
	return body, nil
}

// readLine reads one line, without its \n. io.EOF means the output ended between lines.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		if err == io.EOF {
			return nil, fmt.Errorf("the output ended inside a line: %q", truncate(string(line), 200))
		}
		return nil, err
	}
	return line[:len(line)-1], nil
}

// Messages returns the messages kept so far, in the order read.
func (c *Conn) Messages() []*Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Msg(nil), c.msgs...)
}

// Changed returns a channel closed when the next message is kept or the output ends.
func (c *Conn) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Dump returns the messages kept so far, one a line, each cut at 400 bytes: for the
// message of a failed wait.
func (c *Conn) Dump() string {
	var sb strings.Builder
	for _, m := range c.Messages() {
		fmt.Fprintf(&sb, "  %3d %s\n", m.Seq, truncate(m.String(), 400))
	}
	return sb.String()
}

// Await returns the first message kept (in the order read) for which pred holds, waiting
// for it under the hang guard; what names it in the error. The error is ErrEnded (wrapped)
// when the output ended first.
func (c *Conn) Await(what string, pred func(*Msg) bool) (*Msg, error) {
	if c.opts.Discard {
		return nil, fmt.Errorf("waiting for %s: this Conn keeps no message", what)
	}
	guard := time.NewTimer(c.guard)
	defer guard.Stop()
	next := 0
	for {
		c.mu.Lock()
		msgs, ch, ended, err := c.msgs[next:], c.changed, c.ended, c.err
		c.mu.Unlock()
		for _, m := range msgs {
			if pred(m) {
				return m, nil
			}
		}
		next += len(msgs)
		if ended {
			return nil, fmt.Errorf("waiting for %s: %w (wire error: %v); received:\n%s", what, ErrEnded, err, c.Dump())
		}
		select {
		case <-ch:
		case <-guard.C:
			return nil, fmt.Errorf("hang guard: no %s after %v; received:\n%s", what, c.guard, c.Dump())
		}
	}
}

// Message returns the message with Seq i, waiting for it under the hang guard: a reader
// that takes pid's messages one after the other asks for 0, 1, 2... The error is ErrEnded
// (wrapped) when the output ended before it.
func (c *Conn) Message(i int) (*Msg, error) {
	if c.opts.Discard {
		return nil, fmt.Errorf("waiting for message %d: this Conn keeps no message", i)
	}
	guard := time.NewTimer(c.guard)
	defer guard.Stop()
	for {
		c.mu.Lock()
		var m *Msg
		if i < len(c.msgs) {
			m = c.msgs[i]
		}
		ch, ended := c.changed, c.ended
		c.mu.Unlock()
		switch {
		case m != nil:
			return m, nil
		case ended:
			return nil, fmt.Errorf("waiting for message %d: %w", i, ErrEnded)
		}
		select {
		case <-ch:
		case <-guard.C:
			return nil, fmt.Errorf("hang guard: no message %d after %v", i, c.guard)
		}
	}
}

// Write sends raw bytes, under the hang guard: a write waits until the daemon reads,
// which a daemon whose read loop is stuck never does.
func (c *Conn) Write(b []byte) error {
	type deadliner interface{ SetWriteDeadline(time.Time) error }
	if f, ok := c.w.(deadliner); ok {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if f.SetWriteDeadline(time.Now().Add(c.guard)) == nil {
			_, err := c.w.Write(b)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("hang guard: the daemon did not read %q within %v (is its read loop blocked?)", truncate(string(b), 200), c.guard)
			}
			return err
		}
		_, err := c.w.Write(b)
		return err
	}
	done := make(chan error, 1)
	go func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		_, err := c.w.Write(b)
		done <- err
	}()
	guard := time.NewTimer(c.guard)
	defer guard.Stop()
	select {
	case err := <-done:
		return err
	case <-guard.C:
		return fmt.Errorf("hang guard: the daemon did not read %q within %v (is its read loop blocked?)", truncate(string(b), 200), c.guard)
	}
}

// Send sends body as one message: in one Content-Length frame, or as one line.
func (c *Conn) Send(body []byte) error {
	var b []byte
	if c.opts.Framing == Lines {
		b = make([]byte, 0, len(body)+1)
		b = append(append(b, body...), '\n')
	} else {
		b = fmt.Appendf(make([]byte, 0, len(body)+24), "Content-Length: %d\r\n\r\n", len(body))
		b = append(b, body...)
	}
	return c.Write(b)
}

// SendJSON sends v, encoded as JSON, as one message.
func (c *Conn) SendJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Send(b)
}

func encodeParams(params any) (string, error) {
	switch p := params.(type) {
	case omit:
		return "", nil
	case json.RawMessage:
		return `,"params":` + string(p), nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return "", fmt.Errorf("encoding params: %v", err)
	}
	return `,"params":` + string(b), nil
}

// NextID returns a fresh request id (raw JSON), for RequestID.
func (c *Conn) NextID() string { return strconv.FormatInt(c.nextID.Add(1), 10) }

// RequestID sends a request with the given id (raw JSON) and returns the id, compact.
// Params Omit leaves the member out; a json.RawMessage is sent as it is.
func (c *Conn) RequestID(id, method string, params any) (string, error) {
	p, err := encodeParams(params)
	if err != nil {
		return "", err
	}
	key := CompactJSON(id)
	var ch chan *Msg
	if c.opts.Discard {
		ch = make(chan *Msg, 1)
		c.mu.Lock()
		c.pending[key] = ch
		c.mu.Unlock()
	}
	m, err := json.Marshal(method)
	if err != nil {
		return "", err
	}
	if err := c.Send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":` + string(m) + p + `}`)); err != nil {
		if ch != nil {
			c.mu.Lock()
			delete(c.pending, key)
			c.mu.Unlock()
		}
		return "", err
	}
	return key, nil
}

// Request sends a request with a fresh numeric id and returns that id.
func (c *Conn) Request(method string, params any) (string, error) {
	return c.RequestID(c.NextID(), method, params)
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	p, err := encodeParams(params)
	if err != nil {
		return err
	}
	m, err := json.Marshal(method)
	if err != nil {
		return err
	}
	return c.Send([]byte(`{"jsonrpc":"2.0","method":` + string(m) + p + `}`))
}

// Response waits for the response to the request with id (raw JSON). On a Conn that
// discards, only the response to a request this Conn sent can be waited for, once.
func (c *Conn) Response(id string) (*Msg, error) {
	id = CompactJSON(id)
	if !c.opts.Discard {
		return c.Await("the response to request "+id, func(m *Msg) bool { return m.IsResponse() && m.ID() == id })
	}
	c.mu.Lock()
	ch := c.pending[id]
	c.mu.Unlock()
	if ch == nil {
		return nil, fmt.Errorf("no request %s of this Conn's is waiting for its response", id)
	}
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	guard := time.NewTimer(c.guard)
	defer guard.Stop()
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		// The response may have been the last message read.
		select {
		case m := <-ch:
			return m, nil
		default:
		}
		return nil, fmt.Errorf("waiting for the response to request %s: %w", id, ErrEnded)
	case <-guard.C:
		return nil, fmt.Errorf("hang guard: no response to request %s after %v", id, c.guard)
	}
}

// Call sends a request and returns its result; an error response is an *Error.
func (c *Conn) Call(method string, params any) (gjson.Result, error) {
	id, err := c.Request(method, params)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("%s: %w", method, err)
	}
	m, err := c.Response(id)
	if err != nil {
		return gjson.Result{}, fmt.Errorf("%s: %w", method, err)
	}
	if e := m.Get("error"); e.Exists() {
		return gjson.Result{}, &Error{Method: method, Code: e.Get("code").Int(), Message: e.Get("message").String(), Raw: e.Raw}
	}
	return m.Get("result"), nil
}

// Answer answers a request of the daemon's with result (encoded as JSON).
func (c *Conn) Answer(req *Msg, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return c.Send([]byte(`{"jsonrpc":"2.0","id":` + req.ID() + `,"result":` + string(b) + `}`))
}

// AnswerError answers a request of the daemon's with a JSON-RPC error.
func (c *Conn) AnswerError(req *Msg, code int, message string) error {
	m, err := json.Marshal(message)
	if err != nil {
		return err
	}
	return c.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, req.ID(), code, m))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

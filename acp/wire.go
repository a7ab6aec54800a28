// This file is the wire: JSON-RPC 2.0 as newline-delimited JSON (one message per line, no
// Content-Length header), which is how ACP runs over stdio. It reads lines (at most maxLine
// bytes each: a longer one is answered at once and skipped unread) and checks the message
// each holds (rpcwire.Scan: no recursion, at most rpcwire.MaxDepth levels), writes messages
// one line at a time, and tracks pid's own requests to the client until their responses
// arrive.

package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/pid-agent/pid/internal/rpcwire"
)

// JSON-RPC error codes pid answers with (ACP's ErrorCode lists them).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotFound       = -32002 // ACP "Resource not found": an unknown session
	// codeRequestFailed is LSP's RequestFailed (ACP takes -32800 from the same range): a
	// valid request that cannot be done now, for the reason its message gives (a session
	// another pid holds).
	codeRequestFailed = -32803
)

// maxLine bounds one incoming message, line end included. A longer line is answered with
// -32700 as soon as it is longer, and the rest of it is skipped without being kept.
const maxLine = 64 << 20

// rpcError is an error with its JSON-RPC code; it is what a handler returns to answer a
// request with a specific code. Other errors become -32603.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	// Data is the error's optional data ({sessionId} for an unknown session, as ACP asks).
	Data any `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int64, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is one incoming JSON-RPC message. Absent members are nil; a member that is
// present with the value null is the raw text null.
type message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// kind of an incoming message.
type kind int

const (
	kindRequest kind = iota
	kindNotification
	kindResponse
)

// classify checks one line (in one pass: rpcwire.Scan). It returns the message and its kind,
// or the error response to send (with the id it can answer, "null" when there is none) for
// a line that is no JSON-RPC message; a malformed notification is returned as nil with no
// error: it is dropped, never answered. The message's members are slices of line.
func classify(line []byte) (*message, kind, json.RawMessage, *rpcError) {
	null := json.RawMessage("null")
	env, err := rpcwire.Scan(line)
	var se *rpcwire.SyntaxError
	if errors.As(err, &se) {
		return nil, 0, null, errorf(codeParseError, "Parse error: %v", se)
	}
	tooDeep := errors.Is(err, rpcwire.ErrTooDeep)
	if env.Top != '{' {
		return nil, 0, null, errorf(codeInvalidRequest, "Invalid request: a message must be a JSON object (ACP does not use batches)")
	}
	msg := &message{ID: env.ID, Params: env.Params, Result: env.Result, Error: env.Error}
	idOK := msg.ID == nil || validID(msg.ID)
	answerID := null
	if msg.ID != nil && idOK {
		answerID = msg.ID
	}
	if env.Method == nil {
		if msg.ID != nil && (env.Result != nil || env.Error != nil) {
			// A response to one of pid's requests; checked by whoever waits for it (a
			// result nested too deep then fails to decode there).
			return msg, kindResponse, nil, nil
		}
		return nil, 0, answerID, errorf(codeInvalidRequest, "Invalid request: a message needs a method (request or notification) or an id with a result or error (response)")
	}
	method, ok := rpcwire.String(env.Method)
	if !ok {
		return nil, 0, answerID, errorf(codeInvalidRequest, "Invalid request: method must be a string")
	}
	msg.Method = method
	if v, ok := rpcwire.String(env.JSONRPC); !ok || v != "2.0" {
		if msg.ID == nil {
			return nil, 0, nil, nil // a bad notification: dropped, never answered
		}
		return nil, 0, answerID, errorf(codeInvalidRequest, `Invalid request: jsonrpc must be "2.0"`)
	}
	if msg.ID == nil {
		if tooDeep {
			return nil, 0, nil, nil
		}
		return msg, kindNotification, nil, nil
	}
	if !idOK {
		return nil, 0, null, errorf(codeInvalidRequest, "Invalid request: id must be a string, a number or null")
	}
	if tooDeep {
		return nil, 0, answerID, errorf(codeInvalidRequest, "Invalid request: %v, pid's limit", rpcwire.ErrTooDeep)
	}
	return msg, kindRequest, nil, nil
}

// validID reports whether raw is a JSON-RPC id pid accepts: null (which ACP allows), a
// string or any number (integers beyond 64 bits and fractions included: they are echoed as
// written).
func validID(raw json.RawMessage) bool {
	if string(raw) == "null" {
		return true
	}
	_, ok := rpcwire.IDKey(raw)
	return ok
}

// idKey is the map key of a request id: ids equal in value share it (rpcwire.IDKey), null is
// "null", and anything else its compact JSON text.
func idKey(raw json.RawMessage) string {
	if k, ok := rpcwire.IDKey(raw); ok {
		return k
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Outgoing shapes. Each has exactly the members of its kind.
type (
	outRequest struct {
		JSONRPC string `json:"jsonrpc"`
		ID      uint64 `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	outNotification struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	outResult struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}
	outError struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpcError       `json:"error"`
	}
)

// answer is a response to one of pid's requests.
type answer struct {
	result json.RawMessage
	err    *rpcError
}

// conn is one connection: the reading side (used by the read loop only), the writing side
// (any goroutine) and pid's requests waiting for their responses.
type conn struct {
	log *slog.Logger

	// Reader state, used by the read loop only.
	r        *bufio.Reader
	maxLine  int  // maxLine, or less in tests
	skipping bool // the rest of an overlong line is to be skipped before the next line

	// wmu serializes writes: each message is one Write of one whole line.
	wmu sync.Mutex
	w   io.Writer
	buf bytes.Buffer

	// done closes when the input has ended: nothing more will be answered.
	done     chan struct{}
	doneOnce sync.Once

	// mu guards the fields below it.
	mu      sync.Mutex
	nextID  uint64
	waiting map[string]chan answer // id of a request of pid's -> its answer
}

func newConn(r io.Reader, w io.Writer, log *slog.Logger) *conn {
	return &conn{r: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine, w: w, log: log, done: make(chan struct{}), waiting: map[string]chan answer{}}
}

// errLineTooLong reports a line over maxLine; the rest of it is skipped by the next read.
var errLineTooLong = errors.New("line too long")

// next reads the next line and returns the message it holds. A line that holds none is
// answered at once with an error (or, a malformed notification, dropped) and next returns
// nil: the caller reads on. It returns an error when the input ends or breaks. Only the
// read loop calls it.
func (c *conn) next() (*message, kind, error) {
	line, err := c.readLine()
	if errors.Is(err, errLineTooLong) {
		c.replyError(json.RawMessage("null"), errorf(codeParseError, "Parse error: the message is longer than %d bytes", c.maxLine))
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	msg, k, answerID, perr := classify(line)
	if perr != nil {
		c.replyError(answerID, perr)
		return nil, 0, nil
	}
	if msg == nil {
		c.log.Debug("dropped a malformed notification")
		return nil, 0, nil
	}
	if msg.ID != nil {
		// The id outlives the line while the request runs; the rest is not kept.
		msg.ID = append(json.RawMessage(nil), msg.ID...)
	}
	return msg, k, nil
}

// readLine returns the next non-empty line without its line end, in memory of its own. A
// line longer than c.maxLine is not kept: readLine returns errLineTooLong as soon as it has
// received more than that, and the next call first skips the rest of the line. At the end of
// the input it returns io.EOF (a last line without a newline is still returned first).
func (c *conn) readLine() ([]byte, error) {
	for {
		if c.skipping {
			if err := c.skipLine(); err != nil {
				return nil, err
			}
		}
		line, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if line, err = c.readLong(line); errors.Is(err, errLineTooLong) {
				return nil, err
			}
		} else {
			line = append([]byte(nil), line...) // ReadSlice's is overwritten by the next read
		}
		if len(line) > c.maxLine { // it ended (or the input did): nothing to skip
			return nil, errLineTooLong
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		return line, nil
	}
}

// readLong reads the rest of a line whose start filled the reader's buffer, and returns the
// whole line with the error that ended it (nil at its line end). It looks at the input as it
// arrives, so that it returns errLineTooLong (and has the next readLine skip the rest) as
// soon as the line is longer than c.maxLine, without waiting for more.
func (c *conn) readLong(start []byte) ([]byte, error) {
	line := append(make([]byte, 0, 2*len(start)), start...)
	for {
		if len(line) > c.maxLine {
			c.skipping = true
			return nil, errLineTooLong
		}
		buf, err := c.r.Peek(max(c.r.Buffered(), 1))
		if len(buf) == 0 {
			return line, err // the input ended or broke
		}
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1]
		}
		line = c.appendLong(line, buf)
		c.r.Discard(len(buf))
		if line[len(line)-1] == '\n' {
			return line, nil
		}
	}
}

// appendLong appends p to a long line, doubling its memory when it must grow (so that a line
// costs at most twice its size in allocations) but never beyond what the limit needs.
func (c *conn) appendLong(line, p []byte) []byte {
	if cap(line)-len(line) < len(p) {
		size := min(max(2*cap(line), len(line)+len(p)), max(c.maxLine+c.r.Size()+1, len(line)+len(p)))
		grown := make([]byte, len(line), size)
		copy(grown, line)
		line = grown
	}
	return append(line, p...)
}

// skipLine discards the input up to and including the next line end.
func (c *conn) skipLine() error {
	for {
		_, err := c.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			c.skipping = false
			return err
		}
	}
}

// write sends one message as one line. Strings are valid UTF-8 (encoding/json replaces
// invalid bytes; raw JSON carried through is re-encoded when it holds any). Errors mean the
// client is gone; they are logged and returned.
func (c *conn) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.buf.Reset()
	enc := json.NewEncoder(&c.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		c.log.Error("encoding a message failed", "err", err)
		return err
	}
	b := c.buf.Bytes() // ends with the encoder's newline
	if !utf8.Valid(b) {
		clean, err := sanitize(b)
		if err != nil {
			c.log.Error("encoding a message failed", "err", err)
			return err
		}
		b = clean
	}
	if _, err := c.w.Write(b); err != nil {
		c.log.Debug("write failed", "err", err)
		return err
	}
	return nil
}

// sanitize re-encodes a JSON line whose raw parts held invalid UTF-8: decoding replaces
// each bad byte with U+FFFD.
func sanitize(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (c *conn) reply(id json.RawMessage, result any) error {
	return c.write(outResult{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *conn) replyError(id json.RawMessage, e *rpcError) error {
	return c.write(outError{JSONRPC: "2.0", ID: id, Error: e})
}

func (c *conn) notify(method string, params any) error {
	return c.write(outNotification{JSONRPC: "2.0", Method: method, Params: params})
}

// errClosed is the failure of a request to the client once the input has ended.
var errClosed = errors.New("the client closed the connection")

// call sends a request to the client and waits for its response, ctx or the end of the
// input. The response's result is decoded into result; an error response is returned as
// an *rpcError. Once call has returned, a late response to it is dropped.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	return c.roundTrip(ctx, method, params, result, false)
}

// callCancelling is call, except that when ctx ends first the client is told with
// $/cancel_request that the request is given up (so it can take down what it shows).
func (c *conn) callCancelling(ctx context.Context, method string, params, result any) error {
	return c.roundTrip(ctx, method, params, result, true)
}

type cancelRequestParams struct {
	RequestID uint64 `json:"requestId"`
}

func (c *conn) roundTrip(ctx context.Context, method string, params, result any, cancel bool) error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	key := idKey(json.RawMessage(strconv.FormatUint(id, 10)))
	ch := make(chan answer, 1)
	c.waiting[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
	}()
	select {
	case <-c.done:
		return errClosed
	default:
	}
	if err := c.write(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return a.err
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(a.result, result); err != nil {
			return fmt.Errorf("the client's answer to %s does not have the expected shape: %v", method, err)
		}
		return nil
	case <-c.done:
		return errClosed
	case <-ctx.Done():
		if cancel {
			_ = c.notify("$/cancel_request", cancelRequestParams{RequestID: id})
		}
		return ctx.Err()
	}
}

// deliver hands a response to the request of pid's that waits for it. A response nobody
// waits for (a late answer to a request given up on) is logged and dropped.
func (c *conn) deliver(m *message) {
	key := idKey(m.ID)
	c.mu.Lock()
	ch := c.waiting[key]
	delete(c.waiting, key)
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("dropped a response nobody waits for", "id", key)
		return
	}
	var a answer
	switch {
	case m.Error != nil && string(m.Error) != "null":
		var e rpcError
		if json.Unmarshal(m.Error, &e) != nil {
			e = rpcError{Code: codeInternalError, Message: "malformed error response: " + string(m.Error)}
		}
		a.err = &e
	case m.Result == nil:
		a.err = &rpcError{Code: codeInternalError, Message: "the response has neither result nor error"}
	default:
		a.result = m.Result
	}
	ch <- a
}

// close marks the input as ended; pid's waiting requests fail with errClosed.
func (c *conn) close() { c.doneOnce.Do(func() { close(c.done) }) }

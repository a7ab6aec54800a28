// This file is the wire, ACP's rpcconn.Codec: JSON-RPC 2.0 as newline-delimited JSON (one
// message per line, no Content-Length header), which is how ACP runs over stdio. It reads
// lines (at most maxLine bytes each: a longer one is rejected at once and skipped unread) and
// checks the message each holds (rpcwire.Scan: no recursion, at most rpcwire.MaxDepth
// levels), and frames what pid writes as lines of valid UTF-8. Package rpcconn runs the rest
// of the connection; conn adapts its requests to the client to ACP's errors.

package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/internal/rpcwire"
)

// maxLine bounds one incoming message, line end included. A longer line is answered with
// -32700 as soon as it is longer, and the rest of it is skipped without being kept.
const maxLine = 64 << 20

// rpcError is a JSON-RPC error as it goes on the wire: what toWire makes of an error
// (errors.go), and what the client answered one of pid's requests with.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	// Data is the error's optional data ({sessionId} for an unknown session, as ACP asks).
	Data any `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// wire is the error as it goes on the wire.
func (e *rpcError) wire() *jsonrpc2.Error {
	w := &jsonrpc2.Error{Code: e.Code, Message: e.Message}
	if e.Data != nil {
		if b, err := marshal(e.Data); err == nil {
			raw := json.RawMessage(b)
			w.Data = &raw
		}
	}
	return w
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
func classify(line []byte) (*message, kind, json.RawMessage, error) {
	null := json.RawMessage("null")
	env, err := rpcwire.Scan(line)
	var se *rpcwire.SyntaxError
	if errors.As(err, &se) {
		return nil, 0, null, fmt.Errorf("%w: %v", errParse, se)
	}
	tooDeep := errors.Is(err, rpcwire.ErrTooDeep)
	if env.Top != '{' {
		return nil, 0, null, fmt.Errorf("%w: a message must be a JSON object (ACP does not use batches)", errInvalidRequest)
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
		return nil, 0, answerID, fmt.Errorf("%w: a message needs a method (request or notification) or an id with a result or error (response)", errInvalidRequest)
	}
	method, ok := rpcwire.String(env.Method)
	if !ok {
		return nil, 0, answerID, fmt.Errorf("%w: method must be a string", errInvalidRequest)
	}
	msg.Method = method
	if v, ok := rpcwire.String(env.JSONRPC); !ok || v != "2.0" {
		if msg.ID == nil {
			return nil, 0, nil, nil // a bad notification: dropped, never answered
		}
		return nil, 0, answerID, fmt.Errorf(`%w: jsonrpc must be "2.0"`, errInvalidRequest)
	}
	if msg.ID == nil {
		if tooDeep {
			return nil, 0, nil, nil
		}
		return msg, kindNotification, nil, nil
	}
	if !idOK {
		return nil, 0, null, fmt.Errorf("%w: id must be a string, a number or null", errInvalidRequest)
	}
	if tooDeep {
		return nil, 0, answerID, fmt.Errorf("%w: %v, pid's limit", errInvalidRequest, rpcwire.ErrTooDeep)
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

// lines is ACP's rpcconn.Codec.
type lines struct {
	r        *bufio.Reader
	maxLine  int  // maxLine, or less in tests
	skipping bool // the rest of an overlong line is to be skipped before the next line
}

func newLines(r io.Reader) *lines {
	return &lines{r: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine}
}

// errLineTooLong reports a line over maxLine; the rest of it is skipped by the next read.
var errLineTooLong = errors.New("line too long")

// Read implements rpcconn.Codec: it reads the next line and returns the message it holds. A
// line that holds none is an *rpcconn.Reject: answered with an error, or (a malformed
// notification) dropped. It returns another error when the input ends or breaks.
func (c *lines) Read() (*rpcconn.Message, error) {
	line, err := c.readLine()
	if errors.Is(err, errLineTooLong) {
		return nil, &rpcconn.Reject{Err: toWire(fmt.Errorf("%w: the message is longer than %d bytes", errParse, c.maxLine)).wire()}
	}
	if err != nil {
		return nil, err
	}
	msg, k, answerID, perr := classify(line)
	if perr != nil {
		return nil, &rpcconn.Reject{ID: answerID, Err: toWire(perr).wire()}
	}
	if msg == nil {
		return nil, &rpcconn.Reject{} // dropped
	}
	m := &rpcconn.Message{Method: msg.Method, Params: msg.Params, Response: k == kindResponse, Result: msg.Result, Error: msg.Error}
	if msg.ID != nil {
		// The id outlives the line while the request runs; the rest is not kept.
		m.ID = append(json.RawMessage(nil), msg.ID...)
		m.Key = idKey(m.ID)
	}
	return m, nil
}

// Frame implements rpcconn.Codec: body, as valid UTF-8 (a message whose raw parts held
// invalid bytes is re-encoded, each bad byte becoming U+FFFD), and a line end.
func (c *lines) Frame(dst, body []byte) []byte {
	if !utf8.Valid(body) {
		if clean, err := sanitize(body); err == nil {
			body = bytes.TrimSuffix(clean, []byte("\n"))
		} else {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
	}
	return append(append(dst, body...), '\n')
}

// marshal is ACP's encoding of results and params: encoding/json without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// conn is the connection, with pid's requests to the client answered in ACP's errors.
type conn struct{ *rpcconn.Conn }

// readLine returns the next non-empty line without its line end, in memory of its own. A
// line longer than c.maxLine is not kept: readLine returns errLineTooLong as soon as it has
// received more than that, and the next call first skips the rest of the line. At the end of
// the input it returns io.EOF (a last line without a newline is still returned first).
func (c *lines) readLine() ([]byte, error) {
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
func (c *lines) readLong(start []byte) ([]byte, error) {
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
func (c *lines) appendLong(line, p []byte) []byte {
	if cap(line)-len(line) < len(p) {
		size := min(max(2*cap(line), len(line)+len(p)), max(c.maxLine+c.r.Size()+1, len(line)+len(p)))
		grown := make([]byte, len(line), size)
		copy(grown, line)
		line = grown
	}
	return append(line, p...)
}

// skipLine discards the input up to and including the next line end.
func (c *lines) skipLine() error {
	for {
		_, err := c.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			c.skipping = false
			return err
		}
	}
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

func (c conn) notify(method string, params any) error {
	return c.Notify(method, params)
}

// errClosed is the failure of a request to the client once the input has ended.
var errClosed = rpcconn.ErrClosed

// call sends a request to the client and waits for its response, ctx or the end of the
// input. The response's result is decoded into result; an error response is returned as
// an *rpcError. Once call has returned, a late response to it is dropped.
func (c conn) call(ctx context.Context, method string, params, result any) error {
	return c.roundTrip(ctx, method, params, result, false)
}

// callCancelling is call, except that when ctx ends first the client is told with
// $/cancel_request that the request is given up (so it can take down what it shows).
func (c conn) callCancelling(ctx context.Context, method string, params, result any) error {
	return c.roundTrip(ctx, method, params, result, true)
}

func (c conn) roundTrip(ctx context.Context, method string, params, result any, cancel bool) error {
	raw, err := c.Call(ctx, method, params, cancel)
	var je *jsonrpc2.Error
	var me *rpcconn.MalformedError
	switch {
	case errors.As(err, &je):
		return clientError(je)
	case errors.As(err, &me):
		return malformedAnswer(me.Error())
	case err != nil:
		return err
	case raw == nil:
		return malformedAnswer("the response has neither result nor error")
	case result == nil:
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("the client's answer to %s does not have the expected shape: %v", method, err)
	}
	return nil
}

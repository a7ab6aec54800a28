// Package rpcconn is the JSON-RPC 2.0 connection both of pid's faces run on: package rpc (LSP
// Content-Length framing) and package acp (one JSON message per line). A face gives a Codec,
// which frames messages on the byte stream and checks each frame into a Message (rpcwire.Scan
// and the face's own texts for what it refuses), and its method table, whose typed entries
// (QuickOf, LongOf; the MCP Go SDK's method table is the model) get their params decoded
// once, by the face's one Decode; the Conn does the rest of a connection, the same for both:
//
//   - dispatch in arrival order: notifications and quick methods on the read goroutine, long
//     methods on a goroutine each, with a context the face can cancel by request id
//     (CancelRequest, what $/cancelRequest and $/cancel_request reach), and a request whose id
//     is still running reported to the face's admission check;
//   - answers: exactly one per request, with the id exactly as the client wrote it, errors
//     mapped to codes by the face's one mapping (Face.ToWire), and a panicking handler
//     answered with an internal error instead of crashing the daemon;
//   - pid's own requests to the client (Call): ids, correlation of the responses, cancellation
//     notices when pid gives one up, and failure once the input has ended;
//   - writes: messages from any goroutine, each whole; consecutive messages queued while a
//     write is under way go out together in one write, and a message the face defers
//     (SendDeferred) waits up to 200 µs for the next (see sendQueue); after the message
//     Face.SealOn answers (the native face's shutdown reply) only answers are written;
//   - shutdown: when the input ends every running request is cancelled and answered, and Serve
//     returns once every goroutine it started has finished and every queued byte is written.
//
// Beyond its framing and its method table, a face gives only what its documented wire
// behaviour needs and the other face's does not share: the texts and codes of what it
// refuses (in its Codec: the native face refuses id null, ACP takes it), its lifecycle and
// the order of its checks (Admit: the native face answers -32002 before initialize, ACP
// -32601 for an unknown method first), its one mapping of errors to codes (ToWire), its
// JSON encoding (Marshal: the native face escapes HTML as encoding/json does, ACP does not),
// the name of its cancel notice ($/cancelRequest {id}, $/cancel_request {requestId}) and
// whether an answer seals the connection (the native face's shutdown). The faces' tests and
// fixtures pin each of these.
//
// It uses github.com/sourcegraph/jsonrpc2's types where they fit: jsonrpc2.Request is what a
// handler gets, jsonrpc2.Error is the error member of every response pid writes and reads, and
// jsonrpc2.ID numbers pid's own requests. It does not use that package's Conn, which does not
// give what the faces document: it closes the connection on the first frame it cannot parse
// (pid answers -32700 or -32600 and reads on), runs every handler on its read goroutine (so a
// long prompt would stop cancels and steering, and a handler waiting on the client would
// deadlock the response it waits for; its AsyncHandler runs every message on a goroutine of
// its own instead, losing the order of notifications), has no $/cancelRequest (nor ACP's $/cancel_request),
// does not recover a handler's panic, writes each message with its own flush, and its ID
// cannot hold every id JSON-RPC allows (1e2, -1, 1.5, integers over 64 bits, which pid echoes
// exactly as written and matches by value: rpcwire.IDKey).
//
// This file holds the Conn: the read loop, dispatch, answers and pid's own requests.
package rpcconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/internal/rpcwire"
)

// Message is one message the client sent, checked by the face's Codec: a request (ID set), a
// notification (ID nil) or a response to one of pid's requests (Response set).
type Message struct {
	ID     json.RawMessage // exactly as the client wrote it, in memory of its own; nil for a notification
	Key    string          // the id's matching key (the face's: rpcwire.IDKey or a superset); "" without an id
	Method string
	Params json.RawMessage // nil when absent

	Response      bool
	Result, Error json.RawMessage // a response's members, nil when absent
}

// Reject is a Codec's error for a frame that holds no message to handle. The Conn answers it
// with Err and ID (nil: id null), or drops it when Err is nil, and reads on, unless Fatal:
// then it ends the connection once the answer is written.
type Reject struct {
	ID    json.RawMessage
	Err   *jsonrpc2.Error
	Fatal bool
}

func (r *Reject) Error() string {
	if r.Err == nil {
		return "a message dropped unanswered"
	}
	return r.Err.Message
}

// Codec is a face's wire. Contract: Read is called by the read loop only, one call at a time;
// it returns the next message, a *Reject for a frame that holds none (answered by the Conn),
// or another error when the input ends (io.EOF) or breaks. Frame appends body, one encoded
// message, framed, to dst; it is called with the write lock held, from any goroutine, and
// must not block.
type Codec interface {
	Read() (*Message, error)
	Frame(dst, body []byte) []byte
}

// Work is a long method's work, run on a goroutine of its own with a context that ends when
// the request is cancelled or the connection ends. Contract: it answers through reply,
// exactly once (later calls do nothing); if it returns without answering, the request is
// answered with a *NoAnswerError.
type Work func(ctx context.Context, reply func(result any, err error))

// Method is one entry of a face's method table: either Quick or Long is set, or the entry is
// typed (made by QuickOf or LongOf, whose handlers get their params decoded once, by the
// face's Decode). Contract: every handler is called on the read goroutine, in arrival order,
// and must not block; a quick one answers at once; a long one checks the request (an error
// is the answer) and returns the Work to run. The Request has Method and Params; its ID is
// not set (the Conn answers the id as written, which jsonrpc2.ID cannot always hold).
type Method struct {
	Quick func(*jsonrpc2.Request) (any, error)
	Long  func(*jsonrpc2.Request) (Work, error)

	// typedQuick and typedLong are a typed entry's handler, given the face's Decode and the
	// request's params.
	typedQuick func(decode Decode, params json.RawMessage) (any, error)
	typedLong  func(decode Decode, params json.RawMessage) (Work, error)
}

// Decode decodes a request's params into v, a pointer to the params' type: absent or null
// params leave v as it is (the zero value); what the face refuses (an array where it wants
// an object, a field of the wrong type) is an error the face's ToWire maps (invalid params).
// Contract: safe for concurrent use; it must not keep params.
type Decode func(params json.RawMessage, v any) error

// QuickOf returns a typed quick method: f gets the params decoded into a new P by the face's
// Decode (a decoding error is the answer, and f is not called), and its result is the answer.
func QuickOf[P, R any](f func(*P) (R, error)) Method {
	return Method{typedQuick: func(decode Decode, params json.RawMessage) (any, error) {
		p := new(P)
		if err := decode(params, p); err != nil {
			return nil, err
		}
		return f(p)
	}}
}

// LongOf returns a typed long method: f gets the params decoded into a new P by the face's
// Decode (a decoding error is the answer, and f is not called) and returns the Work to run.
func LongOf[P any](f func(*P) (Work, error)) Method {
	return Method{typedLong: func(decode Decode, params json.RawMessage) (Work, error) {
		p := new(P)
		if err := decode(params, p); err != nil {
			return nil, err
		}
		return f(p)
	}}
}

// handlers returns how many of the entry's handlers are set: a valid entry has one.
func (m *Method) handlers() int {
	n := 0
	for _, set := range []bool{m.Quick != nil, m.Long != nil, m.typedQuick != nil, m.typedLong != nil} {
		if set {
			n++
		}
	}
	return n
}

// DecodeJSON is a Decode for a face without rules of its own: absent or null params decode
// to the zero value, anything else with encoding/json.
func DecodeJSON(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	return json.Unmarshal(params, v)
}

// Face is what makes a Conn one face rather than the other.
type Face struct {
	Codec Codec
	Log   *slog.Logger // nil discards

	// Methods is the face's method table.
	Methods map[string]Method
	// Decode decodes the params of the typed entries of Methods (nil: DecodeJSON); its
	// errors are answered through ToWire.
	Decode Decode
	// Admit decides whether a request is taken, before its method is looked up: nil, or the
	// error to answer it with (lifecycle, unknown methods, and running reports whether a
	// request with the same id key is still running). Contract: called on the read
	// goroutine; must not block.
	Admit func(method string, running bool) error
	// Notification handles one notification (any method: the face decodes its cancels and
	// calls CancelRequest). It returns true to end the connection (exit). Contract: called
	// on the read goroutine, in arrival order; must not block.
	Notification func(method string, params json.RawMessage) (stop bool)
	// ToWire is the face's one mapping of errors to JSON-RPC errors. Contract: it never
	// returns nil nor code 0, and is safe for concurrent use.
	ToWire func(error) *jsonrpc2.Error
	// Marshal encodes results and params (encoding/json's options are the face's). Contract:
	// safe for concurrent use.
	Marshal func(any) ([]byte, error)
	// CancelMethod and CancelField name the notification that tells the client pid gave up
	// one of its requests ({"<CancelField>": id}).
	CancelMethod, CancelField string
	// SealOn names the method whose successful answer is the last message pid starts: from
	// then on only answers are written ("" for none).
	SealOn string
}

// Then returns a handler's result with work to run once its answer is queued: the one way
// for what must follow an answer on the wire (a notification about what the answer named).
// The Conn runs after right after queueing the answer, on the goroutine that answered (the
// read goroutine for a quick method, the request's own for a long one), and not at all when
// the answer is an error; after may be nil.
func Then(result any, after func()) any { return &thenResult{result: result, after: after} }

// thenResult is Then's result.
type thenResult struct {
	result any
	after  func()
}

// PanicError is the answer to a request whose handler panicked.
type PanicError struct {
	Method string
	Value  any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("the handler of %s panicked: %v", e.Method, e.Value)
}

// NoAnswerError is the answer to a request whose Work returned without answering.
type NoAnswerError struct{ Method string }

func (e *NoAnswerError) Error() string { return e.Method + " ended without an answer" }

// MalformedError is Call's error for an error response whose error member is not a JSON-RPC
// error object.
type MalformedError struct{ Raw string }

func (e *MalformedError) Error() string { return "malformed error response: " + e.Raw }

var (
	// ErrClosed is Call's error once the input has ended: no answer can come.
	ErrClosed = errors.New("the client closed the connection")
	// ErrSealed is the error of a message pid starts after the answer named by Face.SealOn.
	ErrSealed = errors.New("not sent: nothing pid starts is written after its shutdown reply")
)

// Conn is one connection.
type Conn struct {
	face Face
	log  *slog.Logger
	out  *sendQueue

	// wg counts the goroutines of long requests.
	wg sync.WaitGroup
	// done closes when the read loop has ended: pid's requests then get no answer.
	done     chan struct{}
	doneOnce sync.Once

	// mu guards the fields below it.
	mu sync.Mutex
	// inflight holds the long requests not yet answered, by id key: what CancelRequest
	// reaches, and the ids Admit is told are running.
	inflight map[string]*running
	// live holds the long requests whose answer is not yet queued: what Drain waits for.
	live    map[*running]struct{}
	nextID  uint64
	waiting map[string]chan response // id key of a request of pid's -> its response
}

// running is a long request.
type running struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once its answer is queued
}

// response is the client's response to one of pid's requests: its members, raw.
type response struct{ result, err json.RawMessage }

// New returns a Conn that reads with face.Codec and writes to w.
func New(face Face, w io.Writer) *Conn {
	c := &Conn{face: face, log: face.Log, done: make(chan struct{}),
		inflight: map[string]*running{}, live: map[*running]struct{}{}, waiting: map[string]chan response{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.out = newSendQueue(w, face.Codec)
	return c
}

// Serve reads and dispatches messages until the input ends or breaks, a fatal Reject, or the
// face's Notification asks to stop; it returns why (nil for a stop). When it returns, every
// long request has been cancelled and answered, their goroutines have ended, pid's waiting
// requests have failed with ErrClosed, and everything queued has been written (or writing
// failed). Serve is called once.
func (c *Conn) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	err := c.readLoop(ctx)
	c.doneOnce.Do(func() { close(c.done) })
	cancel()
	c.wg.Wait()
	c.out.flushed()
	return err
}

// Done returns a channel closed once the read loop has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) readLoop(ctx context.Context) error {
	for {
		m, err := c.face.Codec.Read()
		var rej *Reject
		switch {
		case errors.As(err, &rej):
			if rej.Err != nil {
				c.writeError(rej.ID, rej.Err)
			} else {
				c.log.Debug("dropped a malformed notification")
			}
			if rej.Fatal {
				return err
			}
		case err != nil:
			return err
		case m.Response:
			c.deliver(m)
		case m.ID == nil:
			stop := false
			c.guard(m.Method, func() { stop = c.face.Notification(m.Method, m.Params) })
			if stop {
				return nil
			}
		default:
			c.request(ctx, m)
		}
	}
}

// guard runs f and logs a panic instead of crashing the daemon; it returns the panic as a
// *PanicError.
func (c *Conn) guard(method string, f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = &PanicError{Method: method, Value: p}
		}
	}()
	f()
	return nil
}

// request dispatches one request on the read goroutine.
func (c *Conn) request(ctx context.Context, m *Message) {
	c.mu.Lock()
	dup := c.inflight[m.Key] != nil
	c.mu.Unlock()
	if err := c.face.Admit(m.Method, dup); err != nil {
		c.answer(m.ID, nil, err, false)
		return
	}
	h, ok := c.face.Methods[m.Method]
	if !ok || h.handlers() != 1 {
		c.answer(m.ID, nil, fmt.Errorf("no handler for %s", m.Method), false)
		return
	}
	decode := c.face.Decode
	if decode == nil {
		decode = DecodeJSON
	}
	req := &jsonrpc2.Request{Method: m.Method}
	if m.Params != nil {
		p := m.Params
		req.Params = &p
	}
	if h.Quick != nil || h.typedQuick != nil {
		var result any
		var err error
		if perr := c.guard(m.Method, func() {
			if h.Quick != nil {
				result, err = h.Quick(req)
			} else {
				result, err = h.typedQuick(decode, m.Params)
			}
		}); perr != nil {
			result, err = nil, perr
		}
		c.answer(m.ID, result, err, false)
		return
	}
	var work Work
	var err error
	if perr := c.guard(m.Method, func() {
		if h.Long != nil {
			work, err = h.Long(req)
		} else {
			work, err = h.typedLong(decode, m.Params)
		}
	}); perr != nil {
		err = perr
	}
	req.Params, m.Params = nil, nil // the frame is not kept alive while the request runs
	if err != nil {
		c.answer(m.ID, nil, err, false)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.inflight[m.Key] = r
	c.live[r] = struct{}{}
	c.mu.Unlock()
	id, key, method := m.ID, m.Key, m.Method
	c.wg.Go(func() {
		defer cancel()
		var once sync.Once
		reply := func(result any, err error) {
			once.Do(func() {
				// The id is free again before the answer goes out: a client may reuse it as
				// soon as it has the answer.
				c.mu.Lock()
				if c.inflight[key] == r {
					delete(c.inflight, key)
				}
				c.mu.Unlock()
				c.answer(id, result, err, err == nil && method == c.face.SealOn)
				c.mu.Lock()
				delete(c.live, r)
				c.mu.Unlock()
				close(r.done)
			})
		}
		if perr := c.guard(method, func() { work(rctx, reply) }); perr != nil {
			reply(nil, perr)
		}
		reply(nil, &NoAnswerError{Method: method})
	})
}

// CancelRequest cancels the context of the running request whose id key is key, if any.
func (c *Conn) CancelRequest(key string) {
	c.mu.Lock()
	r := c.inflight[key]
	c.mu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// Drain takes the long requests running now and returns a function that cancels them and
// waits until each has been answered. Called on the read goroutine (by a long method's
// check, such as shutdown's), it does not include the request it is checking.
func (c *Conn) Drain() (cancelAndWait func()) {
	c.mu.Lock()
	rs := make([]*running, 0, len(c.live))
	for r := range c.live {
		rs = append(rs, r)
	}
	c.mu.Unlock()
	return func() {
		for _, r := range rs {
			r.cancel()
		}
		for _, r := range rs {
			<-r.done
		}
	}
}

// answer queues the response to the request with id: its result, or its error mapped by the
// face. last seals the connection (Face.SealOn).
func (c *Conn) answer(id json.RawMessage, result any, err error, last bool) {
	var after func()
	if t, ok := result.(*thenResult); ok {
		result, after = t.result, t.after
	}
	if err == nil {
		rb, merr := c.face.Marshal(result)
		if merr == nil {
			body := make([]byte, 0, 40+len(id)+len(rb))
			body = appendHead(body, id)
			body = append(body, `,"result":`...)
			body = append(body, rb...)
			body = append(body, '}')
			if werr := c.out.send(body, true, last); werr != nil {
				c.log.Debug("reply failed", "err", werr)
			}
			if after != nil {
				after()
			}
			return
		}
		c.log.Error("encoding a result failed", "err", merr)
		err = merr
	}
	c.writeError(id, c.face.ToWire(err))
}

// writeError queues an error response; id nil is id null.
func (c *Conn) writeError(id json.RawMessage, e *jsonrpc2.Error) {
	if werr := c.out.send(ErrorBody(id, e, c.face.Marshal), true, false); werr != nil {
		c.log.Debug("reply failed", "err", werr)
	}
}

// ErrorBody encodes the error response to id (nil: id null) with marshal, as a Conn writes
// it (the faces' tests of their codecs answer rejected frames with it).
func ErrorBody(id json.RawMessage, e *jsonrpc2.Error, marshal func(any) ([]byte, error)) []byte {
	eb, err := marshal(e)
	if err != nil { // cannot happen: two plain fields and raw data
		eb = []byte(`{"code":-32603,"message":"internal error"}`)
	}
	body := make([]byte, 0, 40+len(id)+len(eb))
	body = appendHead(body, id)
	body = append(body, `,"error":`...)
	body = append(body, eb...)
	return append(body, '}')
}

// appendHead appends a response's start, up to its id.
func appendHead(b []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	return append(b, id...)
}

// Send writes one whole message pid starts (a notification it encoded itself). Any goroutine
// may call it. It fails with ErrSealed after the sealing answer; other errors mean the
// client is gone.
func (c *Conn) Send(body []byte) error { return c.out.send(body, false, false) }

// SendDeferred is Send for a message that is usually followed at once by another (a tool's
// toolExecutionStart, then its toolEnd when it returns at once): it waits at most 200 µs
// for the next message to go out with it in one write, and goes out alone if none comes.
func (c *Conn) SendDeferred(body []byte) error { return c.out.sendDeferred(body) }

// Notify writes a notification; params is encoded with Face.Marshal unless it is already
// JSON ([]byte or json.RawMessage). Errors are as Send's.
func (c *Conn) Notify(method string, params any) error {
	pb, err := c.params(params)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 48+len(method)+len(pb))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, pb...)
	b = append(b, '}')
	return c.out.send(b, false, false)
}

func (c *Conn) params(params any) ([]byte, error) {
	switch p := params.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return c.face.Marshal(params)
}

// appendString appends s as a JSON string; method names are plain, so the slow path is rare.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Call sends a request to the client and waits for its response, for ctx or for the end of
// the input, and returns the response's result (nil when it has none). An error response is
// a *jsonrpc2.Error (a *MalformedError when its error member is not one). When ctx ends
// first, the client is told with Face.CancelMethod if cancelNotice is set, and Call returns
// ctx's error; a late response is then dropped. Once the input has ended it fails with
// ErrClosed without writing. params is encoded as Notify's.
func (c *Conn) Call(ctx context.Context, method string, params any, cancelNotice bool) (json.RawMessage, error) {
	pb, err := c.params(params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nextID++
	id := jsonrpc2.ID{Num: c.nextID}
	idText := strconv.FormatUint(id.Num, 10)
	key, _ := rpcwire.IDKey([]byte(idText))
	ch := make(chan response, 1)
	c.waiting[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
	}()
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	b := make([]byte, 0, 64+len(method)+len(pb))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, idText...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, pb...)
	b = append(b, '}')
	if err := c.out.send(b, false, false); err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil && string(a.err) != "null" {
			var e jsonrpc2.Error
			if json.Unmarshal(a.err, &e) != nil {
				return nil, &MalformedError{Raw: string(a.err)}
			}
			return nil, &e
		}
		return a.result, nil
	case <-c.done:
		return nil, ErrClosed
	case <-c.out.broken:
		return nil, fmt.Errorf("sending %s: %w", method, c.out.failure())
	case <-ctx.Done():
		if cancelNotice && c.face.CancelMethod != "" {
			nb := make([]byte, 0, 32+len(c.face.CancelField)+len(idText))
			nb = append(nb, '{')
			nb = appendString(nb, c.face.CancelField)
			nb = append(nb, ':')
			nb = append(nb, idText...)
			nb = append(nb, '}')
			if err := c.Notify(c.face.CancelMethod, json.RawMessage(nb)); err != nil {
				c.log.Debug("cancel notice not sent", "err", err)
			}
		}
		return nil, ctx.Err()
	}
}

// deliver hands a response to the request of pid's that waits for it. A response nobody
// waits for (a late answer to a request given up on, or one with id null) is logged and
// dropped.
func (c *Conn) deliver(m *Message) {
	c.mu.Lock()
	ch := c.waiting[m.Key]
	delete(c.waiting, m.Key)
	c.mu.Unlock()
	if ch == nil {
		if m.ID == nil && m.Error != nil {
			c.log.Warn("the client answered with an error to a message it could not read", "error", truncate(string(m.Error), 400))
			return
		}
		c.log.Debug("dropped a response to no pending request of pid's", "id", truncate(string(m.ID), 80))
		return
	}
	ch <- response{result: m.Result, err: m.Error}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

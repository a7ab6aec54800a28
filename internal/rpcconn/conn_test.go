// This file tests the connection both faces run on, over real pipes with a codec of one JSON
// message per line: dispatch and answers, cancellation, pid's own requests, sealing, and
// writes coalesced while one is under way.

package rpcconn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/rpcwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lineCodec reads one message per line; anything that is not an object with a method or a
// response is rejected with -32600.
type lineCodec struct{ r *bufio.Reader }

func (c *lineCodec) Read() (*Message, error) {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	env, err := rpcwire.Scan(line)
	if err != nil || env.Top != '{' {
		return nil, &Reject{Err: &jsonrpc2.Error{Code: -32700, Message: "parse error"}}
	}
	m := &Message{Params: env.Params, Result: env.Result, Error: env.Error, Response: env.Method == nil}
	if env.ID != nil {
		m.ID = append(json.RawMessage(nil), env.ID...)
		m.Key, _ = rpcwire.IDKey(env.ID)
	}
	if env.Method != nil {
		m.Method, _ = rpcwire.String(env.Method)
	}
	return m, nil
}

func (c *lineCodec) Frame(dst, body []byte) []byte { return append(append(dst, body...), '\n') }

// peer is the client side of a connection served over two pipes.
type peer struct {
	t    *testing.T
	in   *os.File // pid's input, written by the test
	out  *bufio.Reader
	conn *Conn
	done chan error
}

// start serves face (its Codec and Marshal filled in here) over real pipes; w, if set, wraps
// pid's output.
func start(t *testing.T, face Face, wrap func(io.Writer) io.Writer) *peer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	face.Codec = &lineCodec{r: bufio.NewReader(inR)}
	face.Marshal = json.Marshal
	if face.ToWire == nil {
		face.ToWire = func(err error) *jsonrpc2.Error {
			var je *jsonrpc2.Error
			if errors.As(err, &je) {
				return je
			}
			return &jsonrpc2.Error{Code: -32603, Message: err.Error()}
		}
	}
	if face.Admit == nil {
		face.Admit = func(string, bool) error { return nil }
	}
	if face.Notification == nil {
		face.Notification = func(method string, _ json.RawMessage) bool { return method == "exit" }
	}
	var w io.Writer = outW
	if wrap != nil {
		w = wrap(outW)
	}
	p := &peer{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	p.conn = New(face, w)
	go func() {
		err := p.conn.Serve(context.Background())
		inR.Close()
		outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() {
		p.in.Close()
		<-p.done
		outR.Close()
	})
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) recv() gjson.Result {
	p.t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("reading pid's output: %v", err)
	}
	return gjson.Parse(line)
}

// A quick method is answered in order with the id as written; a long one on its own
// goroutine; a panic is an internal error and the connection goes on; an unreadable line is
// answered with id null.
func TestDispatchAndAnswers(t *testing.T) {
	gate := make(chan struct{})
	p := start(t, Face{Methods: map[string]Method{
		"echo": {Quick: func(r *jsonrpc2.Request) (any, error) { return json.RawMessage(*r.Params), nil }},
		"boom": {Quick: func(*jsonrpc2.Request) (any, error) { panic("kaput") }},
		"wait": {Long: func(*jsonrpc2.Request) (Work, error) {
			return func(ctx context.Context, reply func(any, error)) { <-gate; reply("waited", nil) }, nil
		}},
		"silent": {Long: func(*jsonrpc2.Request) (Work, error) {
			return func(context.Context, func(any, error)) {}, nil
		}},
	}}, nil)
	p.send(`{"jsonrpc":"2.0","id":1e2,"method":"wait"}`)
	p.send(`{"jsonrpc":"2.0","id":"a","method":"echo","params":[1]}`)
	if m := p.recv(); m.Get("id").Raw != `"a"` || m.Get("result").Raw != `[1]` {
		t.Fatalf("echo: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":-0.5,"method":"boom"}`)
	if m := p.recv(); m.Get("id").Raw != `-0.5` || m.Get("error.code").Int() != -32603 || !strings.Contains(m.Get("error.message").String(), "kaput") {
		t.Fatalf("boom: %s", m.Raw)
	}
	p.send(`not json`)
	if m := p.recv(); m.Get("id").Raw != `null` || m.Get("error.code").Int() != -32700 {
		t.Fatalf("not json: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"silent"}`)
	if m := p.recv(); m.Get("id").Raw != `7` || !strings.Contains(m.Get("error.message").String(), "silent ended without an answer") {
		t.Fatalf("silent: %s", m.Raw)
	}
	close(gate)
	if m := p.recv(); m.Get("id").Raw != `1e2` || m.Get("result").String() != "waited" {
		t.Fatalf("wait: %s", m.Raw)
	}
}

// Admit is told when a request reuses the id of one still running (100 and 1e2 are one id),
// and CancelRequest reaches the running one, which answers; its id is then free.
func TestRunningIDsAndCancel(t *testing.T) {
	var p *peer
	p = start(t, Face{
		Methods: map[string]Method{"wait": {Long: func(*jsonrpc2.Request) (Work, error) {
			return func(ctx context.Context, reply func(any, error)) { <-ctx.Done(); reply("cancelled", nil) }, nil
		}}},
		Admit: func(_ string, running bool) error {
			if running {
				return errors.New("still running")
			}
			return nil
		},
		Notification: func(method string, params json.RawMessage) bool {
			if method == "cancel" {
				key, _ := rpcwire.IDKey([]byte(gjson.GetBytes(params, "id").Raw))
				p.conn.CancelRequest(key)
			}
			return false
		},
	}, nil)
	p.send(`{"jsonrpc":"2.0","id":100,"method":"wait"}`)
	p.send(`{"jsonrpc":"2.0","id":1e2,"method":"wait"}`)
	if m := p.recv(); m.Get("id").Raw != `1e2` || m.Get("error.message").String() != "still running" {
		t.Fatalf("duplicate: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":100.0}}`)
	if m := p.recv(); m.Get("id").Raw != `100` || m.Get("result").String() != "cancelled" {
		t.Fatalf("cancelled: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":1e2,"method":"wait"}`)
	p.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":100}}`)
	if m := p.recv(); m.Get("id").Raw != `1e2` || m.Get("result").String() != "cancelled" {
		t.Fatalf("the id reused: %s", m.Raw)
	}
}

// pid's own requests: a response matched by value, an error response, a cancel notice when
// given up, and ErrClosed once the input has ended.
func TestCall(t *testing.T) {
	p := start(t, Face{CancelMethod: "$/cancelRequest", CancelField: "id"}, nil)
	type res struct {
		raw json.RawMessage
		err error
	}
	call := func(ctx context.Context) chan res {
		ch := make(chan res, 1)
		go func() {
			raw, err := p.conn.Call(ctx, "ask", map[string]int{"n": 1}, true)
			ch <- res{raw, err}
		}()
		return ch
	}
	ch := call(context.Background())
	req := p.recv()
	if req.Get("method").String() != "ask" || req.Get("params.n").Int() != 1 {
		t.Fatalf("request: %s", req.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":` + req.Get("id").Raw + `.0,"result":{"ok":true}}`)
	if r := <-ch; r.err != nil || string(r.raw) != `{"ok":true}` {
		t.Fatalf("answer: %s %v", r.raw, r.err)
	}
	ch = call(context.Background())
	req = p.recv()
	p.send(`{"jsonrpc":"2.0","id":` + req.Get("id").Raw + `,"error":{"code":-5,"message":"no"}}`)
	var je *jsonrpc2.Error
	if r := <-ch; !errors.As(r.err, &je) || je.Code != -5 || je.Message != "no" {
		t.Fatalf("error answer: %v", r.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch = call(ctx)
	req = p.recv()
	cancel()
	if n := p.recv(); n.Get("method").String() != "$/cancelRequest" || n.Get("params.id").Raw != req.Get("id").Raw {
		t.Fatalf("cancel notice: %s", n.Raw)
	}
	if r := <-ch; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("given up: %v", r.err)
	}
	p.send(`{"jsonrpc":"2.0","id":` + req.Get("id").Raw + `,"result":1}`) // late: dropped
	p.in.Close()
	<-p.conn.Done()
	if r := <-call(context.Background()); !errors.Is(r.err, ErrClosed) {
		t.Fatalf("after the input ended: %v", r.err)
	}
}

// After the sealing answer only answers are written: a notification fails with ErrSealed.
func TestSeal(t *testing.T) {
	p := start(t, Face{SealOn: "shutdown", Methods: map[string]Method{
		"shutdown": {Long: func(*jsonrpc2.Request) (Work, error) {
			return func(_ context.Context, reply func(any, error)) { reply(nil, nil) }, nil
		}},
		"ping": {Quick: func(*jsonrpc2.Request) (any, error) { return "pong", nil }},
	}}, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	if m := p.recv(); m.Get("id").Int() != 1 || m.Get("result").Raw != "null" {
		t.Fatalf("shutdown: %s", m.Raw)
	}
	if err := p.conn.Notify("late", map[string]int{}); !errors.Is(err, ErrSealed) {
		t.Fatalf("a notification after the seal: %v", err)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := p.recv(); m.Get("id").Int() != 2 || m.Get("result").String() != "pong" {
		t.Fatalf("an answer after the seal: %s", m.Raw)
	}
}

// gatedWriter records each write; the first one waits for the gate.
type gatedWriter struct {
	w       io.Writer
	entered chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	writes  []string
}

func (g *gatedWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	g.writes = append(g.writes, string(b))
	first := len(g.writes) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.gate
	}
	return g.w.Write(b)
}

// Messages queued while a write is under way go out together in the next write, in order,
// and whoever queued them returns at once.
func TestWritesCoalesce(t *testing.T) {
	g := &gatedWriter{entered: make(chan struct{}), gate: make(chan struct{})}
	p := start(t, Face{}, func(w io.Writer) io.Writer { g.w = w; return g })
	first := make(chan error, 1)
	go func() { first <- p.conn.Notify("n", []int{0}) }()
	<-g.entered
	for i := 1; i <= 3; i++ {
		if err := p.conn.Notify("n", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	close(g.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 3; i++ {
		if m := p.recv(); m.Get("params.0").Int() != int64(i) {
			t.Fatalf("message %d: %s", i, m.Raw)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.writes) != 2 || strings.Count(g.writes[1], "\n") != 3 {
		t.Fatalf("%d writes (%q), want the first message alone and the three queued behind it in one", len(g.writes), g.writes)
	}
}

// countingWriter records each write.
type countingWriter struct {
	w      io.Writer
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, string(b))
	c.mu.Unlock()
	return c.w.Write(b)
}

// A deferred message goes out with the next message in one write, before it; alone, it
// still goes out (the timer), and Serve's end writes one still waiting.
func TestSendDeferred(t *testing.T) {
	defer func(d time.Duration) { deferFor = d }(deferFor)
	deferFor = time.Hour // no timer fires unless the test asks
	cw := &countingWriter{}
	p := start(t, Face{}, func(w io.Writer) io.Writer { cw.w = w; return cw })
	if err := p.conn.SendDeferred([]byte(`{"jsonrpc":"2.0","method":"start","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	if err := p.conn.Notify("end", map[string]int{}); err != nil {
		t.Fatal(err)
	}
	if a, b := p.recv(), p.recv(); a.Get("method").String() != "start" || b.Get("method").String() != "end" {
		t.Fatalf("order: %s then %s", a.Raw, b.Raw)
	}
	cw.mu.Lock()
	if len(cw.writes) != 1 {
		t.Errorf("%d writes (%q), want the deferred message and the next in one", len(cw.writes), cw.writes)
	}
	cw.mu.Unlock()
	deferFor = time.Microsecond
	if err := p.conn.SendDeferred([]byte(`{"jsonrpc":"2.0","method":"alone","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	if m := p.recv(); m.Get("method").String() != "alone" {
		t.Fatalf("a deferred message alone: %s", m.Raw)
	}
	// One waiting when the input ends is written by the end of Serve.
	deferFor = time.Hour
	if err := p.conn.SendDeferred([]byte(`{"jsonrpc":"2.0","method":"last","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	p.in.Close()
	if m := p.recv(); m.Get("method").String() != "last" {
		t.Fatalf("a deferred message at the end: %s", m.Raw)
	}
}

// failingWriter passes the first n writes on and fails every later one.
type failingWriter struct {
	w  io.Writer
	mu sync.Mutex
	n  int
}

var errGone = errors.New("the client is gone")

func (f *failingWriter) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return 0, errGone
	}
	f.n--
	return f.w.Write(b)
}

// Once a write fails, nothing more is written: the goroutine that wrote gets the error,
// later senders get it at once, and a request of pid's waiting for its answer fails instead
// of waiting for an answer that cannot come.
func TestWriteFailure(t *testing.T) {
	fw := &failingWriter{n: 1}
	p := start(t, Face{}, func(w io.Writer) io.Writer { fw.w = w; return fw })
	done := make(chan error, 1)
	go func() {
		_, err := p.conn.Call(context.Background(), "ask", map[string]int{}, false)
		done <- err
	}()
	if m := p.recv(); m.Get("method").String() != "ask" {
		t.Fatalf("the request: %s", m.Raw)
	}
	// Its sender gets the error, or nil when it found the request's write still under way
	// and left the message to that writer, whose next write fails.
	if err := p.conn.Notify("n", []int{1}); err != nil && !errors.Is(err, errGone) {
		t.Fatalf("the failing write: %v", err)
	}
	if err := <-done; !errors.Is(err, errGone) {
		t.Fatalf("the waiting request: %v", err)
	}
	if err := p.conn.Notify("n", []int{2}); !errors.Is(err, errGone) {
		t.Fatalf("a write after the failure: %v", err)
	}
}

// Typed entries get their params decoded once, by the face's Decode: its refusal is the
// answer (through ToWire) and the handler is not called; absent params are the zero value;
// a typed handler's panic is an internal error like any other.
func TestTypedMethods(t *testing.T) {
	type addParams struct{ A, B int }
	called := 0
	gate := make(chan struct{})
	p := start(t, Face{
		Methods: map[string]Method{
			"add": QuickOf(func(p *addParams) (int, error) { called++; return p.A + p.B, nil }),
			"boom": QuickOf(func(*addParams) (any, error) {
				panic("typed kaput")
			}),
			"later": LongOf(func(p *addParams) (Work, error) {
				if p.A < 0 {
					return nil, errors.New("a must not be negative")
				}
				return func(ctx context.Context, reply func(any, error)) { <-gate; reply(p.A*p.B, nil) }, nil
			}),
		},
		Decode: func(params json.RawMessage, v any) error {
			if len(params) > 0 && params[0] == '[' {
				return &jsonrpc2.Error{Code: -32602, Message: "params must be an object"}
			}
			if err := DecodeJSON(params, v); err != nil {
				return &jsonrpc2.Error{Code: -32602, Message: "invalid params: " + err.Error()}
			}
			return nil
		},
	}, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"later","params":{"A":6,"B":7}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"add","params":{"A":2,"B":3}}`)
	if m := p.recv(); m.Get("id").Raw != `2` || m.Get("result").Raw != `5` {
		t.Fatalf("add: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"add"}`)
	if m := p.recv(); m.Get("id").Raw != `3` || m.Get("result").Raw != `0` {
		t.Fatalf("add without params: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"add","params":[1,2]}`)
	if m := p.recv(); m.Get("error.code").Int() != -32602 || m.Get("error.message").String() != "params must be an object" {
		t.Fatalf("add with an array: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":5,"method":"add","params":{"A":"two"}}`)
	if m := p.recv(); m.Get("error.code").Int() != -32602 || !strings.Contains(m.Get("error.message").String(), "invalid params") {
		t.Fatalf("add with a string: %s", m.Raw)
	}
	if called != 2 {
		t.Errorf("add's handler ran %d times, want 2 (never for params Decode refused)", called)
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"boom"}`)
	if m := p.recv(); m.Get("error.code").Int() != -32603 || !strings.Contains(m.Get("error.message").String(), "typed kaput") {
		t.Fatalf("boom: %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"later","params":{"A":-1}}`)
	if m := p.recv(); m.Get("id").Raw != `7` || m.Get("error.message").String() != "a must not be negative" {
		t.Fatalf("later, refused: %s", m.Raw)
	}
	close(gate)
	if m := p.recv(); m.Get("id").Raw != `1` || m.Get("result").Raw != `42` {
		t.Fatalf("later: %s", m.Raw)
	}
}

// Then's work runs once the answer is queued, so what it sends follows the answer on the
// wire, for a quick and a long method alike; an error answer runs none.
func TestThenFollowsTheAnswer(t *testing.T) {
	var p *peer
	after := func(what string) func() { return func() { p.conn.Notify("after", what) } }
	p = start(t, Face{Methods: map[string]Method{
		"quick": QuickOf(func(*struct{}) (any, error) { return Then("q", after("quick")), nil }),
		"long": LongOf(func(*struct{}) (Work, error) {
			return func(ctx context.Context, reply func(any, error)) { reply(Then("l", after("long")), nil) }, nil
		}),
		"fails":    QuickOf(func(*struct{}) (any, error) { return Then("x", after("fails")), errors.New("no") }),
		"nilAfter": QuickOf(func(*struct{}) (any, error) { return Then("n", nil), nil }),
	}}, nil)
	for _, c := range []struct{ method, result, note string }{
		{"quick", "q", "quick"}, {"long", "l", "long"}, {"fails", "", ""}, {"nilAfter", "n", ""},
	} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"` + c.method + `"}`)
		m := p.recv()
		if c.result == "" {
			if m.Get("error.message").String() != "no" {
				t.Fatalf("%s: %s, want the error", c.method, m.Raw)
			}
		} else if m.Get("id").Raw != "1" || m.Get("result").String() != c.result {
			t.Fatalf("%s: %s, want the answer first", c.method, m.Raw)
		}
		if c.note != "" {
			if n := p.recv(); n.Get("method").String() != "after" || n.Get("params").String() != c.note {
				t.Fatalf("%s: %s, want the notification after the answer", c.method, n.Raw)
			}
		}
	}
	// Nothing else was sent: the next answer comes next.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"nilAfter"}`)
	if m := p.recv(); m.Get("id").Raw != "2" {
		t.Fatalf("after the error and the nil work: %s, want the next answer", m.Raw)
	}
}

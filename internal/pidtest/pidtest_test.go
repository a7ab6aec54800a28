//go:build unix

package pidtest

// The package against the real pid binary (built once by TestMain) over real pipes, and its
// strictness and hang guards over pipes of the test's own.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var pidBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pidtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if pidBin, err = Binary(dir, Race()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// start starts pid in a Home of the test's; the cleanup kills what the test left running.
func start(t *testing.T, opts Options) *Process {
	t.Helper()
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	p, err := Start(pidBin, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("pid's stderr:\n%s", p.Stderr())
		}
	})
	return p
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// approvalSession is session/new for a scripted model calling the tool "edit", which needs
// approval, then answering "done".
func approvalSession(cwd string) map[string]any {
	return map[string]any{
		"cwd": cwd,
		"model": map[string]any{"provider": "script", "turns": []any{
			map[string]any{"content": []any{map[string]any{"type": "toolCall", "id": "c1", "name": "edit", "arguments": map[string]any{}}}},
			map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}},
		}},
		"scriptedTools": []any{map[string]any{"name": "edit", "requiresApproval": true,
			"steps": []any{map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited"}}}}}}},
	}
}

// A whole prompt over LSP framing: pid's approval request found by Await and answered, the
// result by id, the messages kept in order; the session's file lands in the Process's own
// state folder; shutdown and exit end pid with code 0.
func TestLSPPromptKeepsEveryMessage(t *testing.T) {
	home := t.TempDir()
	p := start(t, Options{Home: home})
	if _, err := p.Call("initialize", map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"pid": map[string]any{"beforeToolCall": true}}}}); err != nil {
		t.Fatal(err)
	}
	must[string](t)("", p.Notify("initialized", map[string]any{}))
	sid := must[string](t)(func() (string, error) {
		r, err := p.Call("session/new", approvalSession(t.TempDir()))
		return r.Get("sessionId").String(), err
	}())
	id := must[string](t)(p.Request("session/prompt", map[string]any{"sessionId": sid, "text": "go"}))
	req := must[*Msg](t)(p.Await("beforeToolCall", func(m *Msg) bool { return m.IsRequest() && m.Method() == "beforeToolCall" }))
	must[string](t)("", p.Answer(req, map[string]any{"decision": "allow"}))
	res := must[*Msg](t)(p.Response(id))
	if got := res.Get("result.messages.2.content.0.text").String(); got != "edited" {
		t.Errorf("the tool's result is %q, want edited: %s", got, res)
	}
	end := must[*Msg](t)(p.Await("toolEnd", func(m *Msg) bool { return m.Method() == "toolEnd" }))
	if !(req.Seq < end.Seq && end.Seq < res.Seq) {
		t.Errorf("beforeToolCall #%d, toolEnd #%d, response #%d: want them in that order", req.Seq, end.Seq, res.Seq)
	}
	for i, m := range p.Messages() {
		if m.Seq != i {
			t.Fatalf("message %d has Seq %d", i, m.Seq)
		}
	}
	// The same response, asked for again, is still there.
	if again := must[*Msg](t)(p.Response(id)); again != res {
		t.Errorf("Response twice gave two messages")
	}
	sessions, _ := filepath.Glob(filepath.Join(home, "state", "pid", "sessions", "*", "*"))
	if len(sessions) == 0 {
		t.Errorf("no session file under the Process's own state folder %s", home)
	}
	if code, err := p.Stop(10 * time.Second); err != nil || code != 0 {
		t.Errorf("Stop: code %d, %v; want 0", code, err)
	}
	if err := p.Err(); err != nil {
		t.Errorf("wire error: %v", err)
	}
}

// A Conn that discards keeps no message, routes each response to its Call, and lets
// OnMessage answer pid's requests, from any number of goroutines at once.
func TestDiscardRoutesResponsesToConcurrentCalls(t *testing.T) {
	var notes atomic.Int64
	var p *Process
	p = start(t, Options{Conn: ConnOptions{Discard: true, OnMessage: func(m *Msg) {
		switch {
		case m.IsRequest():
			p.Answer(m, map[string]any{"decision": "allow"})
		case m.IsNotification():
			notes.Add(1)
		}
	}}})
	must[any](t)(p.Call("initialize", map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"pid": map[string]any{"beforeToolCall": true}}}}))
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			r, err := p.Call("session/new", approvalSession(t.TempDir()))
			if err != nil {
				errs <- err
				return
			}
			r, err = p.Call("session/prompt", map[string]any{"sessionId": r.Get("sessionId").String(), "text": "go"})
			if err == nil && r.Get("messages.2.content.0.text").String() != "edited" {
				err = fmt.Errorf("prompt result %s", r.Raw)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if len(p.Messages()) != 0 {
		t.Errorf("a discarding Conn kept %d messages", len(p.Messages()))
	}
	if notes.Load() == 0 {
		t.Errorf("OnMessage saw no notification")
	}
	// An error response is an *Error with the code.
	_, err := p.Call("no/such/method", Omit)
	var e *Error
	if !errors.As(err, &e) || e.Code != -32601 {
		t.Errorf("unknown method: %v, want an *Error with code -32601", err)
	}
	if code, err := p.Stop(10 * time.Second); err != nil || code != 0 {
		t.Errorf("Stop: code %d, %v; want 0", code, err)
	}
}

// The ACP face over lines; closing stdin ends it with code 0, and a signal reaches it.
func TestLinesACP(t *testing.T) {
	p := start(t, Options{Args: []string{"--acp"}, Conn: ConnOptions{Framing: Lines}})
	r, err := p.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Get("protocolVersion").Int() != 1 {
		t.Errorf("initialize: %s", r.Raw)
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(10 * time.Second); err != nil || code != 0 {
		t.Errorf("after SIGINT: code %d, %v; want 0", code, err)
	}
}

// Anything on the output that is not a strict frame holding JSON is a wire error; a broken
// frame ends the stream, a line that is not JSON does not.
func TestStrictReading(t *testing.T) {
	cases := map[string]string{
		"no \\r":          "Content-Length: 2\n\n{}",
		"other header":    "Content-Type: x\r\nContent-Length: 2\r\n\r\n{}",
		"no length":       "\r\n{}",
		"body not JSON":   "Content-Length: 2\r\n\r\n{]",
		"short body":      "Content-Length: 9\r\n\r\n{}",
		"negative length": "Content-Length: -2\r\n\r\n{}",
	}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			c := NewConn(io.Discard, strings.NewReader(out), ConnOptions{})
			<-c.Done()
			if c.Err() == nil {
				t.Errorf("%q read without a wire error", out)
			}
		})
	}
	c := NewConn(io.Discard, strings.NewReader("{\"a\":1}\nnot json\n{\"b\":2}\n"), ConnOptions{Framing: Lines})
	<-c.Done()
	if c.Err() == nil || len(c.Messages()) != 2 || c.Messages()[1].Seq != 1 {
		t.Errorf("lines: err %v, messages %v", c.Err(), c.Messages())
	}
	if _, err := c.Await("anything else", func(m *Msg) bool { return m.Get("c").Exists() }); !errors.Is(err, ErrEnded) {
		t.Errorf("Await after the end: %v, want ErrEnded", err)
	}
	if m, err := c.Message(1); err != nil || m.Get("b").Int() != 2 {
		t.Errorf("Message(1): %v, %v; want {\"b\":2}", m, err)
	}
	if _, err := c.Message(2); !errors.Is(err, ErrEnded) {
		t.Errorf("Message(2) after the end: %v, want ErrEnded", err)
	}
}

// A write the daemon never reads fails after the hang guard, over a real pipe (write
// deadline) and over io.Pipe (a goroutine of the write's own).
func TestWriteHangGuard(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	out, outW := io.Pipe()
	c := NewConn(w, out, ConnOptions{HangGuard: 50 * time.Millisecond})
	if err := c.Send(make([]byte, 4<<20)); err == nil || !strings.Contains(err.Error(), "hang guard") {
		t.Errorf("a write nobody reads: %v, want a hang guard error", err)
	}
	outW.Close()
	<-c.Done()

	inR, inW := io.Pipe()
	out, outW = io.Pipe()
	c = NewConn(inW, out, ConnOptions{HangGuard: 50 * time.Millisecond})
	if err := c.Notify("x", nil); err == nil || !strings.Contains(err.Error(), "hang guard") {
		t.Errorf("a write nobody reads (io.Pipe): %v, want a hang guard error", err)
	}
	inR.Close() // the blocked write returns; its goroutine ends
	outW.Close()
	<-c.Done()
}

// On a Conn that discards, a response read before Response asks for it is still there:
// here the test plays the daemon, and asks only once OnMessage has seen the response.
func TestDiscardResponseReadBeforeItIsAskedFor(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	seen := make(chan struct{})
	c := NewConn(inW, outR, ConnOptions{Discard: true, OnMessage: func(m *Msg) {
		if m.IsResponse() {
			close(seen)
		}
	}})
	go io.Copy(io.Discard, inR)
	id, err := c.Request("ping", Omit)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"result":"pong"}`
	fmt.Fprintf(outW, "Content-Length: %d\r\n\r\n%s", len(body), body)
	<-seen
	m, err := c.Response(id)
	if err != nil || m.Get("result").String() != "pong" {
		t.Errorf("Response after the response was read: %v, %v", m, err)
	}
	if _, err := c.Response(id); err == nil {
		t.Errorf("a discarding Conn gave one response twice")
	}
	outW.Close()
	inR.Close()
	<-c.Done()
}

// A process that exits while one it started still holds its stdout: Wait returns the exit
// code within its bound, closes the output on our side, and says so.
func TestWaitWhenOutputOutlivesTheProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleeper")
	p, err := Start("/bin/sh", Options{Args: []string{"-c", "sleep 1000 & echo $! > " + pidFile + "; exit 3"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			var sleeper int
			fmt.Sscan(string(b), &sleeper)
			if sleeper > 0 {
				syscall.Kill(sleeper, syscall.SIGKILL)
			}
		}
	})
	code, err := p.Wait(300 * time.Millisecond)
	if code != 3 || err == nil || !strings.Contains(err.Error(), "output was still open") {
		t.Errorf("Wait: code %d, %v; want 3 and an error about the open output", code, err)
	}
	select {
	case <-p.Done():
	default:
		t.Errorf("the Conn still reads after Wait returned")
	}
}

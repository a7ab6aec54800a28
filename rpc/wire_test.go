// This file tests the wire against hostile and careless editors, in process: nesting no
// parser may recurse into, frames and header lines that must not cost their size in memory,
// Content-Length values that are no lengths or too large ones, every id JSON-RPC allows, an
// id reused while its request runs, and nothing pid starts after its shutdown reply.

package rpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/lspframe"
	"github.com/pid-agent/pid/internal/rpcwire"
)

// logHook is a slog handler that keeps every record as text and tells waiters when a record
// containing their text arrives.
type logHook struct {
	mu      sync.Mutex
	text    bytes.Buffer
	waiters map[string]chan struct{}
}

func (h *logHook) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHook) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logHook) WithGroup(string) slog.Handler            { return h }

func (h *logHook) Handle(_ context.Context, r slog.Record) error {
	var line strings.Builder
	fmt.Fprintf(&line, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&line, " %s=%q", a.Key, a.Value.String()); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.text.WriteString(line.String() + "\n")
	for want, ch := range h.waiters {
		if strings.Contains(line.String(), want) {
			close(ch)
			delete(h.waiters, want)
		}
	}
	return nil
}

// seen returns a channel closed once a record containing want is logged (at once if one was).
func (h *logHook) seen(want string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(h.text.String(), want) {
		close(ch)
		return ch
	}
	if h.waiters == nil {
		h.waiters = map[string]chan struct{}{}
	}
	h.waiters[want] = ch
	return ch
}

func (h *logHook) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.text.String()
}

// waitLog waits, under the hang guard, until the daemon logged a record containing want.
func waitLog(t *testing.T, h *logHook, want string) {
	t.Helper()
	select {
	case <-h.seen(want):
	case <-time.After(hangGuard):
		t.Fatalf("hang guard: the daemon did not log %q; its log:\n%s", want, h)
	}
}

// startHooked is startInProcess with the daemon's log going to a logHook.
func startHooked(t *testing.T) (*daemon, *logHook) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	hook := &logHook{}
	c := newPipeClient(t, inW)
	codes := make(chan int, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c.readLoop(outR)
	}()
	go func() {
		code := Serve(context.Background(), inR, outW, Options{Version: "test", Log: slog.New(hook)})
		outW.Close()
		codes <- code
	}()
	var once sync.Once
	code := -1
	d := &daemon{pipeClient: c, closeInput: func() { inW.Close() }}
	d.wait = func() int {
		t.Helper()
		once.Do(func() {
			select {
			case code = <-codes:
			case <-time.After(hangGuard):
				t.Fatalf("hang guard: Serve did not return after %v", hangGuard)
			}
			<-readerDone
		})
		return code
	}
	t.Cleanup(func() {
		inW.Close()
		d.wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", hook)
		}
	})
	return d, hook
}

// allocatedDuring returns the bytes the process allocated while f ran.
func allocatedDuring(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// messagesBetween returns the messages received after message from and before message to
// (nil: up to the end).
func messagesBetween(d *daemon, from, to *wireMsg) []*wireMsg {
	var out []*wireMsg
	for _, m := range d.snapshot() {
		if m.seq > from.seq && (to == nil || m.seq < to.seq) {
			out = append(out, m)
		}
	}
	return out
}

func TestDeepNesting(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{})
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

	// Ten million '[' (a recursive validator needs a gigabyte of stack for them): not JSON.
	mark := len(d.snapshot())
	d.frame(strings.Repeat("[", 10_000_000))
	first := d.await("the answer to the frame of '['", func(m *wireMsg) bool { return m.seq >= mark })
	if first.id() != "null" || first.get("error.code").Int() != codeParseError {
		t.Errorf("10 M '[': want -32700 with id null, got %s", first)
	}
	// Valid JSON, but deeper than the limit: refused with the request's id.
	deep := `{"jsonrpc":"2.0","id":"deep","method":"session/steer","params":{"sessionId":"` + sid + `","text":"x","extra":` + nested(rpcwire.MaxDepth-1) + `}}`
	d.frame(deep)
	code, msg := d.errorOf(`"deep"`)
	if code != codeInvalidRequest || !strings.Contains(msg, "10000") {
		t.Errorf("too deep: got %d %q, want %d naming the limit", code, msg, codeInvalidRequest)
	}
	d.frame(nested(5_000_000))
	// At the limit: served (the top-level object and params are two of the levels).
	d.frame(`{"jsonrpc":"2.0","id":"limit","method":"session/steer","params":{"sessionId":"` + sid + `","text":"x","extra":` + nested(rpcwire.MaxDepth-2) + `}}`)
	if r := d.result(`"limit"`); r.Raw != "null" {
		t.Errorf("a request nested exactly %d deep: %s", rpcwire.MaxDepth, r.Raw)
	}
	var codes []int64
	for _, m := range d.snapshot() {
		if m.isResponse() && m.id() == "null" {
			codes = append(codes, m.get("error.code").Int())
		}
	}
	if len(codes) != 2 || codes[0] != codeParseError || codes[1] != codeInvalidRequest {
		t.Errorf("answers with id null: codes %v, want [-32700 -32600]; received:\n%s", codes, d.dump())
	}
	d.call("tools/list", obj{"sessionId": sid})
}

func TestDeepAnswerToApproval(t *testing.T) {
	// An answer to beforeToolCall nested too deep is no approval: the call is denied, the
	// editor is told, and the run goes on.
	d, sid := approvalSession(t, "done")
	p := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	req := d.serverRequest("beforeToolCall", "c1")
	d.frame(`{"jsonrpc":"2.0","id":` + req.id() + `,"result":{"decision":` + strings.Repeat("[", rpcwire.MaxDepth) + strings.Repeat("]", rpcwire.MaxDepth) + `}}`)
	out := d.result(p)
	if r := out.Get("messages.2"); !r.Get("isError").Bool() || !strings.Contains(r.Get("content.0.text").String(), "editor") {
		t.Errorf("tool result %s, want an error naming the editor", r.Raw)
	}
	if out.Get("stopReason").String() != "stop" {
		t.Errorf("stopReason %s", out.Get("stopReason"))
	}
}

func TestLargeFrameMemory(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{})
	const size = 20 << 20
	body := `{"jsonrpc":"2.0","id":"big","method":"session/steer","params":{"sessionId":"` + sid + `","text":"` + strings.Repeat("a", size) + `"}}`
	raw := []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	body = ""
	got := allocatedDuring(func() {
		d.write(raw)
		d.result(`"big"`)
	})
	// The frame, and the text it decodes to: two copies, with some room for the rest.
	if limit := uint64(size) * 5 / 2; got > limit {
		t.Errorf("a session/steer of %d MB allocated %d MB, want at most %d MB (the frame and the decoded text)", size>>20, got>>20, limit>>20)
	}
}

func TestLongHeaderLine(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	// 50 MB where a header should be: answered once, skipped without holding it, and the
	// frame after it is read.
	const size = 50 << 20
	junk := append(bytes.Repeat([]byte("x"), size), "\r\n"...)
	got := allocatedDuring(func() {
		d.write(junk)
		d.requestID(`"after"`, "session/new", omit)
		d.result(`"after"`)
	})
	if got > 4<<20 {
		t.Errorf("a header line of %d MB allocated %d MB, want a few KB", size>>20, got>>20)
	}
	errs := nullIDErrors(d, d.response(`"after"`))
	if len(errs) != 1 || errs[0].get("error.code").Int() != codeParseError || !strings.Contains(errs[0].get("error.message").String(), "8192") {
		t.Errorf("want one -32700 naming the line limit; received:\n%s", d.dump())
	}
	// Within a header block too.
	b := `{"jsonrpc":"2.0","id":1,"method":"session/new"}`
	expectFrameErrors(t, d, "Content-Length: "+itoa(len(b))+"\r\nX-Long: "+strings.Repeat("y", 9000)+"\r\n\r\n"+b)
}

func TestContentLengthValues(t *testing.T) {
	b := `{"jsonrpc":"2.0","id":1,"method":"session/new"}`
	n := itoa(len(b))
	for name, value := range map[string]string{
		"plus sign":     "+" + n,
		"minus zero":    "-0",
		"negative":      "-" + n,
		"two numbers":   n + " " + n,
		"hexadecimal":   "0x" + fmt.Sprintf("%x", len(b)),
		"exponent":      "1e2",
		"fraction":      n + ".0",
		"empty":         "",
		"other digits":  "٤٧",
		"trailing junk": n + "x",
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			expectFrameErrors(t, d, "Content-Length: "+value+"\r\n\r\n"+b)
			first := nullIDErrors(d, d.response("2"))[0]
			if msg := first.get("error.message").String(); !strings.Contains(msg, "Content-Length") {
				t.Errorf("the answer does not name the header: %s", first)
			}
		})
	}
	t.Run("leading zeros and spaces", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		body := `{"jsonrpc":"2.0","id":"z","method":"session/new"}`
		d.write([]byte("Content-Length:   000" + itoa(len(body)) + " \r\n\r\n" + body))
		d.result(`"z"`)
	})
}

func TestOversizedFrameClosesConnection(t *testing.T) {
	for name, value := range map[string]string{
		"2^62":            "4611686018427387904",
		"just over 64 MB": itoa(lspframe.MaxFrame + 1),
		"many digits":     strings.Repeat("9", 40),
	} {
		t.Run(name, func(t *testing.T) {
			d, logs := startHooked(t)
			d.initialize(nil)
			// Answered before anything else is sent (the frame is never read)...
			d.write([]byte("Content-Length: " + value + "\r\n\r\n"))
			m := d.await("the answer to the oversized frame", func(m *wireMsg) bool { return m.isResponse() && m.id() == "null" })
			if m.get("error.code").Int() != codeParseError || !strings.Contains(m.get("error.message").String(), "exceeds the limit") {
				t.Errorf("oversized frame: %s", m)
			}
			// ...and then the connection ends, saying why: what follows cannot be found.
			waitLog(t, logs, "closing the connection")
			if code := d.wait(); code != 1 {
				t.Errorf("Serve returned %d, want 1", code)
			}
		})
	}
}

func TestIDsAnyNumber(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	ids := []string{`-1`, `1.5`, `1e2`, `1E+2`, `-0`, `0.0`, `18446744073709551616`, `123456789012345678901234567890`, `1e400`, `-2.5e-3`, `"1.5"`}
	for _, id := range ids {
		d.requestID(id, "session/new", omit)
		if m := d.response(id); m.get("error").Exists() || m.get("id").Raw != id {
			t.Errorf("id %s: want a result echoing the id exactly, got %s", id, m)
		}
		d.requestID(id, "no/such/method", omit)
		if m := d.await("the error for "+id, func(m *wireMsg) bool { return m.isResponse() && m.get("error").Exists() && m.get("id").Raw == id }); m.get("error.code").Int() != codeMethodNotFound {
			t.Errorf("id %s: %s", id, m)
		}
	}
	// Answers from the frame layer echo them too.
	d.frame(`{"jsonrpc":"1.0","id":-7E1,"method":"tools/list"}`)
	if m := d.await("the -32600 for id -7E1", func(m *wireMsg) bool { return m.get("id").Raw == "-7E1" }); m.get("error.code").Int() != codeInvalidRequest {
		t.Errorf("jsonrpc 1.0 with id -7E1: %s", m)
	}
}

func TestCancelOddIDs(t *testing.T) {
	for _, tc := range []struct{ id, cancel string }{
		{`-1`, `-1`},
		{`1.5`, `1.5`},
		{`18446744073709551616`, `18446744073709551616`},
		{`100`, `1e2`},                           // one number, two spellings
		{`"\u0061b"`, `"ab"`},                    // one string, two spellings
		{`9007199254740993`, `9007199254740993`}, // beyond float64's integers
	} {
		t.Run(tc.id, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			sid := d.newSession(obj{"scriptedTools": []obj{tool("slow", updateStep("sleeping"), sleepStep(60000))}})
			d.requestID(tc.id, "tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("s1", "slow")}})
			d.notification("$/toolUpdate", nil)
			d.cancel(tc.cancel)
			m := d.response(tc.id)
			if m.get("id").Raw != tc.id || !m.get("result.aborted").Bool() {
				t.Errorf("want the batch aborted and answered with id %s, got %s", tc.id, m)
			}
		})
	}
}

func TestDuplicateRunningID(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{"scriptedTools": []obj{tool("slow", updateStep("sleeping"), sleepStep(60000)), tool("quick", resultStep("q"))}})
	d.requestID(`7`, "tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("s1", "slow")}})
	d.notification("$/toolUpdate", nil)
	for _, dup := range []string{`7`, `7.0`, `70e-1`} {
		for _, method := range []string{"session/new", "tools/execute"} {
			d.requestID(dup, method, obj{"sessionId": sid, "toolCalls": []obj{execCall("q1", "quick")}})
			m := d.await("the refusal of "+dup, func(m *wireMsg) bool { return m.get("error").Exists() && m.get("id").Raw == dup })
			if m.get("error.code").Int() != codeInvalidRequest || !strings.Contains(m.get("error.message").String(), "still running") {
				t.Errorf("%s with the id %s of a running request: %s", method, dup, m)
			}
		}
	}
	// Nothing refused ran (no result for any of those ids yet), and the cancel reaches the
	// one request with that id.
	d.call("tools/list", obj{"sessionId": sid})
	for _, m := range d.snapshot() {
		if m.isResponse() && m.get("result").Exists() && (m.id() == "7" || m.id() == "7.0" || m.id() == "70e-1") {
			t.Errorf("a refused request ran: %s", m)
		}
	}
	d.cancel(`7`)
	m := d.await("the answer to 7", func(m *wireMsg) bool { return m.get("result").Exists() && m.id() == "7" })
	if !m.get("result.aborted").Bool() || m.get("result.messages.#").Int() != 1 {
		t.Errorf("the cancelled batch: %s", m)
	}
	// Once answered, an id is free: an editor may reuse it at once, every time.
	last := -1
	for i := range 100 {
		d.requestID(`"again"`, "tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall(fmt.Sprintf("q%d", i), "quick")}})
		m := d.await(fmt.Sprintf("answer %d to id again", i), func(m *wireMsg) bool { return m.isResponse() && m.id() == `"again"` && m.seq > last })
		if m.get("error").Exists() {
			t.Fatalf("request %d reusing an answered id was refused: %s", i, m)
		}
		last = m.seq
	}
}

// lateWriter is what test/late leaves running: a goroutine of no request that writes once
// gate closes (as the settings watcher, or any other part that reports on its own, does).
var lateWriter struct {
	gate    chan struct{}
	done    chan struct{}
	callErr error
}

func init() {
	methodTable["test/late"] = quick(func(s *Server, _ *noParams) (any, error) {
		lateWriter.gate, lateWriter.done = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(lateWriter.done)
			<-lateWriter.gate
			s.notify("window/logMessage", obj{"type": 3, "message": "late"})
			s.logMessage(2, "late warning")
			lateWriter.callErr = s.call(context.Background(), "beforeToolCall", []byte(`{}`), nil)
		}()
		return nil, nil
	})
}

func TestNothingStartedAfterShutdownReply(t *testing.T) {
	d := startInProcess(t)
	d.initialize(obj{"beforeToolCall": true})
	d.call("test/late", omit)
	shut := d.response(d.request("shutdown", omit))
	close(lateWriter.gate)
	select {
	case <-lateWriter.done:
	case <-time.After(hangGuard):
		t.Fatalf("hang guard: a request of pid's after its shutdown reply still waits for its answer; received:\n%s", d.dump())
	}
	if lateWriter.callErr == nil {
		t.Errorf("a request of pid's after its shutdown reply did not fail")
	}
	// What may follow: answers to what the editor sends.
	d.frame(`not json`)
	next := d.request("session/new", omit)
	end := d.response(next)
	if code := end.get("error.code").Int(); code != codeInvalidRequest {
		t.Errorf("a request after shutdown: %s", end)
	}
	after := messagesBetween(d, shut, end)
	if len(after) != 1 || after[0].id() != "null" || after[0].get("error.code").Int() != codeParseError {
		t.Errorf("between the shutdown reply and the next answer, want only the -32700 answer; got:\n%s", d.dump())
	}
	d.notify("exit", omit)
	if code := d.wait(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

func TestSettingsReportAfterShutdownReply(t *testing.T) {
	// A settings file that breaks after the shutdown reply is logged, not sent.
	d, logs := startHooked(t)
	ws := t.TempDir()
	settings := filepath.Join(ws, ".pid", "settings.json")
	writeAtomically(t, settings, `{}`)
	initWorkspace(d, obj{}, ws)
	d.newSession(obj{})
	shut := d.response(d.request("shutdown", omit))
	// The report is logged, then sent: wait until the second of its two notifications was
	// either dropped (logged at debug level) or received.
	dropped := logs.seen(`notification not sent method="window/showMessage"`)
	writeAtomically(t, settings, `{"permissions": broken`)
	guard := time.After(hangGuard)
	for done := false; !done; {
		d.mu.Lock()
		changed := d.changed
		d.mu.Unlock()
		if after := messagesBetween(d, shut, nil); len(after) > 0 {
			t.Fatalf("a message after the shutdown reply: %s", after[0])
		}
		select {
		case <-dropped:
			done = true
		case <-changed:
		case <-guard:
			t.Fatalf("hang guard: the broken settings file was not reported; log:\n%s", logs)
		}
	}
	end := d.response(d.request("tools/list", omit))
	if after := messagesBetween(d, shut, end); len(after) != 0 {
		t.Errorf("messages after the shutdown reply:\n%s", d.dump())
	}
}

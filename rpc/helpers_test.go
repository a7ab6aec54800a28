// This file is the test harness: an editor-side client that speaks LSP-framed JSON-RPC to
// the daemon, either in process (rpc.Serve over io.Pipe) or to the real pid binary started
// as a child over real pipes, both through internal/pidtest with every failed wait failing
// the test. It also holds the package's TestMain, which builds that binary once and fails
// the package when a goroutine outlives the tests (goleak).

package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/pidtest"
)

// hangGuard bounds every wait of the harness. It is not a timed assertion: a test that hits
// it has hung, and fails saying what it was waiting for.
const hangGuard = pidtest.DefaultHangGuard

// pidBinary is the pid binary TestMain built (or $PID_BIN), or "" when the build failed
// (buildErr says why).
var (
	pidBinary string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-rpc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "rpc tests: temp dir:", err)
		os.Exit(2)
	}
	// Settings, remembered permissions and the audit log of the daemons these tests start
	// (in process or as children) live in the temp folder, never in the user's.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	// With -race the daemon is built with it too: its data races then show on its stderr.
	// Such a program sleeps a second as it exits unless GORACE says not to; the daemons
	// these tests start (hundreds) need not, since a race is reported when it happens.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	pidBinary, buildErr = pidtest.Binary(dir, testRace())
	// The test MCP server (package mcp's), on PATH as pidtestmcp for the daemons and
	// fixtures that name it in mcpServers.
	if _, err := pidtest.Build(dir, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp", false); err != nil {
		buildErr = err
		pidBinary = ""
	}
	// The test language server (testdata/lspserver), on PATH as lspserver (issue 26).
	if _, err := pidtest.Build(dir, "github.com/pid-agent/pid/testdata/lspserver", false); err != nil {
		buildErr = err
		pidBinary = ""
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// testRace reports whether this test binary was built with -race.
func testRace() bool { return pidtest.Race() }

// needBinary returns the built pid binary or fails the test.
func needBinary(t testing.TB) string {
	t.Helper()
	if pidBinary == "" {
		t.Fatalf("the pid binary was not built: %v", buildErr)
	}
	return pidBinary
}

// wireMsg is one message the daemon wrote, in the order received.
type wireMsg struct {
	seq int
	raw []byte
	msg *pidtest.Msg
}

func wrap(m *pidtest.Msg) *wireMsg { return &wireMsg{seq: m.Seq, raw: m.Raw, msg: m} }

func (m *wireMsg) get(path string) gjson.Result { return m.msg.Get(path) }
func (m *wireMsg) method() string               { return m.msg.Method() }
func (m *wireMsg) isNotification() bool         { return m.msg.IsNotification() }
func (m *wireMsg) isRequest() bool              { return m.msg.IsRequest() }
func (m *wireMsg) isResponse() bool             { return m.msg.IsResponse() }

// id returns the message's id as compact raw JSON ("null" when it is null, "" when absent).
func (m *wireMsg) id() string { return m.msg.ID() }

func (m *wireMsg) String() string { return string(m.raw) }

func compactJSON(s string) string { return pidtest.CompactJSON(s) }

// pipeClient is the editor's side of one connection: a pidtest.Conn (LSP framing, every
// message kept) whose failed waits and writes fail the test.
type pipeClient struct {
	*pidtest.Conn
	t   testing.TB
	out *io.PipeWriter // newPipeClient's: readLoop passes the daemon's output on through it

	// mu guards changed, which is closed and replaced whenever a message arrives or the
	// output ends (for tests that wait for any new message).
	mu      sync.Mutex
	changed chan struct{}
}

// attach makes the client of the Conn open returns, which it opens with the harness's
// options (ids from 101, so that ids the tests pick themselves never clash).
func attach(t testing.TB, open func(pidtest.ConnOptions) *pidtest.Conn) *pipeClient {
	c := &pipeClient{t: t, changed: make(chan struct{})}
	c.Conn = open(pidtest.ConnOptions{FirstID: 101, HangGuard: hangGuard, OnMessage: func(*pidtest.Msg) { c.signal() }})
	return c
}

func (c *pipeClient) signal() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// newPipeClient returns the client writing to w; it reads what readLoop is given (for a
// daemon whose output the test hands on itself, as startHooked in wire_test.go does).
func newPipeClient(t testing.TB, w io.Writer) *pipeClient {
	pr, pw := io.Pipe()
	c := attach(t, func(o pidtest.ConnOptions) *pidtest.Conn { return pidtest.NewConn(w, pr, o) })
	c.out = pw
	go func() {
		// A Conn that stopped reading (a broken frame) lets readLoop's copy end.
		<-c.Done()
		pr.Close()
	}()
	return c
}

// readLoop passes the daemon's output r to the client until it ends, and returns once the
// client has read it all (or stopped at a frame that breaks the framing, which Err reports).
func (c *pipeClient) readLoop(r io.Reader) {
	io.Copy(c.out, r)
	c.out.Close()
	<-c.Done()
	c.signal()
}

// snapshot returns the messages received so far.
func (c *pipeClient) snapshot() []*wireMsg {
	var out []*wireMsg
	for _, m := range c.Messages() {
		out = append(out, wrap(m))
	}
	return out
}

func (c *pipeClient) dump() string { return c.Dump() }

// await returns the first message (in order received) that matches pred, waiting for it.
func (c *pipeClient) await(what string, pred func(*wireMsg) bool) *wireMsg {
	c.t.Helper()
	m, err := c.Await(what, func(m *pidtest.Msg) bool { return pred(wrap(m)) })
	if err != nil {
		c.t.Fatal(err)
	}
	return wrap(m)
}

// write sends raw bytes to the daemon, under the hang guard: over io.Pipe a write waits
// until the daemon reads, which a daemon whose read loop is stuck never does.
func (c *pipeClient) write(b []byte) {
	c.t.Helper()
	if err := c.Write(b); err != nil {
		c.t.Fatalf("writing to the daemon: %v; received:\n%s", err, c.dump())
	}
}

// frame sends body in one Content-Length frame.
func (c *pipeClient) frame(body string) {
	c.t.Helper()
	if err := c.Send([]byte(body)); err != nil {
		c.t.Fatalf("writing to the daemon: %v; received:\n%s", err, c.dump())
	}
}

// omit, as params, leaves the params member out.
var omit = pidtest.Omit

// requestID sends a request with the given id (raw JSON) and returns that id.
func (c *pipeClient) requestID(id, method string, params any) string {
	c.t.Helper()
	key, err := c.RequestID(id, method, params)
	if err != nil {
		c.t.Fatalf("sending %s: %v", method, err)
	}
	return key
}

// request sends a request with a fresh numeric id and returns that id.
func (c *pipeClient) request(method string, params any) string {
	c.t.Helper()
	return c.requestID(c.NextID(), method, params)
}

// notify sends a notification.
func (c *pipeClient) notify(method string, params any) {
	c.t.Helper()
	if err := c.Notify(method, params); err != nil {
		c.t.Fatalf("sending %s: %v", method, err)
	}
}

// cancel sends $/cancelRequest for a request sent with id (raw JSON).
func (c *pipeClient) cancel(id string) {
	c.t.Helper()
	c.notify("$/cancelRequest", json.RawMessage(`{"id":`+id+`}`))
}

// response waits for the response to the request with id (raw JSON).
func (c *pipeClient) response(id string) *wireMsg {
	c.t.Helper()
	m, err := c.Response(id)
	if err != nil {
		c.t.Fatal(err)
	}
	return wrap(m)
}

// result waits for the response to id and returns its result, failing on an error response.
func (c *pipeClient) result(id string) gjson.Result {
	c.t.Helper()
	m := c.response(id)
	if m.get("error").Exists() {
		c.t.Fatalf("request %s failed: %s", id, m)
	}
	return m.get("result")
}

// call sends a request and returns its result, failing on an error response.
func (c *pipeClient) call(method string, params any) gjson.Result {
	c.t.Helper()
	return c.result(c.request(method, params))
}

// callErr sends a request that must fail and returns its error code and message.
func (c *pipeClient) callErr(method string, params any) (int64, string) {
	c.t.Helper()
	return c.errorOf(c.request(method, params))
}

// errorOf waits for the response to id, which must be an error, and returns it.
func (c *pipeClient) errorOf(id string) (int64, string) {
	c.t.Helper()
	m := c.response(id)
	if !m.get("error").Exists() || m.get("result").Exists() {
		c.t.Fatalf("request %s: want an error response, got %s", id, m)
	}
	return m.get("error.code").Int(), m.get("error.message").String()
}

// serverRequest waits for a request from the daemon with method whose toolCallId is callID
// ("" matches any).
func (c *pipeClient) serverRequest(method, callID string) *wireMsg {
	c.t.Helper()
	return c.await(fmt.Sprintf("a %s request for %q", method, callID), func(m *wireMsg) bool {
		return m.isRequest() && m.method() == method && (callID == "" || m.get("params.toolCallId").String() == callID)
	})
}

// notification waits for a notification with method for which pred (if not nil) holds.
func (c *pipeClient) notification(method string, pred func(*wireMsg) bool) *wireMsg {
	c.t.Helper()
	return c.await("a "+method+" notification", func(m *wireMsg) bool {
		return m.isNotification() && m.method() == method && (pred == nil || pred(m))
	})
}

// answer answers a request of the daemon's with result.
func (c *pipeClient) answer(req *wireMsg, result any) {
	c.t.Helper()
	if err := c.Answer(req.msg, result); err != nil {
		c.t.Fatalf("answering %s: %v", req.method(), err)
	}
}

// answerError answers a request of the daemon's with a JSON-RPC error.
func (c *pipeClient) answerError(req *wireMsg, code int, message string) {
	c.t.Helper()
	if err := c.AnswerError(req.msg, code, message); err != nil {
		c.t.Fatalf("answering %s: %v", req.method(), err)
	}
}

// initialize sends initialize declaring the given capabilities.experimental.pid entries.
func (c *pipeClient) initialize(pidCaps map[string]any) gjson.Result {
	c.t.Helper()
	params := map[string]any{"capabilities": map[string]any{}}
	if pidCaps != nil {
		params["capabilities"] = map[string]any{"experimental": map[string]any{"pid": pidCaps}}
	}
	res := c.call("initialize", params)
	c.notify("initialized", map[string]any{})
	return res
}

// newSession runs session/new and returns the session id.
func (c *pipeClient) newSession(cfg map[string]any) string {
	c.t.Helper()
	id := c.call("session/new", cfg).Get("sessionId").String()
	if id == "" {
		c.t.Fatal("session/new returned no sessionId")
	}
	return id
}

// notes returns the notifications received so far that carry sessionId sid.
func (c *pipeClient) notes(sid string) []*wireMsg {
	var out []*wireMsg
	for _, m := range c.snapshot() {
		if m.isNotification() && m.get("params.sessionId").String() == sid {
			out = append(out, m)
		}
	}
	return out
}

// logMessages returns the window/logMessage notifications received so far.
func (c *pipeClient) logMessages() []*wireMsg {
	var out []*wireMsg
	for _, m := range c.snapshot() {
		if m.isNotification() && m.method() == "window/logMessage" {
			out = append(out, m)
		}
	}
	return out
}

// daemon is a running pid with a client attached.
type daemon struct {
	*pipeClient
	// closeInput ends the daemon's input (the editor closing its stdin).
	closeInput func()
	// wait waits, under the hang guard, for the daemon to end and returns its exit code.
	wait func() int
	// kill ends a daemon started as a process with SIGKILL and waits for it (nil in process).
	kill func()
	// pid is the daemon's process id (0 in process).
	pid int
}

// startInProcess runs rpc.Serve on a goroutine over io.Pipe. The test's cleanup closes the
// input and waits for Serve to return.
func startInProcess(t testing.TB) *daemon {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := attach(t, func(o pidtest.ConnOptions) *pidtest.Conn { return pidtest.NewConn(inW, outR, o) })
	codes := make(chan int, 1)
	go func() {
		code := Serve(context.Background(), inR, outW, Options{Version: "test", Log: log})
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
			<-c.Done()
			c.signal()
		})
		return code
	}
	t.Cleanup(func() {
		inW.Close()
		d.wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	return d
}

// processOptions configure startProcess.
type processOptions struct {
	// Env is added to the child's environment, which is the test's with PID_LOG=debug.
	Env []string
	// Stderr, when not nil, is where the child's stderr goes, for the test to read (the
	// key checks do); else a buffer of startProcess's own. Either way it is logged when the
	// test fails.
	Stderr *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer = pidtest.Buffer

// startProcess starts the pid binary as a child over real pipes. The test's cleanup closes
// its stdin and waits for it (killing it only if it outlives the hang guard).
func startProcess(t testing.TB, opts processOptions) *daemon {
	t.Helper()
	bin := needBinary(t)
	stderr := opts.Stderr
	if stderr == nil {
		stderr = &syncBuffer{}
	}
	var p *pidtest.Process
	c := attach(t, func(o pidtest.ConnOptions) *pidtest.Conn {
		var err error
		// PID_LOG=debug: the most the daemon ever logs, which must still hold no key.
		p, err = pidtest.Start(bin, pidtest.Options{Env: append([]string{"PID_LOG=debug"}, opts.Env...), Stderr: stderr, Conn: o})
		if err != nil {
			t.Fatal(err)
		}
		return p.Conn
	})
	var once sync.Once
	code := -1
	d := &daemon{pipeClient: c, closeInput: func() { p.CloseInput() }, pid: p.Pid()}
	d.kill = func() {
		p.Kill()
		d.wait()
	}
	d.wait = func() int {
		t.Helper()
		once.Do(func() {
			var err error
			if code, err = p.Wait(hangGuard); err != nil {
				t.Errorf("hang guard: %v", err)
			}
			c.signal()
		})
		return code
	}
	t.Cleanup(func() {
		p.CloseInput()
		d.wait()
		if t.Failed() {
			t.Logf("pid stderr:\n%s", stderr.String())
		}
	})
	return d
}

// Builders for session/new: a scripted model and scripted tools.

type obj = map[string]any

func scriptModel(turns ...obj) obj { return obj{"provider": "script", "turns": turns} }

func turn(content ...obj) obj { return obj{"content": content} }

func text(s string) obj { return obj{"type": "text", "text": s} }

func toolCall(id, name string, args any) obj {
	if args == nil {
		args = obj{}
	}
	return obj{"type": "toolCall", "id": id, "name": name, "arguments": args}
}

func tool(name string, steps ...obj) obj {
	if steps == nil {
		steps = []obj{}
	}
	return obj{"name": name, "steps": steps}
}

func sleepStep(ms int) obj         { return obj{"sleepMs": ms} }
func waitForEnd(id string) obj     { return obj{"waitForEnd": id} }
func updateStep(s string) obj      { return obj{"update": obj{"content": []obj{text(s)}}} }
func resultStep(s string) obj      { return obj{"result": obj{"content": []obj{text(s)}}} }
func panicStep(s string) obj       { return obj{"panic": s} }
func needsApproval(t obj) obj      { t["requiresApproval"] = true; return t }
func inactive(t obj) obj           { t["active"] = false; return t }
func execCall(id, name string) obj { return obj{"id": id, "name": name, "arguments": obj{}} }

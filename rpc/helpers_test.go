// This file is the test harness: an editor-side client that speaks LSP-framed JSON-RPC to
// the daemon, either in process (rpc.Serve over io.Pipe) or to the real pid binary started
// as a child over real pipes. It also holds the package's TestMain, which builds that binary
// once and fails the package when a goroutine outlives the tests (goleak).

package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"
)

// hangGuard bounds every wait of the harness. It is not a timed assertion: a test that hits
// it has hung, and fails saying what it was waiting for.
const hangGuard = 30 * time.Second

// pidBinary is the pid binary TestMain built, or "" when the build failed (buildErr says why).
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
	bin := filepath.Join(dir, "pid")
	args := []string{"build", "-o", bin}
	if testRace() {
		args = append(args, "-race") // the daemon's data races then show on its stderr
	}
	cmd := exec.Command("go", append(args, "github.com/pid-agent/pid/cmd/pid")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build ./cmd/pid: %v\n%s", err, out)
	} else {
		pidBinary = bin
	}
	// The test MCP server (package mcp's), on PATH as pidtestmcp for the daemons and
	// fixtures that name it in mcpServers.
	mcpBin := filepath.Join(dir, "pidtestmcp")
	if out, err := exec.Command("go", "build", "-o", mcpBin, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp").CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build pidtestmcp: %v\n%s", err, out)
		pidBinary = ""
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// testRace reports whether this test binary was built with -race.
func testRace() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "-race" {
				return st.Value == "true"
			}
		}
	}
	return false
}

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
}

func (m *wireMsg) get(path string) gjson.Result { return gjson.GetBytes(m.raw, path) }
func (m *wireMsg) method() string               { return m.get("method").String() }
func (m *wireMsg) hasID() bool                  { return m.get("id").Exists() }
func (m *wireMsg) isNotification() bool         { return m.get("method").Exists() && !m.hasID() }
func (m *wireMsg) isRequest() bool              { return m.get("method").Exists() && m.hasID() }
func (m *wireMsg) isResponse() bool {
	return !m.get("method").Exists() && (m.get("result").Exists() || m.get("error").Exists())
}

// id returns the message's id as compact raw JSON ("null" when it is null, "" when absent).
func (m *wireMsg) id() string { return compactJSON(m.get("id").Raw) }

func (m *wireMsg) String() string { return string(m.raw) }

func compactJSON(s string) string {
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// pipeClient is the editor's side of one connection.
type pipeClient struct {
	t testing.TB

	wmu sync.Mutex
	w   io.Writer

	// mu guards the fields below it.
	mu      sync.Mutex
	msgs    []*wireMsg
	changed chan struct{} // closed and replaced whenever msgs grows or the output ends
	ended   bool
	readErr error

	nextID atomic.Int64
}

func newPipeClient(t testing.TB, w io.Writer) *pipeClient {
	c := &pipeClient{t: t, w: w, changed: make(chan struct{})}
	c.nextID.Store(100)
	return c
}

// readLoop reads the daemon's output until it ends. Anything on it that is not a well-formed
// Content-Length frame holding JSON ends the loop with an error: stdout carries protocol only.
func (c *pipeClient) readLoop(r io.Reader) {
	br := bufio.NewReader(r)
	var err error
	for {
		var body []byte
		if body, err = readStrictFrame(br); err != nil {
			break
		}
		c.mu.Lock()
		c.msgs = append(c.msgs, &wireMsg{seq: len(c.msgs), raw: body})
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.ended = true
	if err != io.EOF {
		c.readErr = err
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func readStrictFrame(br *bufio.Reader) ([]byte, error) {
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
		if length, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("bad Content-Length %q", v)
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("reading a body of %d bytes: %v", length, err)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("a frame that is not JSON: %q", body)
	}
	return body, nil
}

// snapshot returns the messages received so far.
func (c *pipeClient) snapshot() []*wireMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*wireMsg(nil), c.msgs...)
}

func (c *pipeClient) dump() string {
	var sb strings.Builder
	for _, m := range c.snapshot() {
		fmt.Fprintf(&sb, "  %3d %s\n", m.seq, truncate(m.String(), 400))
	}
	return sb.String()
}

// await returns the first message (in order received) that matches pred, waiting for it.
func (c *pipeClient) await(what string, pred func(*wireMsg) bool) *wireMsg {
	c.t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		c.mu.Lock()
		for _, m := range c.msgs {
			if pred(m) {
				c.mu.Unlock()
				return m
			}
		}
		ch, ended, err := c.changed, c.ended, c.readErr
		c.mu.Unlock()
		if ended {
			c.t.Fatalf("waiting for %s: the daemon's output ended (err %v); received:\n%s", what, err, c.dump())
		}
		select {
		case <-ch:
		case <-guard.C:
			c.t.Fatalf("hang guard: no %s after %v; received:\n%s", what, hangGuard, c.dump())
		}
	}
}

// write sends raw bytes to the daemon, under the hang guard: over io.Pipe a write waits
// until the daemon reads, which a daemon whose read loop is stuck never does.
func (c *pipeClient) write(b []byte) {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		_, err := c.w.Write(b)
		done <- err
	}()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("writing to the daemon: %v", err)
		}
	case <-guard.C:
		c.t.Fatalf("hang guard: the daemon did not read %q within %v (is its read loop blocked?); received:\n%s", truncate(string(b), 200), hangGuard, c.dump())
	}
}

// frame sends body in one Content-Length frame.
func (c *pipeClient) frame(body string) {
	c.t.Helper()
	c.write([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
}

// omit, as params, leaves the params member out.
type omitParams struct{}

var omit = omitParams{}

func encodeParams(t testing.TB, params any) string {
	t.Helper()
	switch p := params.(type) {
	case omitParams:
		return ""
	case json.RawMessage:
		return `,"params":` + string(p)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatalf("encoding params: %v", err)
	}
	return `,"params":` + string(b)
}

// requestID sends a request with the given id (raw JSON) and returns that id.
func (c *pipeClient) requestID(id, method string, params any) string {
	c.t.Helper()
	c.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q%s}`, id, method, encodeParams(c.t, params)))
	return compactJSON(id)
}

// request sends a request with a fresh numeric id and returns that id.
func (c *pipeClient) request(method string, params any) string {
	c.t.Helper()
	return c.requestID(strconv.FormatInt(c.nextID.Add(1), 10), method, params)
}

// notify sends a notification.
func (c *pipeClient) notify(method string, params any) {
	c.t.Helper()
	c.frame(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q%s}`, method, encodeParams(c.t, params)))
}

// cancel sends $/cancelRequest for a request sent with id (raw JSON).
func (c *pipeClient) cancel(id string) {
	c.t.Helper()
	c.notify("$/cancelRequest", json.RawMessage(`{"id":`+id+`}`))
}

// response waits for the response to the request with id (raw JSON).
func (c *pipeClient) response(id string) *wireMsg {
	c.t.Helper()
	id = compactJSON(id)
	return c.await("the response to request "+id, func(m *wireMsg) bool { return m.isResponse() && m.id() == id })
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
	b, err := json.Marshal(result)
	if err != nil {
		c.t.Fatal(err)
	}
	c.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.id(), b))
}

// answerError answers a request of the daemon's with a JSON-RPC error.
func (c *pipeClient) answerError(req *wireMsg, code int, message string) {
	c.t.Helper()
	c.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, req.id(), code, message))
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

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startInProcess runs rpc.Serve on a goroutine over io.Pipe. The test's cleanup closes the
// input and waits for Serve to return.
func startInProcess(t testing.TB) *daemon {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newPipeClient(t, inW)
	codes := make(chan int, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c.readLoop(outR)
	}()
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
			<-readerDone
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

// startProcess starts the pid binary as a child over real pipes. The test's cleanup closes
// its stdin and waits for it (killing it only if it outlives the hang guard).
func startProcess(t testing.TB, opts processOptions) *daemon {
	t.Helper()
	bin := needBinary(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = &syncBuffer{}
	}
	cmd := exec.Command(bin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	// PID_LOG=debug: the most the daemon ever logs, which must still hold no key.
	cmd.Env = append(append(os.Environ(), "PID_LOG=debug"), opts.Env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	c := newPipeClient(t, inW)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c.readLoop(outR)
		outR.Close()
	}()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	var once sync.Once
	code := -1
	d := &daemon{pipeClient: c, closeInput: func() { inW.Close() }, pid: cmd.Process.Pid}
	d.kill = func() {
		cmd.Process.Kill()
		d.wait()
	}
	d.wait = func() int {
		t.Helper()
		once.Do(func() {
			select {
			case <-exited:
			case <-time.After(hangGuard):
				cmd.Process.Kill()
				<-exited
				t.Errorf("hang guard: pid did not exit within %v; killed it", hangGuard)
			}
			<-readerDone
			code = cmd.ProcessState.ExitCode()
		})
		return code
	}
	t.Cleanup(func() {
		inW.Close()
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

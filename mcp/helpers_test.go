package mcp

// Shared test helpers: goleak over the package; this test binary doubles as the test MCP
// server (testserver.Main) when PID_MCP_TEST_SERVER=1 is in its environment, so every test
// talks to a real process over real pipes; a log of OnStatus calls to wait on; a look at
// /proc for the server processes.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/mcp/internal/testserver"
	"github.com/pid-agent/pid/toolexec"
)

const serverEnv = "PID_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		os.Exit(testserver.Main(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait of a test; reaching it is a failure, never an ordering.
const testTimeout = 20 * time.Second

// serverConfig is a stdio config that runs this binary as the test server with args.
func serverConfig(t testing.TB, args ...string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a race-enabled program otherwise sleeps a second as it exits.
	return ServerConfig{Command: exe, Args: args, Env: map[string]string{serverEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
}

// statusLog records OnStatus calls and lets a test wait for one.
type statusLog struct {
	mu      sync.Mutex
	changed chan struct{}
	list    []ServerStatus
}

func newStatusLog() *statusLog { return &statusLog{changed: make(chan struct{})} }

func (l *statusLog) record(s ServerStatus) {
	l.mu.Lock()
	l.list = append(l.list, s)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// wait returns the first recorded status (from index from on) that pred accepts.
func (l *statusLog) wait(t *testing.T, what string, from int, pred func(ServerStatus) bool) (ServerStatus, int) {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for i := from; i < len(l.list); i++ {
			if pred(l.list[i]) {
				s := l.list[i]
				l.mu.Unlock()
				return s, i + 1
			}
		}
		from = len(l.list)
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for a status: %s", what)
		}
	}
}

func (l *statusLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.list)
}

// newTestManager returns a Manager that Close ends with the test, with servers stopping as
// soon as they are released.
func newTestManager(t *testing.T, o Options) *Manager {
	t.Helper()
	if o.Linger == 0 {
		o.Linger = -1
	}
	if o.StopGrace == 0 {
		o.StopGrace = 5 * time.Second
	}
	m := NewManager(o)
	t.Cleanup(m.Close)
	return m
}

// ready acquires a server and waits until it is ready.
func ready(t *testing.T, m *Manager, name string, cfg ServerConfig) *Server {
	t.Helper()
	h := m.Acquire(name, cfg)
	t.Cleanup(h.Release)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := h.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady(%s): %v", name, err)
	}
	return h
}

// call calls a tool with JSON arguments, bounded by testTimeout.
func call(t *testing.T, h *Server, tool, args string, onUpdate func(event.Result)) (toolexec.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return h.Call(ctx, tool, json.RawMessage(args), onUpdate)
}

// text returns the text blocks of a result, joined by newlines.
func text(r toolexec.Result) string { return contentText(r.Content) }

// contentText returns the text blocks of content, joined by newlines.
func contentText(content []llm.Content) string {
	var parts []string
	for _, c := range content {
		if c.Type == llm.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// serverPid returns the process id of the server behind h (the whoami tool).
func serverPid(t *testing.T, h *Server) int {
	t.Helper()
	res, err := call(t, h, "whoami", `{}`, nil)
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	var out struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil || out.Pid == 0 {
		t.Fatalf("whoami answered %q (%v)", text(res), err)
	}
	return out.Pid
}

// serverProcs returns the live (non-zombie) processes that are children of this test
// and run this test binary: the test servers.
func serverProcs(t *testing.T) []int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range proctest.Processes(t) {
		if p.PPid != os.Getpid() {
			continue
		}
		if target, err := os.Readlink("/proc/" + strconv.Itoa(p.Pid) + "/exe"); err == nil && target == exe {
			out = append(out, p.Pid)
		}
	}
	return out
}

// httpServer runs the test server in HTTP mode as a process of its own and returns its URL
// and a function that kills it; the process is killed and reaped when the test ends.
func httpServer(t *testing.T) (string, func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-http")
	cmd.Env = append(os.Environ(), serverEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = diesWithTest()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the HTTP test server printed no URL: %v", err)
	}
	return strings.TrimSpace(line), kill
}

package main

// pid and the processes its tools start, with the real binary over pipes: SIGTERM winds pid
// down as stdin closing does and leaves no process of a tool behind; SIGKILL of pid takes
// the tool's processes with it (the shell by its parent-death signal, what the shell started
// by the watchdog); processes a finished command left in the background end with pid.
// Nothing sleeps to order events: the tests poll /proc with a deadline.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/pidtest"
	"github.com/pid-agent/pid/internal/proctest"
)

// daemon is one pid process and the client end of its stdio.
type daemon struct {
	*pidtest.Process
	dir string // the workspace folder
}

// startDaemon starts pid with args in a fresh environment (its own config and state
// folders) and a workspace folder.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	root := t.TempDir()
	d := &daemon{dir: filepath.Join(root, "ws")}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	framing := pidtest.LSP
	if len(args) > 0 && args[0] == "--acp" {
		framing = pidtest.Lines
	}
	p, err := pidtest.Start(pidBin, pidtest.Options{Args: args, Home: filepath.Join(root, "home"), Env: []string{"PID_LOG=info"},
		Conn: pidtest.ConnOptions{Framing: framing, HangGuard: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	d.Process = p
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("pid's stderr:\n%s", p.Stderr())
		}
	})
	return d
}

// request sends a request and, when wait is set, returns its response's result.
func (d *daemon) request(t *testing.T, id int, method string, params any, wait bool) gjson.Result {
	t.Helper()
	key, err := d.RequestID(strconv.Itoa(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	if !wait {
		return gjson.Result{}
	}
	m, err := d.Response(key)
	if err != nil {
		t.Fatalf("no answer to %s: %v", method, err)
	}
	if e := m.Get("error"); e.Exists() {
		t.Fatalf("%s: %s", method, e.Raw)
	}
	return m.Get("result")
}

// session initializes pid with its workspace folder and opens a session where bash runs
// without asking.
func (d *daemon) session(t *testing.T) string {
	t.Helper()
	return d.sessionWith(t, nil)
}

// unsandboxedSession is session with "sandbox": {"mode": "off"}: the process-group tests
// read the pids the command writes and find bash as pid's child, which a sandboxed command
// (bash the child of the helper, in a PID namespace of its own) is not.
func (d *daemon) unsandboxedSession(t *testing.T) string {
	t.Helper()
	return d.sessionWith(t, map[string]any{"mode": "off"})
}

func (d *daemon) sessionWith(t *testing.T, sandbox map[string]any) string {
	t.Helper()
	d.request(t, 1, "initialize", map[string]any{"processId": nil, "capabilities": map[string]any{},
		"workspaceFolders": []any{map[string]any{"uri": "file://" + d.dir, "name": "ws"}}}, true)
	if err := d.Notify("initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"cwd": d.dir, "permissions": map[string]any{"tools": map[string]any{"bash": "allow"}}}
	if sandbox != nil {
		params["sandbox"] = sandbox
	}
	r := d.request(t, 2, "session/new", params, true)
	return r.Get("sessionId").String()
}

// bash runs command as a tool call, answering or not (wait).
func (d *daemon) bash(t *testing.T, id int, sid, command string, wait bool) gjson.Result {
	t.Helper()
	return d.request(t, id, "tools/execute", map[string]any{"sessionId": sid, "toolCalls": []any{
		map[string]any{"id": "c" + strconv.Itoa(id), "name": "bash", "arguments": map[string]any{"command": command}}}}, wait)
}

// toolGroup waits for the bash shell that pid started and for its group to have n
// processes, and returns the group's id.
func (d *daemon) toolGroup(t *testing.T, n int) int {
	t.Helper()
	pgid := 0
	proctest.WaitUntil(t, 20*time.Second, "bash to start", func() bool {
		for _, p := range proctest.Processes(t) {
			if p.PPid == d.Pid() && p.Comm == "bash" {
				pgid = p.Pgid
				return true
			}
		}
		return false
	})
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) }) // whatever the test left
	proctest.WaitUntil(t, 20*time.Second, fmt.Sprintf("%d processes in the tool's group", n), func() bool { return len(proctest.Group(t, pgid)) == n })
	return pgid
}

// waitExit waits for pid to exit and returns its exit code.
func (d *daemon) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	code, err := d.Wait(within)
	if errors.Is(err, pidtest.ErrKilled) {
		t.Fatalf("pid did not exit within %v", within)
	}
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	return code
}

// SIGTERM while a command runs that started children of its own: pid exits as when stdin
// closes (code 1: no shutdown came first), promptly, and no process of the group is left.
func TestSIGTERMEndsToolProcesses(t *testing.T) {
	d := startDaemon(t)
	sid := d.unsandboxedSession(t)
	d.bash(t, 3, sid, "sleep 1000 & sleep 1000", false)
	pgid := d.toolGroup(t, 3) // bash and its two sleepers
	sent := time.Now()
	if err := d.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.waitExit(t, 10*time.Second); code != 1 {
		t.Errorf("exit code %d after SIGTERM, want 1 (as stdin closing without shutdown)", code)
	}
	t.Logf("pid exited %v after SIGTERM", time.Since(sent))
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("pid took %v to exit after SIGTERM", took)
	}
	if left := proctest.Group(t, pgid); len(left) != 0 {
		t.Errorf("processes of the tool outlived pid: %+v", left)
	}
}

// SIGKILL cannot be handled: the shell dies by its parent-death signal, and the sleepers
// it started by the watchdog.
func TestSIGKILLTakesToolProcesses(t *testing.T) {
	d := startDaemon(t)
	sid := d.unsandboxedSession(t)
	d.bash(t, 3, sid, "sleep 1000 & sleep 1000", false)
	pgid := d.toolGroup(t, 3)
	if err := d.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.waitExit(t, 10*time.Second)
	proctest.WaitUntil(t, 10*time.Second, "the tool's processes to die with pid", func() bool { return len(proctest.Group(t, pgid)) == 0 })
}

// A command that finished normally may leave a process running in the background (pid does
// not wait for it); it ends when pid does, here by stdin closing.
func TestBackgroundProcessEndsWithPid(t *testing.T) {
	d := startDaemon(t)
	sid := d.unsandboxedSession(t)
	r := d.bash(t, 3, sid, "sleep 1000 > /dev/null 2>&1 & echo $! > bg.pid; echo started", true)
	if got := r.Get("messages.0.content.0.text").String(); got != "started\n" {
		t.Fatalf("bash said %q (%s)", got, r.Raw)
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	bg, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	pgid := 0
	for _, p := range proctest.Processes(t) {
		if p.Pid == bg {
			pgid = p.Pgid
		}
	}
	if pgid == 0 {
		t.Fatalf("the background sleeper %d is not running", bg)
	}
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	d.CloseInput()
	if code := d.waitExit(t, 10*time.Second); code != 1 {
		t.Errorf("exit code %d after stdin closed, want 1", code)
	}
	if left := proctest.Group(t, pgid); len(left) != 0 {
		t.Errorf("a background process outlived pid: %+v", left)
	}
}

// SIGINT winds the ACP face down too, with its exit code for stdin closing (0).
func TestSIGINTEndsACPFace(t *testing.T) {
	d := startDaemon(t, "--acp")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	if err := d.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	// Once it answers, pid handles signals.
	m, err := d.Await("the answer to initialize", func(*pidtest.Msg) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !m.Get("result").Exists() {
		t.Fatalf("initialize: %s", m)
	}
	if err := d.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := d.waitExit(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGINT, want 0", code)
	}
}

//go:build unix

package tools_test

// bash runs real processes. No test sleeps to wait for them: the commands wait for files
// the test creates, the test waits on channels the tool's onUpdate feeds, and process death
// is checked with a bounded poll of /proc.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// bashExec runs the bash tool's Execute directly, so the test controls ctx and onUpdate.
func bashExec(t *testing.T, ws *tools.Workspace, ctx context.Context, args string, onUpdate func(event.Result)) (toolexec.Result, error) {
	t.Helper()
	for _, tool := range tools.New(ws) {
		if tool.Name == tools.NameBash {
			return tool.Execute(ctx, toolexec.Call{ID: "b", Name: tools.NameBash, Args: json.RawMessage(args)}, onUpdate)
		}
	}
	t.Fatal("no bash tool")
	return toolexec.Result{}, nil
}

func TestBashRunsInCwd(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"f.txt": "x"})
	r := call(t, ws, "bash", `{"command":"pwd; ls; echo to-stderr >&2"}`)
	if got := mustOK(t, r); got != dir+"\nf.txt\nto-stderr\n" {
		t.Errorf("got %q", got)
	}
	d := r.details.(tools.BashDetails)
	if d.ExitCode != 0 || d.TotalLines != 3 || d.Truncated {
		t.Errorf("details %+v", d)
	}
	if got := mustOK(t, call(t, ws, "bash", `{"command":"true"}`)); got != "(no output)" {
		t.Errorf("no output: %q", got)
	}
	// stdin is empty, so a command reading it does not hang.
	if got := mustOK(t, call(t, ws, "bash", `{"command":"cat; echo done"}`)); got != "done\n" {
		t.Errorf("stdin: %q", got)
	}
}

func TestBashExitCodeIsAnError(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	mustFail(t, call(t, ws, "bash", `{"command":"echo partial; echo oops >&2; exit 3"}`), "partial\noops\n", "Command exited with code 3.")
	mustFail(t, call(t, ws, "bash", `{"command":"kill -SEGV $$"}`), "killed by signal 11")
	mustFail(t, call(t, ws, "bash", `{"command":""}`), "Validation failed")
	mustFail(t, call(t, ws, "bash", `{"command":"x","timeout":0}`), "Validation failed")
}

func TestBashKeepsTheTail(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	r := call(t, ws, "bash", `{"command":"seq 1 10000"}`)
	got := mustOK(t, r)
	if !strings.HasPrefix(got, "[Output cut: showing the last 2000 of 10000 lines (") || !strings.Contains(got, " (9.8 KB of 47.7 KB).]\n8001\n8002\n") {
		t.Errorf("head %q", got[:min(len(got), 120)])
	}
	if !strings.HasSuffix(got, "\n9999\n10000\n") || strings.Contains(got, "\n8000\n") {
		t.Errorf("tail %q", got[len(got)-40:])
	}
	d := r.details.(tools.BashDetails)
	if !d.Truncated || d.TotalLines != 10000 || d.TotalBytes != 48894 {
		t.Errorf("details %+v", d)
	}
	// Long lines (1005 bytes): the byte cap bites before the line cap, and the line it cuts
	// (line 50) is dropped whole.
	r = call(t, ws, "bash", `{"command":"for i in $(seq 1 100); do printf '%04d%01000d\\n' $i 0; done"}`)
	got = mustOK(t, r)
	body := got[strings.Index(got, "]\n")+2:]
	if len(body) > tools.BashMaxBytes || !strings.HasPrefix(body, "0051") || !strings.HasSuffix(body, "\n") {
		t.Errorf("byte cap: %d bytes, starts %.10q", len(body), body)
	}
}

// A chatty command cannot flood the editor: at most one update per BashUpdateInterval,
// counted over the run (the gaps between callbacks vary with the machine's load).
func TestBashThrottlesUpdates(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	var mu sync.Mutex
	var times []time.Time
	var last event.Result
	start := time.Now()
	r, err := bashExec(t, ws, context.Background(), `{"command":"yes | head -n 200000; for i in 1 2 3; do yes | head -n 20000; sleep 0.15; done"}`, func(u event.Result) {
		mu.Lock()
		times = append(times, time.Now())
		last = u
		mu.Unlock()
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) == 0 {
		t.Fatal("no update at all")
	}
	if max := int(elapsed/tools.BashUpdateInterval) + 1; len(times) > max {
		t.Errorf("%d updates in %v, want at most %d", len(times), elapsed, max)
	}
	if d := last.Details.(tools.BashDetails); d.ExitCode != -1 {
		t.Errorf("update details %+v", d)
	}
	if d := r.Details.(tools.BashDetails); d.TotalLines != 260000 || !d.Truncated {
		t.Errorf("result details %+v", d)
	}
}

// Output streams while the command runs: the first update carries the first line before
// the command writes the second (it waits for a file the test creates on that update).
func TestBashStreamsOutput(t *testing.T) {
	ws, dir := newWorkspace(t, nil)
	gate := filepath.Join(dir, "go-on")
	var once sync.Once
	var first string
	r, err := bashExec(t, ws, context.Background(), `{"command":"echo first; while [ ! -e go-on ]; do sleep 0.01; done; echo second","timeout":20}`, func(u event.Result) {
		once.Do(func() {
			first = u.Content[0].Text
			os.WriteFile(gate, nil, 0o644)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if first != "first\n" {
		t.Errorf("first update %q", first)
	}
	if r.Content[0].Text != "first\nsecond\n" {
		t.Errorf("result %q", r.Content[0].Text)
	}
}

// plainWorkspace is newWorkspace with the sandbox off: the tests of the process group read
// the pids the command writes, which a sandboxed command's PID namespace numbers apart (its
// own tests are in sandbox_test.go).
func plainWorkspace(t *testing.T, files map[string]string) (*tools.Workspace, string) {
	t.Helper()
	ws, dir := newWorkspace(t, files)
	ws.UseSandbox(tools.SandboxConfig{Settings: sandbox.Resolved{Mode: sandbox.ModeOff}})
	return ws, dir
}

// Abort kills the whole process group, grandchildren included, and returns promptly even
// though a grandchild holds the output pipe open.
func TestBashAbortKillsProcessGroup(t *testing.T) {
	ws, dir := plainWorkspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	var aborted time.Time
	// The inner bash starts a sleeper (a grandchild of the tool's shell) that inherits the
	// pipe, writes its pid, says "started" and waits. The trap makes it ignore SIGTERM, so
	// only SIGKILL ends it.
	cmd := `bash -c 'trap "" TERM; sleep 300 & echo $! > gc.pid; echo started; wait'`
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = bashExec(t, ws, ctx, jsonArgs(t, map[string]any{"command": cmd, "timeout": 60}), func(u event.Result) {
			if strings.Contains(u.Content[0].Text, "started") {
				once.Do(func() { close(started) })
			}
		})
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("command never started")
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "gc.pid"))))
	if perr != nil || !proctest.Alive(pid) {
		t.Fatalf("grandchild %d not running (%v)", pid, perr)
	}
	aborted = time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Execute did not return after the abort")
	}
	took := time.Since(aborted)
	t.Logf("returned %v after the abort", took)
	if took > 500*time.Millisecond {
		t.Errorf("took %v to return after the abort", took)
	}
	if err == nil || !strings.Contains(err.Error(), "stopped and its processes killed") || !strings.Contains(err.Error(), "started") {
		t.Errorf("error %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("the error must keep the output, not be a bare cancellation")
	}
	// SIGKILL went to the group: the grandchild is dead (or a zombie awaiting its reaper).
	proctest.WaitUntil(t, 2*time.Second, "the grandchild to die", func() bool { return !proctest.Alive(pid) })
}

func TestBashTimeout(t *testing.T) {
	ws, dir := plainWorkspace(t, nil)
	start := time.Now()
	r := call(t, ws, "bash", `{"command":"echo before; sleep 300 & echo $! > gc.pid; wait","timeout":0.3}`)
	took := time.Since(start)
	mustFail(t, r, "before", "Command timed out after 300ms")
	if took > 3*time.Second {
		t.Errorf("timeout took %v", took)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "gc.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, 2*time.Second, "the background sleeper to die", func() bool { return !proctest.Alive(pid) })
}

// A background process left running after a normal exit is not waited for, even though it
// holds the output pipe.
func TestBashDoesNotWaitForBackgroundProcess(t *testing.T) {
	ws, dir := plainWorkspace(t, nil)
	start := time.Now()
	r := call(t, ws, "bash", `{"command":"sleep 300 & echo $! > bg.pid; echo done"}`)
	took := time.Since(start)
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "bg.pid"))))
	if err == nil {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	if got := mustOK(t, r); got != "done\n" {
		t.Errorf("got %q", got)
	}
	if took > 3*time.Second {
		t.Errorf("waited %v for a background process", took)
	}
}

// Through the pipeline, an abort keeps the output in the error result.
func TestBashAbortThroughPipeline(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	tb, err := toolexec.NewToolbox(tools.New(ws)...)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := tb.Activate(tools.NameBash)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := &toolexec.Config{Emit: func(ev event.Event) {
		if u, ok := ev.(event.ToolUpdate); ok && strings.Contains(u.Partial.Content[0].Text, "ready") {
			cancel() // the Sink is called synchronously from the tool's goroutine
		}
	}}
	oc := toolexec.Run(ctx, cfg, toolexec.Batch{Tools: set, Calls: []llm.ToolCall{{ID: "b", Name: "bash", Arguments: json.RawMessage(`{"command":"echo ready; sleep 300"}`)}}})
	m := oc.Messages[0]
	if !oc.Aborted || !m.IsError || !strings.HasPrefix(m.Content[0].Text, "Operation aborted: the command was stopped and its processes killed.") || !strings.HasSuffix(m.Content[0].Text, "ready\n") {
		t.Errorf("aborted %v, result %q", oc.Aborted, m.Content[0].Text)
	}
}

// Bash commands share the process-wide pool that caps how many run at once (issue 11: a
// batch used to start all its commands together).
func TestBashSharesTheProcessPool(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	for _, tl := range tools.New(ws) {
		if tl.Name == tools.NameBash && tl.Slots != tools.ProcessSlots {
			t.Error("the bash tool does not take its slots from ProcessSlots")
		}
	}
	t.Setenv("PID_MAX_PROCESSES", "3")
	if tools.MaxProcesses() != 3 {
		t.Errorf("MaxProcesses() = %d with PID_MAX_PROCESSES=3", tools.MaxProcesses())
	}
	t.Setenv("PID_MAX_PROCESSES", "zero")
	if tools.MaxProcesses() != 2*runtime.NumCPU() {
		t.Errorf("MaxProcesses() = %d, want twice the CPUs", tools.MaxProcesses())
	}
}

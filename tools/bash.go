// This file holds the bash tool: a shell command in the session's cwd, its output streamed
// (throttled) and cut to its tail, its whole process group killed on abort or timeout. The
// shell is started through procgroup.StartGroup, so it also dies with pid; unless the
// settings turn the sandbox off or the call escalates, it is started through the sandbox's
// helper (package workspace/launch), which contains it with the kernel.

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace/launch"
)

// The bash tool's limits and timings.
const (
	BashDefaultTimeout = 120 * time.Second
	BashMaxLines       = 2000     // output kept: the last lines ...
	BashMaxBytes       = 50 << 10 // ... and at most this many bytes of them
	// BashUpdateInterval is the least time between two progress updates of one command.
	BashUpdateInterval = 100 * time.Millisecond
	// bashKillGrace is how long the process group has between SIGTERM and SIGKILL.
	bashKillGrace = 50 * time.Millisecond
	// bashDrainGrace is how long output is still read once the shell has exited (or been
	// killed): a background process that holds the output open is not waited for.
	bashDrainGrace = 100 * time.Millisecond
)

// BashDetails are the details of a bash result and of its progress updates.
type BashDetails struct {
	// ExitCode is the shell's exit status; -1 while running and when killed by a signal.
	ExitCode   int   `json:"exitCode"`
	TotalLines int   `json:"totalLines"`
	TotalBytes int64 `json:"totalBytes"`
	// Truncated says the text holds only the tail of the output.
	Truncated  bool  `json:"truncated,omitempty"`
	DurationMs int64 `json:"durationMs"`
	// Sandbox says how the command was contained; nil in progress updates.
	Sandbox *SandboxDetails `json:"sandbox,omitempty"`
	// TerminalID is the editor's terminal the command ran in (an ACP client's, see
	// UseTerminals); "" when pid ran it.
	TerminalID string `json:"terminalId,omitempty"`
}

// SandboxReverted returns details.sandbox.reverted: the protected paths the check after a
// sandboxed command removed or put back. The audit log records them.
func (d BashDetails) SandboxReverted() []string {
	if d.Sandbox == nil {
		return nil
	}
	return d.Sandbox.Reverted
}

var bashSchema = schema(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The command, run by bash -c in the cwd."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds before the command is killed. Default 120. Not for background jobs."},
    "unsandboxed": {"type": "boolean", "description": "Run outside the sandbox (writes anywhere, network on). Only when the sandbox refused something the task needs; the user is always asked. Needs justification."},
    "justification": {"type": "string", "description": "With unsandboxed: why the command must run outside the sandbox, for the user who is asked."},
    "background": {"type": "boolean", "description": "Start the command as a background job (a dev server, a watcher, a test runner in watch mode): the call returns once its output matches waitFor, after waitMs, or when it exits, with the job's id and its output so far. The job runs until it exits, job_kill stops it, or the session ends; timeout does not apply. Read its output with job_output."},
    "waitFor": {"type": "string", "minLength": 1, "description": "With background: a regular expression (RE2) matched against each line of the output; the call returns at the first match (e.g. \"Listening on|Serving\")."},
    "waitMs": {"type": "number", "minimum": 0, "maximum": 120000, "description": "With background: the longest wait for waitFor, in milliseconds. Default 10000."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)

// ProcessSlots caps how many bash commands run at once in this process, across batches and
// sessions: twice the number of CPUs, or $PID_MAX_PROCESSES when it is a positive number.
// A batch of many commands queues the rest in source order (toolexec.Slots). A background
// job holds a slot only while its call waits for it; once the call has returned, the job
// holds none.
var ProcessSlots = toolexec.NewSlots(MaxProcesses())

// MaxProcesses returns ProcessSlots' size: $PID_MAX_PROCESSES when it is a positive
// integer, else twice the number of CPUs.
func MaxProcesses() int {
	if n, err := strconv.Atoi(os.Getenv("PID_MAX_PROCESSES")); err == nil && n > 0 {
		return n
	}
	return 2 * runtime.NumCPU()
}

// bashArgs are a bash call's arguments.
type bashArgs struct {
	Command       string   `json:"command"`
	Timeout       *float64 `json:"timeout"`
	Unsandboxed   bool     `json:"unsandboxed"`
	Justification string   `json:"justification"`
	Background    bool     `json:"background"`
	WaitFor       *string  `json:"waitFor"`
	WaitMs        *float64 `json:"waitMs"`
}

func bashTool(ws *Workspace) toolexec.Tool {
	shell := "sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	return toolexec.Tool{
		Name: NameBash,
		Description: "Run a shell command (bash -c) in the cwd, stdin empty, stdout and stderr together. " +
			"You get the last 2000 lines (at most 50KB) of the output, and the exit code; a non-zero exit is an error. " +
			"The command is killed, with every process it started, after timeout seconds (default 120) or when the user aborts. " +
			"A process left running in the background (cmd &) is not waited for, its output is not captured, and in the sandbox it ends with the command: to keep a server or a watcher running, use background: true (with waitFor its ready line), which starts a job you read with job_output and stop with job_kill (at most 8 running at once). " +
			"A server a job starts on 127.0.0.1 is reachable by your later commands of this session, and by nothing else. " +
			"Unless the user turned the sandbox off, the command runs in it: it may write only in the workspace folders and $TMPDIR, and reaches the network only through pid's proxy, to the hosts the user allowed (it sets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY; a refused host is named in the result), or not at all, as the user set it. " +
			"If the sandbox refuses something the task needs, call again with unsandboxed: true and a justification; the user is asked.",
		Parameters: bashSchema,
		Slots:      ProcessSlots,
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			var a bashArgs
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			if a.Unsandboxed && strings.TrimSpace(a.Justification) == "" {
				return toolexec.Result{}, failf("unsandboxed: true needs a justification: say why the command must run outside the sandbox; the user reads it.")
			}
			if !a.Background && (a.WaitFor != nil || a.WaitMs != nil) {
				return toolexec.Result{}, failf("waitFor and waitMs go with background: true (a job); a command without it is waited for until it exits or its timeout.")
			}
			if err := ctx.Err(); err != nil {
				return toolexec.Result{}, err
			}
			if a.Background {
				return ws.jobs.startJob(ctx, shell, a)
			}
			timeout := BashDefaultTimeout
			if a.Timeout != nil {
				timeout = time.Duration(*a.Timeout * float64(time.Second))
			}
			if t := ws.terminals(); t != nil {
				res, err, ok := ws.runInTerminal(ctx, t, shell, a, launch.Caller{ID: call.ID, Command: a.Command}, timeout, onUpdate)
				if ok {
					return res, err
				}
				// The editor could not make a terminal: pid runs it (and the next ones).
			}
			l, err := ws.launch(ctx, shell, a.Command, a.Unsandboxed, launch.Caller{ID: call.ID, Command: a.Command})
			if err != nil {
				return toolexec.Result{}, err
			}
			return runBash(ctx, l, timeout, onUpdate)
		},
	}
}

// launched is a command started: its process group (whose leader is the shell, or the
// sandbox's helper that runs it), the read end of its output, and how it is contained.
type launched struct {
	group   *procgroup.Group // nil when it runs in the editor's terminal (term)
	term    *termProc        // the editor's terminal it runs in (a job's), or nil
	out     *os.File
	box     *launch.Sandboxed // nil when unsandboxed
	details *SandboxDetails
	began   time.Time
}

// signal sends sig to the command's process group; in the editor's terminal any signal
// kills it (terminal/kill).
func (l *launched) signal(sig syscall.Signal) {
	if l.term != nil {
		l.term.kill()
		return
	}
	l.group.Signal(sig)
}

// wait waits for the command's end (in the editor's terminal: its exit, and its output all
// written to out).
func (l *launched) wait() error {
	if l.term != nil {
		return l.term.wait()
	}
	return l.group.Wait()
}

// launch starts a bash call's command among pid's own children (launch.Launcher.Start:
// in the sandbox unless the call escalates or the settings turn it off). It returns once
// the command runs, or the failure result; an abort (ctx) meanwhile kills it. Safe for
// concurrent use.
func (w *Workspace) launch(ctx context.Context, shell, command string, unsandboxed bool, who launch.Caller) (*launched, error) {
	p, err := w.launcher.Start(ctx, shell, command, unsandboxed, who)
	if err != nil {
		return nil, err
	}
	return &launched{group: p.Group, out: p.Out, box: p.Sandbox, details: p.Details, began: p.Began}, nil
}

// runBash runs the command and returns its result; see the tool's description. onUpdate is
// called only from this goroutine, at most once per BashUpdateInterval, and never after
// runBash returns.
func runBash(ctx context.Context, run *launched, timeout time.Duration, onUpdate func(event.Result)) (toolexec.Result, error) {
	began, group, pr := run.began, run.group, run.out
	if run.box != nil {
		defer run.box.Spare()
	}
	out := newTail()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.write(buf[:n])
			if err != nil { // EOF, or the deadline set below
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- group.Wait() }()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	throttle := time.NewTimer(time.Hour)
	throttle.Stop() // armed by the first update that must wait
	defer throttle.Stop()
	throttled := false
	var lastUpdate time.Time
	update := func() {
		lastUpdate = time.Now()
		if onUpdate != nil {
			text, det := out.snapshot()
			det.ExitCode = -1
			det.DurationMs = time.Since(began).Milliseconds()
			onUpdate(event.Result{Content: []llm.Content{llm.Text(text)}, Details: det})
		}
	}

	var waitErr error
	var stop string // why the command was killed: "", "abort" or "timeout"
loop:
	for {
		select {
		case waitErr = <-waitDone:
			break loop
		case <-ctx.Done():
			stop = "abort"
			break loop
		case <-deadline.C:
			stop = "timeout"
			break loop
		case <-out.dirty:
			if throttled {
				continue
			}
			if wait := BashUpdateInterval - time.Since(lastUpdate); wait > 0 {
				throttle.Reset(wait)
				throttled = true
				continue
			}
			update()
		case <-throttle.C:
			throttled = false
			update()
		}
	}
	if stop != "" {
		waitErr = killGroup(group, waitDone)
	}
	// The shell is gone. A background process may still hold the pipe open: read what is
	// already there, then stop.
	_ = pr.SetReadDeadline(time.Now().Add(bashDrainGrace))
	<-readDone
	pr.Close()

	text, det := out.snapshot()
	det.DurationMs = time.Since(began).Milliseconds()
	code, signaled, sig := exitOf(run)
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		waitErr = nil // the exit code says it
	}
	return bashResult(ended{text: text, det: det, box: run.box, details: run.details, stop: stop, timeout: timeout,
		code: code, signaled: signaled, sig: sig, waitErr: waitErr})
}

// ended is how a bash command ended, for bashResult.
type ended struct {
	text    string            // its output, as shown (the tail's snapshot)
	det     BashDetails       // the snapshot's counts, and its duration
	box     *launch.Sandboxed // nil when it ran unsandboxed
	details *SandboxDetails
	stop    string // why it was killed: "", "abort" or "timeout"
	timeout time.Duration
	// code is its exit code (-1 when a signal ended it, or nobody knows); signaled and sig
	// say which signal.
	code     int
	signaled bool
	sig      syscall.Signal
	waitErr  error // waiting for it failed (not an exit status)
}

// bashResult is a finished command's result (an error result unless it exited with 0):
// its output, with the check after a sandboxed command and the proxy's refusals, and
// the note after a refusal of the sandbox. Contract: called once per command, after
// every process the command started has ended (see launch.Sandboxed.CheckAfter).
func bashResult(e ended) (toolexec.Result, error) {
	det := e.det
	det.ExitCode = e.code
	shown := e.text
	if shown == "" {
		shown = "(no output)"
	}
	if e.box != nil {
		shown += e.box.CheckAfter()
		shown += e.box.ProxyRefusals()
	}
	det.Sandbox = e.details
	// A sandboxed command's failure keeps its details: details.sandbox.reverted says what
	// the check after it put back, whatever the outcome.
	fail := failf
	if e.box != nil {
		fail = func(format string, a ...any) error {
			return &failure{text: fmt.Sprintf(format, a...), details: det}
		}
	}
	switch e.stop {
	case "abort":
		return toolexec.Result{}, fail("the command was stopped and its processes killed.\n\nOutput before the abort:\n%s", shown)
	case "timeout":
		return toolexec.Result{}, fail("%s\n\nCommand timed out after %s; it was killed with every process it started.", shown, e.timeout)
	}
	if e.waitErr != nil {
		return toolexec.Result{}, fail("%s\n\nWaiting for the command failed: %v", shown, e.waitErr)
	}
	note := ""
	if e.box != nil {
		note = e.box.Note(e.text, det.ExitCode != 0 || e.signaled)
	}
	if e.signaled {
		return toolexec.Result{}, fail("%s\n\nCommand was killed by signal %d (%v).%s", shown, int(e.sig), e.sig, note)
	}
	if det.ExitCode != 0 {
		return toolexec.Result{}, fail("%s\n\nCommand exited with code %d.%s", shown, det.ExitCode, note)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(shown + note)}, Details: det}, nil
}

// killGroup ends the process group g: SIGTERM, then SIGKILL once the leader has exited or
// bashKillGrace has passed, whichever comes first (a process ignoring SIGTERM does not get
// longer). It returns the leader's Wait error.
func killGroup(g *procgroup.Group, waitDone <-chan error) error {
	g.Signal(syscall.SIGTERM)
	grace := time.NewTimer(bashKillGrace)
	defer grace.Stop()
	var err error
	exited := false
	select {
	case err = <-waitDone:
		exited = true
	case <-grace.C:
	}
	g.Signal(syscall.SIGKILL)
	if !exited {
		err = <-waitDone
	}
	return err
}

// tail keeps the end of a command's output, and counts all of it.
type tail struct {
	// dirty gets a token (without blocking) whenever output arrives.
	dirty chan struct{}

	mu    sync.Mutex
	buf   []byte // the last output, at least BashMaxBytes of it when there is that much
	total int64
	lines int // newlines seen
	last  byte
}

func newTail() *tail { return &tail{dirty: make(chan struct{}, 1)} }

func (t *tail) write(p []byte) {
	if len(p) == 0 {
		return
	}
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*BashMaxBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-BashMaxBytes:]...)
	}
	t.total += int64(len(p))
	t.lines += bytes.Count(p, []byte{'\n'})
	t.last = p[len(p)-1]
	t.mu.Unlock()
	select {
	case t.dirty <- struct{}{}:
	default:
	}
}

// snapshot returns the output to show (its last BashMaxLines lines and BashMaxBytes bytes,
// behind a note of what was cut) and the counts.
func (t *tail) snapshot() (string, BashDetails) {
	t.mu.Lock()
	defer t.mu.Unlock()
	det := BashDetails{TotalBytes: t.total, TotalLines: t.lines}
	if t.total > 0 && t.last != '\n' {
		det.TotalLines++
	}
	kept := t.buf
	if len(kept) > BashMaxBytes {
		kept = kept[len(kept)-BashMaxBytes:]
	}
	if int64(len(kept)) < t.total {
		// The first kept line is probably cut: drop it, unless it is all there is.
		if i := bytes.IndexByte(kept, '\n'); i >= 0 && i < len(kept)-1 {
			kept = kept[i+1:]
		}
	}
	body := strings.TrimSuffix(string(kept), "\n")
	if n := strings.Count(body, "\n") + 1; n > BashMaxLines {
		cut := 0
		for range n - BashMaxLines {
			cut += strings.IndexByte(body[cut:], '\n') + 1
		}
		body = body[cut:]
	}
	if strings.HasSuffix(string(kept), "\n") {
		body += "\n"
	}
	text := strings.ToValidUTF8(body, "\uFFFD")
	if int64(len(body)) < t.total {
		det.Truncated = true
		shownLines := strings.Count(strings.TrimSuffix(body, "\n"), "\n") + 1
		text = fmt.Sprintf("[Output cut: showing the last %d of %d lines (%s of %s).]\n", shownLines, det.TotalLines, rootfile.Size(int64(len(body))), rootfile.Size(t.total)) + text
	}
	return text, det
}

// exitOf returns how a command that has been waited for ended: its exit code (-1 when a
// signal ended it, or nobody knows), and the signal. For a sandboxed command it releases
// the helper's report pipe (the helper, as the init of the command's PID namespace, exits
// with 128+N when signal N ended the command, and says so on it).
//
// Contract: called once per command, after its group's Wait.
func exitOf(run *launched) (code int, signaled bool, sig syscall.Signal) {
	code = -1
	if run.term != nil {
		return run.term.exitCode()
	}
	st, ok := run.group.Status()
	if ok {
		code = st.ExitStatus()
		if st.Signaled() {
			signaled, sig = true, st.Signal()
		}
	}
	if run.box != nil {
		if s, ok := run.box.Finish(); ok {
			signaled, sig, code = true, s, -1
		}
	}
	return code, signaled, sig
}

// This file runs bash's foreground commands in the editor's own terminals (an ACP client's
// terminal/*), when the face gives the workspace its Terminals: the client runs a command
// line that puts the command in the session's sandbox (`pid sandbox-exec --holder ...`,
// sandbox.Holder.TerminalArgv), so the person watches it in their terminal panel and the
// sandbox still holds. A client that fails to create a terminal is not asked again: the
// session's commands run as pid's own children from then on.

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace/launch"
)

// Terminals are the editor's terminals (ACP's terminal/* methods, on one session).
//
// Contract: called from tool calls' goroutines, possibly concurrently (for different
// terminals, and Kill while WaitForExit waits on the same one); each must return promptly
// once ctx ends. An error means the client did not do it; its text is shown to the model
// and logged.
type Terminals interface {
	// Create starts command (an absolute path) with args in the folder cwd, with env set
	// on top of the client's own environment, in a new terminal the person can watch, and
	// returns its id. The client keeps at most limit bytes of its output (the last ones).
	Create(ctx context.Context, command string, args []string, cwd string, env []string, limit int) (string, error)
	// Output returns the terminal's output so far and, once the command has exited, how.
	Output(ctx context.Context, id string) (TerminalOutput, error)
	// WaitForExit returns once the command has exited, with how it exited.
	WaitForExit(ctx context.Context, id string) (TerminalExit, error)
	// Kill kills the command; the terminal stays (its output can still be read).
	Kill(ctx context.Context, id string) error
	// Release kills the command if it still runs and frees the terminal; a terminal shown
	// in a tool call stays shown.
	Release(ctx context.Context, id string) error
}

// TerminalExit is how a terminal's command exited: its exit code, or the signal (a name
// such as "SIGKILL") that ended it.
type TerminalExit struct {
	Code   *int
	Signal string
}

// TerminalOutput is a terminal's output so far. Truncated says its start was dropped
// (the client keeps a limited amount); Exit is set once the command has exited.
type TerminalOutput struct {
	Output    string
	Truncated bool
	Exit      *TerminalExit
}

// terminalOutputLimit is the output the client is asked to keep for a command (bash shows
// the last BashMaxBytes of it).
const terminalOutputLimit = 4 * BashMaxBytes

// terminalGrace bounds the calls made to the client once a command has ended or was
// stopped (its output, its release), so that a client that does not answer cannot hold
// the tool call.
const terminalGrace = 5 * time.Second

// terms is the workspace's use of the editor's terminals.
type terms struct {
	mu sync.Mutex
	// t is nil when the editor has none, or after it failed to create one.
	t Terminals
	// pidPath is pid's binary, which the terminal's command line runs.
	pidPath string
	// warn says, once, that the editor's terminals are no longer used, and why.
	warn func(string)
}

// UseTerminals makes bash run its foreground commands in the editor's terminals t (the
// command line runs pid's binary, pidPath, an absolute path). warn is told once if the
// editor fails to create one (the commands then run as pid's own from then on).
// Contract: called at most once, before the session's first tool call.
func (w *Workspace) UseTerminals(t Terminals, pidPath string, warn func(string)) {
	w.terms.mu.Lock()
	defer w.terms.mu.Unlock()
	w.terms.t, w.terms.pidPath, w.terms.warn = t, pidPath, warn
}

// terminals returns the editor's terminals, nil when bash runs commands itself.
func (w *Workspace) terminals() Terminals {
	w.terms.mu.Lock()
	defer w.terms.mu.Unlock()
	return w.terms.t
}

// dropTerminals stops using the editor's terminals after err, and says so once.
func (w *Workspace) dropTerminals(err error) {
	w.terms.mu.Lock()
	warn := w.terms.warn
	was := w.terms.t != nil
	w.terms.t = nil
	w.terms.mu.Unlock()
	if was && warn != nil {
		warn(fmt.Sprintf("the editor's terminals failed (%v): pid runs this session's commands itself from now on", err))
	}
}

// termStart is a bash call's command started in the editor's terminal id.
type termStart struct {
	id      string
	box     *launch.Sandboxed // nil when unsandboxed
	details *SandboxDetails
	began   time.Time
}

// startTerminal creates the editor's terminal that runs a bash call's command
// (launch.Launcher.TerminalCommand), its output kept up to limit bytes. An unsandboxed command gets pid's
// variables for tool calls (no pager) and set; a sandboxed one's travel in its launch file.
// (nil, nil) when the editor could not create it: its terminals are dropped and the caller
// runs the command itself.
func (w *Workspace) startTerminal(ctx context.Context, t Terminals, shell string, a bashArgs, who launch.Caller, limit int, set []string) (*termStart, error) {
	began := time.Now()
	w.terms.mu.Lock()
	pidPath := w.terms.pidPath
	w.terms.mu.Unlock()
	line, box, details, err := w.launcher.TerminalCommand(shell, a.Command, a.Unsandboxed, who, pidPath)
	if err != nil {
		return nil, err
	}
	var env []string
	if box == nil {
		env = append([]string{"PAGER=cat", "GIT_PAGER=cat"}, set...) // nobody answers a pager in a tool call
	}
	id, err := t.Create(ctx, line[0], line[1:], w.Cwd(), env, limit)
	if err != nil {
		if box != nil {
			box.Abandon()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		w.dropTerminals(err)
		return nil, nil
	}
	return &termStart{id: id, box: box, details: details, began: began}, nil
}

// runInTerminal runs a foreground bash call in the editor's terminal t: the first update
// names the terminal (details.terminalId, which the face shows live), then the call waits
// for the command's exit, the timeout or the abort (which kill it), reads its output,
// releases the terminal and returns the result as runBash does. ok is false when the
// terminal could not be created: nothing ran and the caller runs the command itself.
func (w *Workspace) runInTerminal(ctx context.Context, t Terminals, shell string, a bashArgs, who launch.Caller, timeout time.Duration, onUpdate func(event.Result)) (res toolexec.Result, err error, ok bool) {
	st, err := w.startTerminal(ctx, t, shell, a, who, terminalOutputLimit, nil)
	if err != nil {
		return toolexec.Result{}, err, true
	}
	if st == nil {
		return toolexec.Result{}, nil, false
	}
	began, id, box, details := st.began, st.id, st.box, st.details
	bg := context.WithoutCancel(ctx)
	defer func() {
		rctx, cancel := context.WithTimeout(bg, terminalGrace)
		defer cancel()
		_ = t.Release(rctx, id)
	}()
	if onUpdate != nil {
		onUpdate(event.Result{Details: BashDetails{ExitCode: -1, TerminalID: id, Sandbox: details}})
	}
	type exitRes struct {
		x   TerminalExit
		err error
	}
	waitCtx, stopWait := context.WithCancel(bg)
	defer stopWait()
	exited := make(chan exitRes, 1)
	go func() {
		x, err := t.WaitForExit(waitCtx, id)
		exited <- exitRes{x, err}
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var stop string
	var x exitRes
	select {
	case x = <-exited:
	case <-ctx.Done():
		stop = "abort"
	case <-deadline.C:
		stop = "timeout"
	}
	if stop != "" {
		kctx, cancel := context.WithTimeout(bg, terminalGrace)
		kerr := t.Kill(kctx, id)
		cancel()
		// The command ends with the kill (sandbox-exec passes it on to the command's whole
		// group); its end is waited for, within the grace.
		select {
		case x = <-exited:
		case <-time.After(terminalGrace):
			x.err = errors.Join(kerr, errors.New("the terminal did not report the end of the killed command"))
		}
	}
	octx, cancel := context.WithTimeout(bg, terminalGrace)
	out, oerr := t.Output(octx, id)
	cancel()
	tl := newTail()
	if out.Truncated {
		tl.write([]byte(fmt.Sprintf("[the editor's terminal kept only the last %d bytes of the output]\n", len(out.Output))))
	}
	tl.write([]byte(out.Output))
	text, det := tl.snapshot()
	det.DurationMs = time.Since(began).Milliseconds()
	det.TerminalID = id
	e := ended{text: text, det: det, box: box, details: details, stop: stop, timeout: timeout, code: -1}
	if x.err == nil && out.Exit != nil && x.x.Code == nil && x.x.Signal == "" {
		x.x = *out.Exit
	}
	switch {
	case x.err != nil:
		e.waitErr = fmt.Errorf("terminal/wait_for_exit: %v", x.err)
	case x.x.Code != nil:
		e.code = *x.x.Code
	case x.x.Signal != "":
		e.signaled, e.sig = true, signalNamed(x.x.Signal)
	}
	if oerr != nil && e.waitErr == nil && stop == "" {
		e.waitErr = fmt.Errorf("terminal/output: %v", oerr)
	}
	res, err = bashResult(e)
	return res, err, true
}

// termPoll is how often a job's output is read from the editor's terminal.
const termPoll = 200 * time.Millisecond

// termProc is a background job running in the editor's terminal: its output is read from the
// terminal (terminal/output, every termPoll) into a pipe, as a job's output comes from
// pid's own children; kill is terminal/kill, and its end is terminal/wait_for_exit.
type termProc struct {
	t  Terminals
	id string
	w  *os.File // the pipe's write end: what the terminal printed, in order
	// done is closed once the command has exited, its last output is written and the
	// terminal released; exit and err are set then.
	done chan struct{}
	exit TerminalExit
	err  error
	// seen is the output already written (the terminal's, as of the last read), to write
	// only what is new.
	seen string
	// waitCtx is the wait for the command's exit; kill ends it terminalGrace later, so that
	// a client that never reports the end cannot hold the job (nor the session's close).
	waitCtx    context.Context
	cancelWait context.CancelFunc
}

// launchInTerminal starts a job's command in the editor's terminal t, as launch starts it
// among pid's own children; (nil, nil) when the terminal could not be created (the editor's
// terminals are dropped: the caller launches it itself).
func (w *Workspace) launchInTerminal(ctx context.Context, t Terminals, shell string, a bashArgs, who launch.Caller) (*launched, error) {
	st, err := w.startTerminal(ctx, t, shell, a, who, JobOutputBytes, []string{"PYTHONUNBUFFERED=1"})
	if st == nil || err != nil {
		return nil, err
	}
	id := st.id
	pr, pw, err := os.Pipe()
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), terminalGrace)
		_ = t.Release(rctx, id) // kills the command
		cancel()
		if st.box != nil {
			st.box.Abandon()
		}
		return nil, err
	}
	p := &termProc{t: t, id: id, w: pw, done: make(chan struct{})}
	p.waitCtx, p.cancelWait = context.WithCancel(context.Background())
	go p.follow()
	return &launched{term: p, out: pr, box: st.box, details: st.details, began: st.began}, nil
}

// follow copies the terminal's output into the pipe until the command has exited, then
// its last output, closes the pipe and releases the terminal.
func (p *termProc) follow() {
	defer close(p.done)
	defer p.w.Close()
	defer p.cancelWait()
	bg := context.Background()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		p.exit, p.err = p.t.WaitForExit(p.waitCtx, p.id)
	}()
	tick := time.NewTicker(termPoll)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-exited:
			running = false
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(bg, terminalGrace)
		out, err := p.t.Output(ctx, p.id)
		cancel()
		if err == nil {
			p.write(out)
		}
	}
	ctx, cancel := context.WithTimeout(bg, terminalGrace)
	_ = p.t.Release(ctx, p.id)
	cancel()
}

// write writes what the terminal printed since the last read. When the terminal dropped
// the start of its output, what is new is found after the end of what was seen (its last
// 256 bytes); if that is gone too, all of it is written behind a note.
func (p *termProc) write(out TerminalOutput) {
	now := out.Output
	var fresh string
	switch {
	case strings.HasPrefix(now, p.seen):
		fresh = now[len(p.seen):]
	case out.Truncated:
		tail := p.seen[max(0, len(p.seen)-256):]
		if i := strings.LastIndex(now, tail); tail != "" && i >= 0 {
			fresh = now[i+len(tail):]
		} else {
			fresh = "\n[pid: the editor's terminal dropped output pid had not read yet]\n" + now
		}
	default:
		fresh = now // the terminal's output started over: take it as it is
	}
	p.seen = now
	if fresh != "" {
		_, _ = p.w.WriteString(fresh)
	}
}

// kill kills the command (terminal/kill); its end comes through wait.
func (p *termProc) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), terminalGrace)
	defer cancel()
	_ = p.t.Kill(ctx, p.id)
	time.AfterFunc(terminalGrace, p.cancelWait)
}

// wait returns once the command has exited and its output is all in the pipe.
func (p *termProc) wait() error {
	<-p.done
	if p.err != nil {
		return fmt.Errorf("terminal/wait_for_exit: %v", p.err)
	}
	return nil
}

// exitCode is how the command exited, as exitOf says it. Contract: after wait.
func (p *termProc) exitCode() (code int, signaled bool, sig syscall.Signal) {
	switch {
	case p.exit.Code != nil:
		return *p.exit.Code, false, 0
	case p.exit.Signal != "":
		return -1, true, signalNamed(p.exit.Signal)
	}
	return -1, false, 0
}

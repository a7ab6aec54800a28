// This file is pid exec: one prompt run headless in the current folder, with no editor
// (issue 34). It stands on the session layer as the two faces do, and prints each event of
// the run as the native protocol's notification (rpc.Notification) with --json.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/rpc"
	"github.com/pid-agent/pid/session"
)

// noApprover is the reason a call that would ask is denied with: the model reads it.
const noApprover = "no one to ask in pid exec"

// Exit codes of pid exec (docs/benchmarks.md).
const (
	execDone        = 0
	execError       = 1
	execNeedsAnswer = 2
	execInterrupted = 130
)

// stopMaxTurns is the result's stopReason when --max-turns ended the run.
const stopMaxTurns = "maxTurns"

// execUsage is pid exec's usage line.
const execUsage = "usage: pid exec [--json] [--mode MODE] [--model PROVIDER/ID] [--resume SESSION] [--max-turns N] PROMPT (PROMPT - reads stdin)"

// execResult is the last line of pid exec --json, always written.
type execResult struct {
	Type       string    `json:"type"`
	SessionID  string    `json:"sessionId"`
	StopReason string    `json:"stopReason"`
	Usage      llm.Usage `json:"usage"`
	Text       string    `json:"text"`
	// Error says what went wrong when the run could not start or failed (exit 1).
	Error string `json:"error,omitempty"`
}

// execOptions are pid exec's flags and prompt.
type execOptions struct {
	json     bool
	mode     string
	model    string
	resume   string
	maxTurns int
	prompt   string
}

func parseExec(args []string, stdin io.Reader) (execOptions, error) {
	var o execOptions
	fs := flag.NewFlagSet("pid exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.json, "json", false, "")
	fs.StringVar(&o.mode, "mode", "", "")
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.resume, "resume", "", "")
	fs.IntVar(&o.maxTurns, "max-turns", 0, "")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() != 1 {
		return o, errors.New("pid exec takes one PROMPT (quote it), or - to read it from stdin")
	}
	if o.maxTurns < 0 {
		return o, errors.New("--max-turns must be a positive number")
	}
	if o.model != "" {
		p, id, ok := strings.Cut(o.model, "/")
		if !ok || p == "" || id == "" {
			return o, fmt.Errorf("--model must be PROVIDER/ID (anthropic/claude-sonnet-4-5, openai/gpt-5), not %q", o.model)
		}
	}
	o.prompt = fs.Arg(0)
	if o.prompt == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil {
			return o, fmt.Errorf("reading the prompt from stdin: %v", err)
		}
		o.prompt = string(b)
	}
	if strings.TrimSpace(o.prompt) == "" {
		return o, errors.New("the prompt is empty")
	}
	return o, nil
}

// execFace is the session.Face of pid exec: events go to stdout (JSON lines, or the
// assistant's text) and stderr (one line per tool call); a call that would ask is denied.
type execFace struct {
	json           bool
	stdout, stderr io.Writer
	// cancel ends the run: at the end of a call denied for want of an approver, or of the
	// turn --max-turns allows last.
	cancel   context.CancelFunc
	maxTurns int

	// mu guards the fields below it and the writes to stdout and stderr (a subagent's events
	// may come from another goroutine than its parent's).
	mu      sync.Mutex
	denied  map[string]bool // calls denied for want of an approver, by id
	needed  bool            // a call needed an approver
	turns   int
	limited bool // --max-turns ended the run
	args    map[string]json.RawMessage
	midLine bool // the text on stdout does not end with a newline
}

// Emit implements session.Face. Contract: as session.Face's; it cancels the run (never
// calling into the session) once a denied call has ended or the last turn allowed is over.
func (f *execFace) Emit(s *session.Session, ev event.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch e := ev.(type) {
	case event.Warning:
		fmt.Fprintf(f.stderr, "pid: warning: %s\n", e.Message)
		return
	case event.ToolEnd:
		if f.denied[e.ToolCallID] {
			f.needed = true
			f.cancel()
		}
	case event.TurnEnd:
		f.turns++
		if f.maxTurns > 0 && f.turns >= f.maxTurns && len(e.ToolResults) > 0 {
			f.limited = true
			f.cancel()
		}
	}
	if f.json {
		method, params, ok, err := rpc.Notification(s.ID(), ev)
		if err != nil {
			fmt.Fprintf(f.stderr, "pid: %v\n", err)
		}
		if ok {
			line, _ := json.Marshal(struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}{method, params})
			f.stdout.Write(append(line, '\n'))
		}
		return
	}
	f.human(ev)
}

// human writes ev for a person: the assistant's text as it streams on stdout, each tool call
// as one line on stderr when it ends. Called with f.mu held.
func (f *execFace) human(ev event.Event) {
	switch e := ev.(type) {
	case event.MessageUpdate:
		if e.Delta.Kind == llm.StreamTextDelta {
			io.WriteString(f.stdout, e.Delta.Delta)
			f.midLine = !strings.HasSuffix(e.Delta.Delta, "\n")
		}
	case event.MessageEnd:
		if f.midLine {
			io.WriteString(f.stdout, "\n")
			f.midLine = false
		}
	case event.ToolStart:
		f.args[e.ToolCallID] = e.Args
	case event.ToolEnd:
		line := e.ToolName
		if a := title.Args(f.args[e.ToolCallID]); a != "" {
			line += " " + a
		}
		delete(f.args, e.ToolCallID)
		fmt.Fprintf(f.stderr, "pid: %s -> %s\n", line, title.Result(e.Result.Content, e.IsError))
	}
}

// Ask implements session.Face: no one is there to answer, so the call is denied with a
// reason the model reads, and the run ends once the call's result is saved (Emit).
func (f *execFace) Ask(_ context.Context, _ *session.Session, q session.Approval) (session.Answer, error) {
	f.mu.Lock()
	f.denied[q.Call.ID] = true
	f.mu.Unlock()
	return session.Answer{Decision: "deny", Reason: noApprover}, nil
}

// Warn implements session.Face.
func (f *execFace) Warn(_ *session.Session, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.stderr, "pid: warning: %s\n", msg)
}

// Elicit implements session.Face: an MCP server's question is declined (no one to ask).
func (f *execFace) Elicit(context.Context, *session.Session, session.Elicitation) (session.ElicitAnswer, error) {
	return session.ElicitAnswer{}, errors.New(noApprover)
}

// runExec is pid exec. It returns the exit code: 0 done, 1 an error (model, settings), 2 a
// call needed an approver, 130 interrupted (SIGINT cancels the run, a second one exits).
func runExec(args []string, version string) int {
	o, err := parseExec(args, os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pid exec: %v\n%s\n", err, execUsage)
		if o.json {
			line, _ := json.Marshal(execResult{Type: "result", StopReason: "error", Error: err.Error()})
			os.Stdout.Write(append(line, '\n'))
		}
		return execError
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var interrupted sync.Once
	stopped := make(chan struct{})
	defer close(stopped)
	gotSignal := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-stopped:
			return
		}
		interrupted.Do(func() { close(gotSignal) })
		cancel()
		select {
		case <-sigs:
			fmt.Fprintln(os.Stderr, "pid exec: second signal: exiting without waiting for the run")
			os.Exit(execInterrupted)
		case <-stopped:
		}
	}()
	code, res := execRun(ctx, o, version, os.Stdout, os.Stderr)
	// The run is over; what its tools left running in the background goes with it.
	procgroup.KillGroups(exitGrace)
	select {
	case <-gotSignal:
		code = execInterrupted
	default:
	}
	if o.json {
		line, _ := json.Marshal(res)
		os.Stdout.Write(append(line, '\n'))
	} else if res.Error != "" {
		fmt.Fprintf(os.Stderr, "pid exec: %s\n", res.Error)
	}
	return code
}

// execRun runs the prompt of o in a session made (or resumed) in the current folder, and
// returns the exit code and the result line; the run ends early when ctx does.
func execRun(ctx context.Context, o execOptions, version string, stdout, stderr io.Writer) (int, execResult) {
	res := execResult{Type: "result", StopReason: "error"}
	fail := func(err error) (int, execResult) {
		res.Error = err.Error()
		if res.StopReason == "" {
			res.StopReason = "error"
		}
		return execError, res
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	host := session.NewHost(session.HostOptions{Log: logger(), OwnFolders: true, Version: version,
		Report: func(msg string, severe bool) { fmt.Fprintf(stderr, "pid: %s\n", msg) }})
	host.SetUp(nil)
	defer host.Close()
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	face := &execFace{json: o.json, stdout: stdout, stderr: stderr, cancel: cancelRun, maxTurns: o.maxTurns,
		denied: map[string]bool{}, args: map[string]json.RawMessage{}}
	opts := session.Options{Face: face}
	var ss *session.Session
	if o.resume != "" {
		opts.ID = o.resume
		if ss, _, err = host.Load(o.resume, opts); err != nil {
			return fail(fmt.Errorf("resuming session %s: %v", o.resume, err))
		}
		if o.mode != "" {
			if err := ss.SetMode(o.mode); err != nil {
				return fail(err)
			}
		}
		if o.model != "" {
			p, id, _ := strings.Cut(o.model, "/")
			raw, _ := json.Marshal(&session.ModelConfig{Provider: p, ID: id})
			if err := ss.SetModel(raw); err != nil {
				return fail(err)
			}
		}
	} else {
		cfg := session.Config{Cwd: cwd, Mode: o.mode}
		if o.model != "" {
			p, id, _ := strings.Cut(o.model, "/")
			cfg.Model = &session.ModelConfig{Provider: p, ID: id}
		}
		opts.ID = session.NewID()
		if ss, err = host.New(cfg, opts); err != nil {
			return fail(err)
		}
		if q, ok := host.TrustQuestion(ss); ok {
			fmt.Fprintf(stderr, "pid: %s is not trusted, so pid left out: %s (trust it from an editor to use them)\n", q.Folder, strings.Join(q.Ignored, "; "))
		}
	}
	res.SessionID = ss.ID()
	text := o.prompt
	msg, err := ss.UserMessage("prompt", &text, nil)
	if err != nil {
		return fail(err)
	}
	if err := ss.Begin(); err != nil {
		return fail(err)
	}
	out, err := ss.Prompt(runCtx, []llm.Message{msg})
	ss.End()
	res.StopReason = string(out.StopReason)
	for i := range out.Messages {
		m := &out.Messages[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		if m.Usage != nil {
			res.Usage.Input += m.Usage.Input
			res.Usage.Output += m.Usage.Output
			res.Usage.CacheRead += m.Usage.CacheRead
			res.Usage.CacheWrite += m.Usage.CacheWrite
			res.Usage.Total += m.Usage.Total
		}
		if t := m.Text(); t != "" {
			res.Text = t
		}
	}
	if err != nil {
		return fail(err)
	}
	face.mu.Lock()
	needed, limited := face.needed, face.limited
	face.mu.Unlock()
	switch {
	case needed:
		return execNeedsAnswer, res
	case limited:
		res.StopReason = stopMaxTurns
		return execError, res
	case out.StopReason == llm.StopError:
		res.Error = lastError(out.Messages)
		return execError, res
	}
	return execDone, res
}

// lastError returns the errorMessage of the run's last assistant message.
func lastError(ms []llm.Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == llm.RoleAssistant && ms[i].ErrorMessage != "" {
			return ms[i].ErrorMessage
		}
	}
	return "the model failed"
}

// Package hooks runs the person's own hook commands at the pipeline's moments, configured
// as Claude Code configures them: `"hooks": {"EVENT": [{"matcher": "REGEX", "hooks":
// [{"type": "command", "command": "...", "timeout": SECONDS}]}]}`. The entry points are
// Parse (one settings source), Set.For (the hooks of an event and tool) and Run (one
// command, JSON on stdin, its exit code and output read back); Cache keeps the set that
// applies now, Runner runs a session's hooks at each moment, and StartRun its SessionStart
// hooks in the background. What the output decides is the session's to apply
// (package session, hooks.go); docs/hooks.md is the description for people.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/internal/procgroup"
)

// The events.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SessionStart     = "SessionStart"
	PreCompact       = "PreCompact"
)

// Events are the events in the order docs/hooks.md lists them.
var Events = []string{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact}

// DefaultTimeout is a hook's timeout when its settings give none.
const DefaultTimeout = 60 * time.Second

// MaxOutput caps what is kept of a hook's stdout and of its stderr (1 MiB each): the rest
// is read, counted (Result.StdoutDropped, StderrDropped) and thrown away, so that a hook
// printing without end costs no memory.
const MaxOutput = 1 << 20

// Hook is one configured command.
type Hook struct {
	Event   string
	Matcher string // "" matches every tool
	Command string
	Timeout time.Duration
	// Source is where it was configured: "user", "workspace" or "session".
	Source string
	re     *regexp.Regexp
}

// Matches reports whether the hook is for the tool named tool ("" for the events that have
// no tool).
func (h *Hook) Matches(tool string) bool {
	return h.re == nil || tool == "" || h.re.MatchString(tool)
}

// Set is every hook of a session, in configuration order: the user's, the workspace's,
// the session's. It is immutable.
type Set struct {
	hooks []Hook
}

// All returns the set's hooks, in order.
func (s *Set) All() []Hook {
	if s == nil {
		return nil
	}
	return slices.Clone(s.hooks)
}

// For returns the hooks of event that match tool, in configuration order.
func (s *Set) For(event, tool string) []Hook {
	if s == nil {
		return nil
	}
	var out []Hook
	for _, h := range s.hooks {
		if h.Event == event && h.Matches(tool) {
			out = append(out, h)
		}
	}
	return out
}

// Has reports whether the set has hooks for event.
func (s *Set) Has(event string) bool {
	if s == nil {
		return false
	}
	for _, h := range s.hooks {
		if h.Event == event {
			return true
		}
	}
	return false
}

// Join returns a set of the hooks of sets, in order; nil sets are skipped.
func Join(sets ...*Set) *Set {
	out := &Set{}
	for _, s := range sets {
		if s != nil {
			out.hooks = append(out.hooks, s.hooks...)
		}
	}
	if len(out.hooks) == 0 {
		return nil
	}
	return out
}

// Parse reads a "hooks" settings value configured in source. An unknown event, a matcher
// that is not a regular expression, a hook that is not {"type": "command", "command":
// non-empty} or a timeout that is not a positive number is an error naming the field.
func Parse(raw json.RawMessage, source string) (*Set, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf(`hooks must be an object {"EVENT": [{"matcher"?: "REGEX", "hooks": [{"type": "command", "command": "...", "timeout"?: SECONDS}]}]}, not %s`, elide.Quote(raw))
	}
	set := &Set{}
	for _, event := range Events {
		v, ok := top[event]
		if !ok {
			continue
		}
		var groups []struct {
			Matcher string            `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(v, &groups); err != nil {
			return nil, fmt.Errorf(`hooks.%s must be a list of {"matcher"?: "REGEX", "hooks": [...]}, not %s`, event, elide.Quote(v))
		}
		for gi, g := range groups {
			var re *regexp.Regexp
			if g.Matcher != "" && g.Matcher != "*" {
				var err error
				if re, err = regexp.Compile("^(?:" + g.Matcher + ")$"); err != nil {
					return nil, fmt.Errorf("hooks.%s[%d].matcher %q is not a regular expression: %v", event, gi, g.Matcher, err)
				}
			}
			for hi, hr := range g.Hooks {
				var h struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Timeout *float64 `json:"timeout"`
				}
				if err := json.Unmarshal(hr, &h); err != nil || h.Type != "command" || h.Command == "" {
					return nil, fmt.Errorf(`hooks.%s[%d].hooks[%d] must be {"type": "command", "command": "...", "timeout"?: SECONDS}, not %s`, event, gi, hi, elide.Quote(hr))
				}
				timeout := DefaultTimeout
				if h.Timeout != nil {
					if *h.Timeout <= 0 {
						return nil, fmt.Errorf("hooks.%s[%d].hooks[%d].timeout must be a positive number of seconds, not %v", event, gi, hi, *h.Timeout)
					}
					timeout = time.Duration(*h.Timeout * float64(time.Second))
				}
				set.hooks = append(set.hooks, Hook{Event: event, Matcher: g.Matcher, Command: h.Command, Timeout: timeout, Source: source, re: re})
			}
		}
	}
	for k := range top {
		if !slices.Contains(Events, k) {
			return nil, fmt.Errorf("hooks: unknown event %q (pid's are %v)", k, Events)
		}
	}
	if len(set.hooks) == 0 {
		return nil, nil
	}
	return set, nil
}

// Input is what a hook reads on stdin, as JSON.
type Input struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	TranscriptPath string          `json:"transcript_path"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   *ToolResponse   `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	Source         string          `json:"source,omitempty"`  // SessionStart: "startup", "load" or "resume"
	Trigger        string          `json:"trigger,omitempty"` // PreCompact: "manual" or "auto"
	StopHookActive bool            `json:"stop_hook_active,omitempty"`
}

// ToolResponse is a call's result, for PostToolUse.
type ToolResponse struct {
	Content any  `json:"content"`
	Details any  `json:"details"`
	IsError bool `json:"isError"`
}

// Result is what one hook did.
type Result struct {
	Hook     Hook
	ExitCode int // -1 when it did not exit by itself (killed, or failed to start)
	// Stdout and Stderr are the first MaxOutput bytes the hook wrote to each; the
	// *Dropped fields count the bytes past them, which were read and thrown away.
	Stdout, Stderr               []byte
	StdoutDropped, StderrDropped int64
	// Err says why the hook failed (it could not start, timed out, was cancelled, or exited
	// with a code other than 0 and 2); nil otherwise.
	Err error
	// Duration is how long it ran.
	Duration time.Duration
}

// Blocked reports whether the hook exited with code 2 (it blocks; stderr is the reason).
func (r *Result) Blocked() bool { return r.Err == nil && r.ExitCode == 2 }

// Reason returns a blocking hook's reason: its stderr, trimmed (else a sentence naming it).
func (r *Result) Reason() string {
	if s := string(bytes.TrimSpace(r.Stderr)); s != "" {
		return s
	}
	return fmt.Sprintf("blocked by the hook %q", r.Hook.Command)
}

// ErrTimeout is wrapped by a Result's Err when the hook ran past its timeout.
var ErrTimeout = errors.New("timed out")

// Run runs one hook: `sh -c COMMAND` in dir, leading a process group of its own, with env
// (PID_PROJECT_DIR among it) and in as JSON on stdin. The group is killed when the hook runs
// past its timeout or ctx ends. Contract: safe for concurrent use; it returns once the
// hook's process has exited; it never panics on a hook's output.
func Run(ctx context.Context, h Hook, in Input, dir string, env []string) Result {
	res := Result{Hook: h, ExitCode: -1}
	stdin, err := json.Marshal(in)
	if err != nil {
		res.Err = err
		return res
	}
	cmd := exec.Command("/bin/sh", "-c", h.Command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A process the hook leaves behind holding its output does not hold up its end.
	cmd.WaitDelay = time.Second
	start := time.Now()
	g, err := procgroup.StartGroup(cmd)
	if err != nil {
		res.Err = fmt.Errorf("could not start: %w", err)
		return res
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	waited := make(chan error, 1)
	go func() { waited <- g.Wait() }()
	var why error
	select {
	case err = <-waited:
	case <-timer.C:
		why = fmt.Errorf("%w after %s (killed)", ErrTimeout, timeout)
	case <-ctx.Done():
		why = fmt.Errorf("cancelled (killed): %w", ctx.Err())
	}
	if why != nil {
		g.Signal(syscall.SIGKILL)
		<-waited
	} else {
		// Whatever the hook left running in its group goes with it.
		g.Signal(syscall.SIGKILL)
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.kept, stderr.kept
	res.StdoutDropped, res.StderrDropped = stdout.dropped(), stderr.dropped()
	if why != nil {
		res.Err = why
		return res
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		res.Err = err
		return res
	}
	if res.ExitCode != 0 && res.ExitCode != 2 {
		res.Err = fmt.Errorf("exited with code %d%s", res.ExitCode, stderrNote(res.Stderr))
	}
	return res
}

// stderrNote returns ": STDERR" (its first 500 bytes) when stderr has text.
func stderrNote(b []byte) string {
	s := bytes.TrimSpace(b)
	if len(s) == 0 {
		return ""
	}
	if len(s) > 500 {
		s = append(s[:500:500], "..."...)
	}
	return ": " + string(s)
}

// capped keeps the first MaxOutput bytes written to it and counts the rest. It has no
// ReadFrom (a bytes.Buffer's would read a hook's whole output past the cap: os/exec copies
// with io.Copy, which prefers it).
type capped struct {
	kept  []byte
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := MaxOutput - len(c.kept); room > 0 {
		c.kept = append(c.kept, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// dropped returns how many bytes were counted and not kept.
func (c *capped) dropped() int64 { return c.total - int64(len(c.kept)) }

// Env returns the environment a hook runs with: pid's, with PID_PROJECT_DIR set to the
// workspace folder.
func Env(projectDir string) []string {
	env := os.Environ()
	out := env[:0:0]
	for _, e := range env {
		if len(e) >= 16 && e[:16] == "PID_PROJECT_DIR=" {
			continue
		}
		out = append(out, e)
	}
	return append(out, "PID_PROJECT_DIR="+projectDir)
}

// Output is what a hook's JSON stdout may say, every event's fields together (docs/hooks.md).
type Output struct {
	// Decision is "block" (or, for PreToolUse's older shape, "approve"); Reason says why.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Cut returns, when the hook wrote more than MaxOutput bytes to stdout or stderr, a
// sentence saying how much was kept and dropped; "" otherwise.
func (r *Result) Cut() string {
	var parts []string
	if r.StdoutDropped > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes to stdout", int64(len(r.Stdout))+r.StdoutDropped))
	}
	if r.StderrDropped > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes to stderr", int64(len(r.Stderr))+r.StderrDropped))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the hook %q wrote %s; pid kept the first %d bytes of each and dropped the rest", r.Hook.Command, strings.Join(parts, " and "), MaxOutput)
}

// Output returns the hook's stdout decoded, when it exited 0 and printed a JSON object (as
// far as it was kept: a JSON object cut at MaxOutput is no JSON object).
func (r *Result) Output() (Output, bool) {
	var o Output
	if r.Err != nil || r.ExitCode != 0 {
		return o, false
	}
	out := bytes.TrimSpace(r.Stdout)
	if len(out) == 0 || out[0] != '{' || json.Unmarshal(out, &o) != nil {
		return Output{}, false
	}
	return o, true
}

// Context returns what the hook adds to the model's context: its JSON's additionalContext,
// or, for a hook that exited 0 without JSON, its stdout trimmed ("" when none).
func (r *Result) Context() string {
	if o, ok := r.Output(); ok {
		return o.Specific.AdditionalContext
	}
	if r.Err == nil && r.ExitCode == 0 {
		return strings.TrimSpace(string(r.Stdout))
	}
	return ""
}

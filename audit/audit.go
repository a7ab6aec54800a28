// Package audit keeps pid's audit log: one JSON line per executed, denied or blocked call,
// appended to a file under the XDG state folder, with secrets redacted and long values cut.
// Open is the entry point; Log.Hook records executed calls as an afterToolCall hook (R11),
// chained last so it sees the final result; Starts remembers when calls started so the log
// can say how long they took, and writes the hook's line once the call's ToolEnd has gone
// out (Starts.Later); Decisions keeps what was decided about a call until its line is
// written, and Refused is the entry of a call that will not run (decisions.go).
// docs/permissions.md describes the log's format for users.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/redact"
	"github.com/pid-agent/pid/toolexec"
)

// Entry is one line of the audit log.
type Entry struct {
	Time       time.Time       `json:"time"` // when the call was finalized, UTC, RFC 3339 with nanoseconds
	Session    string          `json:"session"`
	Tool       string          `json:"tool"`
	ToolCallID string          `json:"toolCallId"`
	Args       json.RawMessage `json:"args"`
	IsError    bool            `json:"isError"`
	// Decision is what was decided before the call: "allow" (it ran), "deny" (it did not),
	// or "aborted" (the run was cancelled while the user was asked); "" when unknown.
	Decision string `json:"decision,omitempty"`
	// DecidedBy says who decided: "user" (the editor's answer), "remembered", the policy
	// source ("built-in", "session", "user settings /path", ...) with the bash part that
	// decided, or why nobody could ("no answer from the editor"). Writers pass it through
	// SanitizeText, as the hook does: the bash part may hold a secret.
	DecidedBy string `json:"decidedBy,omitempty"`
	// DurationMs is the whole milliseconds since the call started (see Starts); absent when
	// the start is unknown.
	DurationMs *int64 `json:"durationMs,omitempty"`
	// SandboxReverted are the protected paths the check after a sandboxed command removed
	// or put back (the result's details.sandbox.reverted).
	SandboxReverted []string `json:"sandboxReverted,omitempty"`
}

// reverter is what a result's details implement when the check after a sandboxed command
// put protected paths back (tools.BashDetails).
type reverter interface{ SandboxReverted() []string }

// Log appends entries to one file. Lines of concurrent writers never interleave: each
// line is one write(2) on a file opened with O_APPEND, under a mutex (other pid processes
// appending to the same file rely on O_APPEND alone).
type Log struct {
	path string

	// mu guards f and serializes writes.
	mu sync.Mutex
	f  *os.File // nil once closed
}

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("audit: the audit log is closed")

// DefaultPath returns $XDG_STATE_HOME/pid/audit.log, or ~/.local/state/pid/audit.log
// when XDG_STATE_HOME is unset or not absolute. It reads the environment only; it fails when
// neither XDG_STATE_HOME nor the home folder is known.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("audit: no state folder: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "pid", "audit.log"), nil
}

// Open opens (creating it with mode 0600, its folders with 0700) the log at path; ""
// means DefaultPath. An existing file keeps its content and gets mode 0600.
//
// Contract: called once at startup; the Log is safe for concurrent use. Close it at
// shutdown.
func Open(path string) (*Log, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &Log{path: path, f: f}, nil
}

// Path returns the log's file. Safe for concurrent use.
func (l *Log) Path() string { return l.path }

// Record appends one entry as one line. A zero Time means now; empty Args are written as {}.
//
// Contract: safe for concurrent use; it blocks only for one write. It returns ErrClosed after
// Close, or the write's error (the line is then absent or, on a short write, cut).
func (l *Log) Record(e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	if len(e.Args) == 0 {
		e.Args = json.RawMessage(`{}`)
	} else if !json.Valid(e.Args) {
		q, _ := json.Marshal(string(e.Args)) // keep what was sent, as a string
		e.Args = q
	}
	line, err := json.Marshal(e) // compacts Args: the line has no newline inside
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("audit: writing %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file; later Records fail with ErrClosed. Called once at shutdown, after
// the sessions' batches ended (a Record racing with Close fails cleanly). Idempotent; returns
// the file's close error.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Options configures the audit hook of one session.
type Options struct {
	Session string
	// Started returns when a call started (Starts.Started); nil, or a call it does not know,
	// leaves durationMs out.
	Started func(toolCallID string) (time.Time, bool)
	// Redactor, when set, redacts string values of the arguments before they are logged.
	Redactor *redact.Redactor
	// MaxString caps each string value of the arguments, in bytes (longer ones are cut and
	// marked); 0 means 2048, negative means no cap.
	MaxString int
	// OnError receives a failure to write the log (the call's result is never affected).
	// May be nil; must not block.
	OnError func(error)
	// Decision, when set, returns what was decided before the call ran and by whom (and
	// forgets it); the entry then carries decision and decidedBy.
	Decision func(toolCallID string) (decision, by string, ok bool)
	// Later, when set, takes the writing of a call's line (Starts.Later): the hook then
	// builds the entry (its time, result and duration as the hook sees them) but the line is
	// written once the call's ToolEnd has gone to the editor, off the path of the answer
	// the editor waits for. Nil writes it in the hook.
	Later func(toolCallID string, write func())
}

// Hook returns the audit rule as an afterToolCall hook: it records the call (arguments,
// isError as the hooks before it in the chain left it, duration) and returns nil, so the
// result never changes.
//
// Contract: called by toolexec after a call executed, concurrently for different calls; it
// blocks only for one write and always returns (nil, nil): a write failure goes to OnError.
func (l *Log) Hook(o Options) toolexec.AfterHook {
	maxString := o.MaxString
	if maxString == 0 {
		maxString = 2048
	}
	return func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		e := Entry{
			Time:       time.Now(),
			Session:    o.Session,
			Tool:       in.Call.Name,
			ToolCallID: in.Call.ID,
			Args:       sanitizeArgs(in.Call.Arguments, o.Redactor, maxString),
			IsError:    in.IsError,
		}
		if r, ok := in.Result.Details.(reverter); ok {
			e.SandboxReverted = r.SandboxReverted()
		}
		if o.Decision != nil {
			if d, by, ok := o.Decision(in.Call.ID); ok {
				e.Decision, e.DecidedBy = d, sanitizeText(by, o.Redactor, maxString)
			}
		}
		if o.Started != nil {
			if t, ok := o.Started(in.Call.ID); ok {
				ms := time.Since(t).Milliseconds()
				e.DurationMs = &ms
			}
		}
		write := func() {
			if err := l.Record(e); err != nil && o.OnError != nil {
				o.OnError(err)
			}
		}
		if o.Later != nil {
			o.Later(in.Call.ID, write)
		} else {
			write()
		}
		return nil, nil
	}
}

// SanitizeArgs returns a call's arguments as the audit hook logs them: secrets redacted (when
// r is set), long strings cut at 2048 bytes. For a daemon that records entries itself (a
// denied call). Pure; safe for concurrent use.
func SanitizeArgs(raw json.RawMessage, r *redact.Redactor) json.RawMessage {
	return sanitizeArgs(raw, r, 2048)
}

// SanitizeText returns a text field of an entry (decidedBy, which may quote the bash part
// that decided) as the log keeps it: secrets redacted (when r is set) as in the arguments,
// cut at 2048 bytes. Pure; safe for concurrent use.
func SanitizeText(s string, r *redact.Redactor) string { return sanitizeText(s, r, 2048) }

// sanitizeText redacts s (when r is set) and cuts it at maxString bytes (when positive),
// marking a cut as sanitizeArgs does.
func sanitizeText(s string, r *redact.Redactor, maxString int) string {
	if r != nil {
		s, _ = r.Redact(s)
	}
	if maxString > 0 && len(s) > maxString {
		cut := maxString
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s…[%d bytes]", s[:cut], len(s))
	}
	return s
}

// sanitizeArgs returns the arguments to log: as sent, unless a string value holds a secret
// (redacted) or is longer than maxString bytes (cut, with "…[N bytes]" appended); then the
// arguments are re-encoded (object keys sorted). Arguments that are not JSON are returned
// as they are (Record logs them as a string).
func sanitizeArgs(raw json.RawMessage, r *redact.Redactor, maxString int) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			s := sanitizeText(x, r, maxString)
			changed = changed || s != x
			return s
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// Starts remembers when tool calls of one session started, for the audit hook's duration.
// Its Sink marks each call at its ToolStart event and forgets it at its ToolEnd (which comes
// after the afterToolCall hooks), so it holds only calls in flight. The duration therefore
// includes preparing the call and waiting for approval; a daemon that wants the run time only
// calls Mark when its beforeToolCall hook lets the call run.
type Starts struct {
	// mu guards m and later.
	mu sync.Mutex
	m  map[string]time.Time
	// later holds the audit lines waiting for their call's ToolEnd (see Later).
	later map[string]func()
}

// NewStarts returns an empty Starts, one per session.
func NewStarts() *Starts { return &Starts{m: map[string]time.Time{}, later: map[string]func(){}} }

// Later keeps write, a call's audit line, until the call's ToolEnd has been passed on by
// Sink (it comes after the afterToolCall hooks, so every line kept is written), and then
// runs it on the goroutine that passed the event on, before Sink returns: the line is in
// the log before anything after the call's end (the batch's result, the response to the
// prompt) but after the editor's toolEnd. Safe for concurrent use.
func (s *Starts) Later(toolCallID string, write func()) {
	s.mu.Lock()
	prev := s.later[toolCallID]
	s.later[toolCallID] = write
	s.mu.Unlock()
	if prev != nil { // a second end for one id: the first line is not lost
		prev()
	}
}

// Mark records that a call starts now (replacing an earlier mark). Safe for concurrent use.
func (s *Starts) Mark(toolCallID string) {
	s.mu.Lock()
	s.m[toolCallID] = time.Now()
	s.mu.Unlock()
}

// Started returns when a call was marked. Safe for concurrent use.
func (s *Starts) Started(toolCallID string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[toolCallID]
	return t, ok
}

// Forget drops a call's mark. Safe for concurrent use.
func (s *Starts) Forget(toolCallID string) {
	s.mu.Lock()
	delete(s.m, toolCallID)
	s.mu.Unlock()
}

// Len returns how many calls are marked. Safe for concurrent use.
func (s *Starts) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Sink returns an event.Sink that marks calls at ToolStart and forgets them at ToolEnd, then
// passes every event to next (which may be nil), and after passing on a ToolEnd writes the
// call's audit line kept by Later. It keeps event.Sink's contract: it does not block beyond
// a map update and that one write, and keeps nothing of the events but the ids.
func (s *Starts) Sink(next event.Sink) event.Sink {
	return func(ev event.Event) {
		var write func()
		switch e := ev.(type) {
		case event.ToolStart:
			s.Mark(e.ToolCallID)
		case event.ToolEnd:
			s.mu.Lock()
			delete(s.m, e.ToolCallID)
			write = s.later[e.ToolCallID]
			delete(s.later, e.ToolCallID)
			s.mu.Unlock()
		}
		if next != nil {
			next(ev)
		}
		if write != nil {
			write()
		}
	}
}

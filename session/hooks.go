// This file applies the person's hooks (package hooks) at the pipeline's moments:
// PreToolUse screens each validated call (toolexec's Screen stage, concurrently across a
// batch's calls), PostToolUse runs in the afterToolCall chain, UserPromptSubmit before a
// prompt's user message is added, Stop when the model would end the run, SessionStart when
// a session is made, loaded or resumed, PreCompact before a compaction. docs/hooks.md says
// what each decides.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/hooks"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
)

// maxStopBlocks is how many times in a row Stop hooks may keep one prompt's run going.
const maxStopBlocks = 5

// hookState is the session's hooks. own is set by build, then only read; the rest is
// touched by the run's goroutine (stops) and by the goroutine SessionStart runs on.
type hookState struct {
	// own is the session's own hooks (session/new's "hooks"); nil when none.
	own *hooks.Set
	// cache is the set hookSet made last.
	cache atomic.Pointer[hookSnapshot]
	// stops counts the Stop hooks' blocks in a row in the running prompt.
	stops int

	// start is the SessionStart hooks' run, which closing the session stops.
	start hooks.StartRun
}

// HookInfo is one configured hook, as hooks/list shows it.
type HookInfo struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Source  string `json:"source"`
}

// hookSet returns the hooks that apply now: the user settings', the workspace's when its
// folder is trusted (an untrusted folder's never run), the session's own. The set is made
// again only when the settings changed (a reload gives new values).
func (s *Session) hookSet() *hooks.Set {
	var u, w json.RawMessage
	trusted := false
	if l := s.host.loader; l != nil {
		u, w, trusted = l.Hooks(s.ws.Cwd())
	}
	if c := s.hooks.cache.Load(); c != nil && sameBytes(c.user, u) && sameBytes(c.workspace, w) && c.trusted == trusted {
		return c.set
	}
	user, _ := hooks.Parse(u, "user")
	var ws *hooks.Set
	if trusted {
		ws, _ = hooks.Parse(w, "workspace")
	}
	set := hooks.Join(user, ws, s.hooks.own)
	s.hooks.cache.Store(&hookSnapshot{user: u, workspace: w, trusted: trusted, set: set})
	return set
}

// hookSnapshot is the hooks made from one version of the settings.
type hookSnapshot struct {
	user, workspace json.RawMessage
	trusted         bool
	set             *hooks.Set
}

// sameBytes reports whether a and b are the same slice (the loader gives the same slice
// until it reloads).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// screens reports whether the session has PreToolUse hooks now (toolexec screens a batch's
// calls only then, so that a session without them keeps the pipeline's order as it was).
func (s *Session) screens() bool { return s.hookSet().Has(hooks.PreToolUse) }

// Hooks returns the hooks that apply to the session now, in the order they run.
func (s *Session) Hooks() []HookInfo {
	out := []HookInfo{}
	for _, h := range s.hookSet().All() {
		out = append(out, HookInfo{Event: h.Event, Matcher: h.Matcher, Command: h.Command, Source: h.Source})
	}
	return out
}

// hookInput returns the input every hook of the session gets.
func (s *Session) hookInput(event string) hooks.Input {
	in := hooks.Input{SessionID: s.id, Cwd: s.ws.Cwd(), HookEventName: event}
	s.saved.mu.Lock()
	if s.saved.file != nil {
		in.TranscriptPath = s.saved.file.Path()
	}
	s.saved.mu.Unlock()
	return in
}

// runHook runs one hook, and reports a failed one to the editor and the audit log.
func (s *Session) runHook(ctx context.Context, h hooks.Hook, in hooks.Input, callID string) hooks.Result {
	project := s.ws.Cwd()
	if roots := s.ws.Roots(); len(roots) > 0 {
		project = roots[0]
		for _, r := range roots {
			if within(s.ws.Cwd(), r) {
				project = r
			}
		}
	}
	r := hooks.Run(ctx, h, in, s.ws.Cwd(), hooks.Env(project))
	if cut := r.Cut(); cut != "" {
		s.face.Warn(s, fmt.Sprintf("%s (a %s hook; a JSON answer cut there is not read)", cut, h.Event))
	}
	if r.Err != nil && ctx.Err() == nil {
		s.face.Warn(s, fmt.Sprintf("the %s hook %q failed (%v); pid went on without it", h.Event, h.Command, r.Err))
		s.auditHook(h, callID, in.ToolName, "failed", r.Err.Error())
	}
	return r
}

// within reports whether p is root or under it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// auditHook writes a hook's decision to the audit log.
func (s *Session) auditHook(h hooks.Hook, callID, tool, decision, reason string) {
	a := s.host.audit
	if a == nil {
		return
	}
	by := fmt.Sprintf("%s hook %q (%s)", h.Event, h.Command, h.Source)
	if reason != "" {
		by += ": " + reason
	}
	if tool == "" {
		tool = "(" + h.Event + ")"
	}
	err := a.Record(audit.Entry{Session: s.id, Tool: tool, ToolCallID: callID, Args: json.RawMessage("{}"),
		Decision: "hook " + decision, DecidedBy: audit.SanitizeText(by, s.host.redactor)})
	if err != nil {
		s.host.log.Warn("audit log", "err", err)
	}
}

// hookRunner is the session's hooks as package hooks runs them: the hooks of now, the
// session's input, failures told and audited, decisions audited.
func (s *Session) hookRunner() hooks.Runner {
	return hooks.Runner{Hooks: s.hookSet, Input: s.hookInput, Run: s.runHook, Audit: s.auditHook}
}

// preToolUse is the session's toolexec.ScreenHook: the PreToolUse hooks (hooks.Runner).
func (s *Session) preToolUse(ctx context.Context, in toolexec.ScreenInput) (*toolexec.Screening, error) {
	return s.hookRunner().PreToolUse(ctx, in.Call, in.Args)
}

// userPromptSubmit runs the UserPromptSubmit hooks for a prompt, after the SessionStart
// hooks' context is in: a block refuses it (ErrFailed, saying which hook and why); their
// context is added to the prompt's last user message. It returns the prompts to run.
func (s *Session) userPromptSubmit(ctx context.Context, prompts []llm.Message) ([]llm.Message, error) {
	var extra []string
	if start := s.sessionStartContext(ctx); start != "" {
		extra = append(extra, start)
	}
	out, err := s.hookRunner().UserPromptSubmit(ctx, prompts, prompt.TextOf(prompts), extra)
	var pb *hooks.PromptBlocked
	if errors.As(err, &pb) {
		return nil, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	return out, err
}

// beforeStop is the loop's BeforeStop: the Stop hooks, which may keep the run going with
// their reason as a new user message, at most maxStopBlocks times in a row per prompt.
func (s *Session) beforeStop(ctx context.Context, _ *llm.Message) []llm.Message {
	if s.hooks.stops >= maxStopBlocks || !s.hookSet().Has(hooks.Stop) {
		return nil
	}
	reason := s.hookRunner().Stop(ctx, s.hooks.stops > 0)
	if reason == "" {
		return nil
	}
	s.hooks.stops++
	return []llm.Message{llm.NewUser(reason)}
}

// startSessionHooks runs the SessionStart hooks in the background (source: "startup",
// "load" or "resume"); what they print is added to the next prompt. The run belongs to the
// session: stopSessionHooks, when it closes, kills the hooks still running and waits.
func (s *Session) startSessionHooks(source string) {
	s.hooks.start.Start(s.hookSet().Has(hooks.SessionStart), func(ctx context.Context) []string {
		return s.hookRunner().SessionStart(ctx, source)
	})
}

// stopSessionHooks kills the SessionStart hooks still running and waits until their run
// has ended. Called when the session closes, after its last run ended.
func (s *Session) stopSessionHooks() { s.hooks.start.Stop() }

// sessionStartContext waits for the SessionStart hooks (or ctx) and returns what they said,
// once: the first prompt after them gets it.
func (s *Session) sessionStartContext(ctx context.Context) string {
	return s.hooks.start.Context(ctx)
}

// preCompactHooks runs the PreCompact hooks before a compaction made for reason; it returns
// why an automatic one is cancelled ("" to go on; a manual one always goes on).
func (s *Session) preCompactHooks(ctx context.Context, reason string) string {
	if !s.hookSet().Has(hooks.PreCompact) {
		return ""
	}
	trigger := "auto"
	if reason == ReasonManual {
		trigger = "manual"
	}
	why := s.hookRunner().PreCompact(ctx, trigger)
	if trigger == "manual" {
		return ""
	}
	return why
}

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

	"github.com/pid-agent/pid/hooks"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
)

// hookState is the session's hooks. own is set by build, then only read; the rest is
// touched by the run's goroutine (stops) and by the goroutine SessionStart runs on.
type hookState struct {
	// own is the session's own hooks (session/new's "hooks"); nil when none.
	own *hooks.Set
	// cache is the set hookSet made last.
	cache hooks.Cache
	// stops counts the Stop hooks' blocks in a row in the running prompt.
	stops int

	// start is the SessionStart hooks' run, which closing the session stops.
	start hooks.StartRun
}

// HookInfo is one configured hook, as hooks/list shows it.
type HookInfo = hooks.Info

// hookSet returns the hooks that apply now: the user settings', the workspace's when its
// folder is trusted (an untrusted folder's never run), the session's own. The set is made
// again only when the settings changed (a reload gives new values; hooks.Cache).
func (s *Session) hookSet() *hooks.Set {
	var u, w json.RawMessage
	trusted := false
	if l := s.host.loader; l != nil {
		u, w, trusted = l.Hooks(s.ws.Cwd())
	}
	return s.hooks.cache.Current(u, w, trusted, s.hooks.own)
}

// screens reports whether the session has PreToolUse hooks now (toolexec screens a batch's
// calls only then, so that a session without them keeps the pipeline's order as it was).
func (s *Session) screens() bool { return s.hookSet().Has(hooks.PreToolUse) }

// Hooks returns the hooks that apply to the session now, in the order they run.
func (s *Session) Hooks() []HookInfo { return s.hookSet().Infos() }

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
	r := hooks.Run(ctx, h, in, s.ws.Cwd(), hooks.Env(hooks.ProjectDir(s.ws.Cwd(), s.ws.Roots())))
	if cut := r.Cut(); cut != "" {
		s.face.Warn(s, fmt.Sprintf("%s (a %s hook; a JSON answer cut there is not read)", cut, h.Event))
	}
	if r.Err != nil && ctx.Err() == nil {
		s.face.Warn(s, fmt.Sprintf("the %s hook %q failed (%v); pid went on without it", h.Event, h.Command, r.Err))
		s.auditHook(h, callID, in.ToolName, "failed", r.Err.Error())
	}
	return r
}

// auditHook writes a hook's decision to the audit log (hooks.AuditEntry).
func (s *Session) auditHook(h hooks.Hook, callID, tool, decision, reason string) {
	a := s.host.audit
	if a == nil {
		return
	}
	if err := a.Record(hooks.AuditEntry(h, s.id, callID, tool, decision, reason, s.host.redactor)); err != nil {
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
// their reason as a new user message, at most hooks.MaxStopBlocks times in a row per prompt.
func (s *Session) beforeStop(ctx context.Context, _ *llm.Message) []llm.Message {
	if !s.hookSet().Has(hooks.Stop) {
		return nil
	}
	if reason := s.hookRunner().KeepGoing(ctx, &s.hooks.stops); reason != "" {
		return []llm.Message{llm.NewUser(reason)}
	}
	return nil
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
	return s.hookRunner().PreCompact(ctx, reason == ReasonManual)
}

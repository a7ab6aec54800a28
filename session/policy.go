// This file decides which tool calls run, ask or are refused (the session's beforeToolCall:
// what the session knows of a call goes to package gate, which decides, and the person is
// asked when it says so), and builds the afterToolCall chain (the face's hook, redaction,
// the audit log).

package session

import (
	"context"
	"fmt"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/gate"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// kinds is what the gate knows of the session's tools.
func (s *Session) kinds() gate.Tools { return gate.Tools{Builtin: s.builtin, Asks: s.asks} }

// verdict decides a call from the settings files, the session's permissions, the tools'
// nature and the remembered answers (see docs/permissions.md). A built-in file tool's path
// is decided twice when it leads elsewhere through a symbolic link: as written and where it
// leads (tools.Workspace.Leads), and the stricter verdict wins, so that no rule on paths is
// passed by a link (docs/x.md -> ../.envrc is not allowed by "docs/**", and a deny rule on
// secrets/** still denies a link into it).
func (s *Session) verdict(call llm.ToolCall) permissions.Verdict {
	return gate.Verdict(call, s.builtin[call.Name], s.ws.Cwd(), s.ws.Leads, s.verdictOn)
}

// verdictOn is verdict for the call as given.
func (s *Session) verdictOn(call llm.ToolCall) permissions.Verdict {
	h := s.host
	var base *permissions.Policy
	if h.loader != nil {
		base = h.loader.Policy(s.policyCwd())
	}
	pol := base.With(s.kinds().ReadOnly, permissions.Layer{Source: "session", Spec: s.spec})
	c := permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: s.ws.Cwd()}
	v := permissions.Check(pol, h.store, s.root(), c)
	if v.Decision == permissions.Ask {
		if r, ok := s.memory.Lookup(s.root(), c); ok {
			v = permissions.Verdict{Decision: r.Decision, Source: "remembered", Rule: -1, Remembered: &r}
		}
	}
	return v
}

// always returns what an "always" answer to call would cover (gate.ScopeOf), or nil.
func (s *Session) always(call llm.ToolCall) *Always {
	return gate.ScopeOf(call, s.builtin[call.Name], s.ws.Cwd())
}

// root is the workspace folder the session's remembered answers belong to: the innermost one
// holding its working folder, else the working folder.
func (s *Session) root() string { return s.folderOf(s.ws.Cwd()) }

// beforeToolCall is the session's toolexec.BeforeHook. Contract as there: it waits for the
// person without a timeout and gives up when ctx ends. Any failure to get an answer denies
// the call with a reason the model can read. Every decision goes to the audit log: a blocked
// call at once, an allowed one when it has run (the audit hook reads it back).
func (s *Session) beforeToolCall(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
	b, d := s.decide(ctx, in)
	switch {
	case b != nil:
		s.auditBlocked(in.Call, d)
	case s.host.audit != nil:
		s.decisions.Note(in.Call.ID, d.Decision, d.By) // dropped at the call's end if the hook did not run
	}
	return b, nil
}

// decision is what was decided about a call and who decided it, for the audit log.
type decision = gate.Decided

// decide is beforeToolCall's body: what is known of the call goes to gate.Decide, and the
// person is asked when it says so.
func (s *Session) decide(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, decision) {
	name := in.Call.Name
	s.noteWriters(in)
	if b := s.taskOverCap(in); b != nil {
		return b, decision{Decision: "deny", By: fmt.Sprintf("at most %d task calls per message", task.MaxCalls)}
	}
	if name == ExitPlanModeName && !s.builtin[name] {
		if _, scripted := s.asks[name]; !scripted {
			return s.decideExitPlan(ctx, in)
		}
	}
	// Everything is decided on what will run: the arguments a PreToolUse hook put in the
	// model's place, when one did.
	call := in.Call
	if in.ReplacedBy != "" && len(in.Prepared) > 0 {
		call.Arguments = in.Prepared
	}
	esc := s.escalation(call)
	mode := s.Mode()
	// An MCP tool's annotations (its server's status, under the catalogue's lock) are read
	// at most once: for plan mode's check and for the question.
	var ann map[string]any
	read := false
	annotations := func(string) map[string]any {
		if !read {
			ann, read = s.annotations(name), true
		}
		return ann
	}
	gc := gate.Call{
		Name: name, Verdict: s.verdict(call), Mode: mode, Screened: in.Screened,
		Escalates: esc != nil, HookEscalates: esc != nil && s.escalation(in.Call) == nil,
		ChangesFiles: s.kinds().ChangesFiles(name), Bash: name == tools.NameBash && s.builtin[name],
		MCPMayChange:         mode == ModePlan && s.kinds().MCPMayChange(name, annotations),
		EditInside:           func() bool { return modes.InsideWorkspace(s.ws, call) },
		BashSandboxed:        func() bool { return s.ws.BashSandboxed(false) },
		RememberedEscalation: func() (permissions.Decision, bool) { return s.rememberedEscalation(call) },
	}
	b, d, ask := gate.Decide(gc)
	if !ask {
		return b, d
	}
	always := gate.Offer(gc, func() *Always { return s.always(call) }, func() *Always { return escalationScope(call) })
	q := Approval{Call: call, Always: always, Annotations: annotations(name), Escalation: esc}
	put := func(q Approval) (Answer, error) { return s.face.Ask(ctx, s, q) }
	b, d, remember := gate.Put(q, put, func() bool { return ctx.Err() != nil }, func(w string) { s.face.Warn(s, w) })
	switch {
	case remember == "":
	case esc != nil:
		s.rememberEscalation(q, remember)
	default:
		s.remember(q, remember)
	}
	return b, d
}

// auditBlocked writes a call that will not run to the audit log.
func (s *Session) auditBlocked(call llm.ToolCall, d decision) {
	h := s.host
	if h.audit == nil {
		return
	}
	if err := h.audit.Record(audit.Refused(s.id, call, d.Decision, d.By, h.redactor)); err != nil {
		h.log.Warn("audit log", "err", err)
	}
}

// remember keeps an "always" answer exactly as q.Always scoped it (gate.Remember): in the
// store, else in the session's memory, never wider; the face is told when it counted for
// this call only.
func (s *Session) remember(q Approval, d permissions.Decision) {
	for _, w := range gate.Remember(q, d, s.root(), s.host.store, s.memory) {
		s.face.Warn(s, w)
	}
}

// afterHook is the session's afterToolCall chain: the face's hook when it has one, then the
// redaction of secrets (content only), then the audit log (no change; its line is written
// once the call's toolEnd has gone out: Starts.Later).
func (s *Session) afterHook(face func(context.Context, *Session, AfterInput) (*Override, error)) toolexec.AfterHook {
	h := s.host
	var hooks []toolexec.AfterHook
	if face != nil {
		hooks = append(hooks, func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
			o, err := face(ctx, s, AfterInput{Call: in.Call, Content: in.Result.Content, Details: in.Result.Details, IsError: in.IsError})
			if o == nil || err != nil {
				return nil, err
			}
			return &toolexec.Override{Content: o.Content, Details: o.Details, IsError: o.IsError, Terminate: o.Terminate}, nil
		})
	}
	if h.redactor != nil {
		hooks = append(hooks, h.redactor.Hook())
	}
	// The person's PostToolUse hooks see the redacted result (hooks.go).
	hooks = append(hooks, s.hookRunner().PostToolUse)
	if h.audit != nil {
		hooks = append(hooks, h.audit.Hook(audit.Options{
			Session: s.id, Started: s.starts.Started, Later: s.starts.Later, Redactor: h.redactor, Decision: s.decisions.Take,
			OnError: func(err error) { h.log.Warn("audit log", "err", err) },
		}))
	}
	if len(hooks) == 0 {
		return nil
	}
	return toolexec.ChainAfter(hooks...)
}

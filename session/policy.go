// This file decides which tool calls run, ask or are refused (the session's beforeToolCall),
// and builds the afterToolCall chain (the face's hook, redaction, the audit log).

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/webfetch"
)

// readOnly reports whether a tool of the session only reads: built-in read-only tools, and
// scripted tools that do not require approval. The policy's built-in default allows those
// and asks for the rest.
func (s *Session) readOnly(tool string) bool {
	if tool == TodoWriteName && s.builtin[tool] {
		return true // it changes the session's plan, nothing outside the session
	}
	if tool == SkillName && s.builtin[tool] {
		return true // it reads the person's skills
	}
	if tool == TaskName && s.builtin[tool] {
		return true // it starts a subagent, whose own calls are decided one by one
	}
	if tool == webfetch.Name && s.builtin[tool] {
		return true // it reads the web; its question is the network's (network.go)
	}
	if s.builtin[tool] {
		// job_kill too: it stops only what the session itself started.
		return tools.ReadOnly(tool) || tools.RunsWithoutAsking(tool)
	}
	if tool == ToolSearchName {
		return true // it searches the session's own list of tools
	}
	if need, scripted := s.asks[tool]; scripted {
		return !need
	}
	return false
}

// verdict decides a call from the settings files, the session's permissions, the tools'
// nature and the remembered answers (see docs/permissions.md). A built-in file tool's path
// is decided twice when it leads elsewhere through a symbolic link: as written and where it
// leads (tools.Workspace.Leads), and the stricter verdict wins, so that no rule on paths is
// passed by a link (docs/x.md -> ../.envrc is not allowed by "docs/**", and a deny rule on
// secrets/** still denies a link into it).
func (s *Session) verdict(call llm.ToolCall) permissions.Verdict {
	v := s.verdictOn(call)
	if led, rel, ok := s.ledCall(call); ok {
		if lv := s.verdictOn(led); strictness(lv.Decision) > strictness(v.Decision) {
			lv.Part = "through a link to " + rel
			v = lv
		}
	}
	return v
}

// strictness orders decisions: deny > ask > allow.
func strictness(d permissions.Decision) int {
	switch d {
	case permissions.Deny:
		return 2
	case permissions.Ask:
		return 1
	}
	return 0
}

// ledCall returns, for a built-in file tool whose path leads through a symbolic link to
// another place in the workspace, the same call on the path it leads to (absolute, under
// the workspace folder as given), and that path relative to its folder.
func (s *Session) ledCall(call llm.ToolCall) (llm.ToolCall, string, bool) {
	switch call.Name {
	case tools.NameRead, tools.NameWrite, tools.NameEdit, tools.NameGrep, tools.NameFind, tools.NameLs:
	default:
		return call, "", false
	}
	if !s.builtin[call.Name] {
		return call, "", false
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Arguments, &args) != nil {
		return call, "", false
	}
	var p string
	if json.Unmarshal(args["path"], &p) != nil || p == "" {
		return call, "", false
	}
	root, rel, ok := s.ws.Leads(p)
	if !ok {
		return call, "", false
	}
	led := filepath.Join(root, rel)
	asWritten := p
	if !filepath.IsAbs(asWritten) {
		asWritten = filepath.Join(s.ws.Cwd(), asWritten)
	}
	if filepath.Clean(asWritten) == led {
		return call, "", false
	}
	args["path"], _ = json.Marshal(led)
	out := call
	out.Arguments, _ = json.Marshal(args)
	return out, rel, true
}

// verdictOn is verdict for the call as given.
func (s *Session) verdictOn(call llm.ToolCall) permissions.Verdict {
	h := s.host
	var base *permissions.Policy
	if h.loader != nil {
		base = h.loader.Policy(s.policyCwd())
	}
	pol := base.With(s.readOnly, permissions.Layer{Source: "session", Spec: s.spec})
	c := permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: s.ws.Cwd()}
	v := permissions.Check(pol, h.store, s.root(), c)
	if v.Decision == permissions.Ask {
		if r, ok := s.memory.Lookup(s.root(), c); ok {
			v = permissions.Verdict{Decision: r.Decision, Source: "remembered", Rule: -1, Remembered: &r}
		}
	}
	return v
}

// always returns what an "always" answer to call would cover, or nil when no scope as narrow
// as the call can be given (a bash command with a substitution, say). Built-in tools are
// scoped to their argument (a command's first words, a file's path); other tools to the
// whole tool, which the description says.
func (s *Session) always(call llm.ToolCall) *Always {
	if !s.builtin[call.Name] {
		return &Always{Tool: call.Name, Description: fmt.Sprintf("every call of the tool %s in this workspace", call.Name)}
	}
	sc, ok := permissions.SuggestScope(permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: s.ws.Cwd()})
	if !ok {
		return nil
	}
	return &Always{Tool: sc.Tool, Pattern: sc.Pattern, Description: sc.Description, path: sc.Path}
}

// root is the workspace folder the session's remembered answers belong to.
func (s *Session) root() string {
	cwd := s.ws.Cwd()
	best := ""
	for _, r := range s.ws.Roots() {
		if (cwd == r || strings.HasPrefix(cwd, r+string(filepath.Separator))) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return cwd
	}
	return best
}

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
		s.decisions.Store(in.Call.ID, d) // dropped at the call's end if the hook did not run
	}
	return b, nil
}

// decision is what was decided about a call and who decided it, for the audit log.
type decision struct {
	Decision string // "allow", "deny" or "aborted"
	By       string // "user" (the editor's answer), "remembered", or the policy's source
}

// decide is beforeToolCall's body.
func (s *Session) decide(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, decision) {
	name := in.Call.Name
	s.noteWriters(in)
	if b := s.taskOverCap(in); b != nil {
		return b, decision{"deny", fmt.Sprintf("at most %d task calls per message", task.MaxCalls)}
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
	mode := s.Mode()
	v := s.verdict(call)
	by := v.Source
	if v.Part != "" {
		by += " (" + v.Part + ")"
	}
	esc := s.escalation(call)
	// A hook that takes a command out of the sandbox, where the model had left it in, asks
	// the person whatever anything else says: no hook, rule, mode or remembered answer
	// allows it.
	hookEscalation := esc != nil && s.escalation(in.Call) == nil
	// The order of docs/permissions.md's table: a deny, plan mode's refusal to change
	// files, an allow, the mode's own allowances, then the question.
	switch {
	case v.Decision == permissions.Deny && v.Source == "remembered":
		return &toolexec.Block{Reason: fmt.Sprintf("The user chose to always deny %s here.", name)}, decision{"deny", by}
	case v.Decision == permissions.Deny:
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s is denied by the permissions (%s).", name, v.Source)}, decision{"deny", by}
	case mode == ModePlan && s.changesFiles(name):
		return modes.PlanBlock(name), decision{"deny", "mode plan"}
	case mode == ModePlan && s.mcpMayChange(name):
		return modes.PlanBlockMCP(name), decision{"deny", "mode plan (an MCP tool not marked read-only)"}
	case in.Screened == "allow" && esc == nil:
		// A PreToolUse hook allowed it: no question, but never over a deny or plan mode.
		return nil, decision{"allow", "PreToolUse hook"}
	case in.Screened == "ask" && mode != ModeBypass:
		// A PreToolUse hook wants the person asked, whatever the rules and the mode allow.
	case v.Decision == permissions.Allow && esc == nil:
		return nil, decision{"allow", by}
	}
	if !hookEscalation {
		if mby, ok := s.modeAllows(mode, call, v, esc); ok && in.Screened != "ask" {
			return nil, decision{"allow", mby}
		}
	}
	if esc != nil && !hookEscalation {
		if d, ok := s.rememberedEscalation(call); ok {
			if d == permissions.Allow {
				return nil, decision{"allow", "remembered (outside the sandbox)"}
			}
			return &toolexec.Block{Reason: "The user chose to always deny running this command outside the sandbox here."}, decision{"deny", "remembered (outside the sandbox)"}
		}
	}
	q := Approval{Call: call, Always: s.always(call), Annotations: s.annotations(name), Escalation: esc}
	switch {
	case hookEscalation:
		q.Always = nil // never answered by a remembered answer: "always" would mean once
	case esc != nil:
		q.Always = escalationScope(call)
	}
	a, err := s.face.Ask(ctx, s, q)
	if err != nil {
		if ctx.Err() != nil {
			return &toolexec.Block{Reason: "Operation aborted"}, decision{"aborted", "cancelled while waiting for the user"}
		}
		s.face.Warn(s, fmt.Sprintf("approval request for %s failed: %v", in.Call.ID, err))
		reason := fmt.Sprintf("the editor did not answer the approval request (%v).", err)
		if r, ok := err.(interface{ Reason() string }); ok {
			reason = r.Reason()
		}
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: %s", name, reason)}, decision{"deny", "no answer from the editor"}
	}
	remember := s.remember
	if esc != nil {
		remember = s.rememberEscalation
	}
	switch a.Decision {
	case "allowAlways":
		remember(q, permissions.Allow)
		fallthrough
	case "allow":
		return nil, decision{"allow", "user"}
	case "denyAlways":
		remember(q, permissions.Deny)
		fallthrough
	case "deny":
		// The daemon frames the person's reason, whichever face asked: the model reads a
		// denial, never a bare reason that could pass for the tool's output.
		reason := fmt.Sprintf("The user denied this call of %s.", name)
		if r := strings.TrimSpace(a.Reason); r != "" {
			reason = fmt.Sprintf("The user denied this call of %s: %s", name, r)
		}
		return &toolexec.Block{Reason: reason}, decision{"deny", "user"}
	}
	return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: the editor answered the approval request with an unknown decision %q.", name, a.Decision)}, decision{"deny", "user (unknown answer)"}
}

// auditBlocked writes a call that will not run to the audit log.
func (s *Session) auditBlocked(call llm.ToolCall, d decision) {
	h := s.host
	if h.audit == nil {
		return
	}
	err := h.audit.Record(audit.Entry{
		Session: s.id, Tool: call.Name, ToolCallID: call.ID,
		Args:    audit.SanitizeArgs(call.Arguments, h.redactor),
		IsError: true, Decision: d.Decision, DecidedBy: audit.SanitizeText(d.By, h.redactor),
	})
	if err != nil {
		h.log.Warn("audit log", "err", err)
	}
}

// decisionOf returns (and forgets) what was decided about a call that ran.
func (s *Session) decisionOf(id string) (string, string, bool) {
	v, ok := s.decisions.LoadAndDelete(id)
	if !ok {
		return "", "", false
	}
	d := v.(decision)
	return d.Decision, d.By, true
}

// remember keeps an "always" answer exactly as q.Always scoped it (what the person was
// shown): in the store, so it survives a restart and can be listed and revoked, else in the
// session's memory. It is never kept wider: with no scope, or a scope neither can keep, the
// answer counted for this call only, which the face is told.
func (s *Session) remember(q Approval, d permissions.Decision) {
	sc := q.Always
	if sc == nil {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: no \"always\" scope as narrow as the call could be given", q.Call.ID))
		return
	}
	if st := s.host.store; st != nil {
		_, err := st.Remember(s.root(), sc.Tool, sc.path, sc.Pattern, d)
		if err == nil {
			return
		}
		s.face.Warn(s, fmt.Sprintf("could not store the answer for %s (%s), kept for this session only: %v", q.Call.ID, sc.Description, err))
	}
	if _, err := s.memory.Remember(s.root(), sc.Tool, sc.path, sc.Pattern, d); err != nil {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: %v", q.Call.ID, err))
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
			Session: s.id, Started: s.starts.Started, Later: s.starts.Later, Redactor: h.redactor, Decision: s.decisionOf,
			OnError: func(err error) { h.log.Warn("audit log", "err", err) },
		}))
	}
	if len(hooks) == 0 {
		return nil
	}
	return toolexec.ChainAfter(hooks...)
}

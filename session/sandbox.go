// This file decides how a session's bash commands are contained: the "sandbox" settings of
// the user's file, the editor (initializationOptions, then session/new) and the workspace
// folder's file, merged by sandbox.Resolve, and the variables holding model keys, which no
// command sees.

package session

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/tools"
)

// useSandbox sets ws's sandbox from the sources for a session in ws's cwd whose editor
// settings are cfg (its model already chosen). It fails when cfg's "sandbox" is malformed.
func (h *Host) useSandbox(ws *tools.Workspace, cfg Config) error {
	editor, err := sandbox.Parse(cfg.Sandbox)
	if err != nil {
		return invalid("%v", err)
	}
	var user, workspace sandbox.Settings
	trusted := true
	if h.loader != nil {
		user, workspace, trusted = h.loader.Sandbox(ws.Cwd())
	}
	r := sandbox.Resolve(user, editor, workspace, trusted)
	if len(r.Ignored) > 0 {
		h.log.Warn("a workspace's sandbox settings were ignored", "folder", ws.Cwd(), "ignored", r.Ignored)
	}
	ws.UseSandbox(tools.SandboxConfig{Settings: r, DropEnv: h.keyVariables(ws.Cwd(), cfg.Model)})
	return nil
}

// keyVariables returns the environment variables that may hold a model key for a session in
// cwd: the apiKeyEnv of its model and of every model the settings list (a session may switch
// to one of them).
func (h *Host) keyVariables(cwd string, m *ModelConfig) []string {
	var out []string
	if m != nil && m.APIKeyEnv != "" {
		out = append(out, m.APIKeyEnv)
	}
	for _, l := range h.listedModels(cwd) {
		if v := l.cfg.APIKeyEnv; v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Escalation is a bash call's request to run outside the sandbox, in the shape of
// beforeToolCall's params.sandbox.
type Escalation struct {
	Escalation    bool   `json:"escalation"`
	Justification string `json:"justification"`
}

// escalation returns the escalation a call asks for: a built-in bash call with
// "unsandboxed": true; nil for every other call. Such a call asks the person whatever the
// rules and the remembered answers to sandboxed calls say; only an "always" answer to an
// escalation, scoped to its command as other "always" answers are, answers the next ones
// (for the session: escalations are never written to the store, whose answers allow
// sandboxed calls).
func (s *Session) escalation(call llm.ToolCall) *Escalation {
	if call.Name != tools.NameBash || !s.builtin[call.Name] {
		return nil
	}
	var a struct {
		Unsandboxed   bool   `json:"unsandboxed"`
		Justification string `json:"justification"`
	}
	if json.Unmarshal(call.Arguments, &a) != nil || !a.Unsandboxed {
		return nil
	}
	return &Escalation{Escalation: true, Justification: a.Justification}
}

// mergeSandbox returns the "sandbox" settings over sets on top of base's, key by key
// (sandbox.Settings.Over). When either is malformed it returns over unchanged, for the
// session to report.
func mergeSandbox(base, over json.RawMessage) json.RawMessage {
	b, err1 := sandbox.Parse(base)
	o, err2 := sandbox.Parse(over)
	if err1 != nil || err2 != nil {
		return over
	}
	merged, err := json.Marshal(b.Over(o))
	if err != nil {
		return over
	}
	return merged
}

// escalationScope is the scope of an "always" answer to an escalation: the call's own scope,
// said to be outside the sandbox; nil when the call has none.
func escalationScope(sc *Always) *Always {
	if sc == nil {
		return nil
	}
	out := *sc
	out.Description = sc.Description + ", run outside the sandbox, for this session"
	return &out
}

// rememberedEscalation returns the session's "always" answer to an escalation like call.
func (s *Session) rememberedEscalation(call llm.ToolCall) (permissions.Decision, bool) {
	r, ok := s.escalations.Lookup(s.root(), permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: s.ws.Cwd()})
	return r.Decision, ok
}

// rememberEscalation keeps an "always" answer to an escalation, as q.Always scoped it, for
// the session.
func (s *Session) rememberEscalation(q Approval, d permissions.Decision) {
	sc := q.Always
	if sc == nil {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: no \"always\" scope as narrow as the call could be given", q.Call.ID))
		return
	}
	if _, err := s.escalations.Remember(s.root(), sc.Tool, sc.path, sc.Pattern, d); err != nil {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: %v", q.Call.ID, err))
	}
}

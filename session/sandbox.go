// This file decides how a session's bash commands are contained: the "sandbox" settings of
// the user's file, the editor (initializationOptions, then session/new) and the workspace
// folder's file, merged by sandbox.Resolve, and the variables holding model keys, which no
// command sees.

package session

import (
	"fmt"
	"slices"

	"github.com/pid-agent/pid/escalate"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/tools"
)

// useSandbox sets ws's sandbox from the sources for a session in ws's cwd whose editor
// settings are cfg (its model already chosen), with asker deciding about the hosts the
// allow-list does not know, and returns the settings. It fails when cfg's "sandbox" is
// malformed.
func (h *Host) useSandbox(ws *tools.Workspace, cfg Config, asker *hostAsker) (sandbox.Resolved, error) {
	editor, err := sandbox.Parse(cfg.Sandbox)
	if err != nil {
		return sandbox.Resolved{}, invalid("%v", err)
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
	ws.UseSandbox(tools.SandboxConfig{Settings: r, DropEnv: h.keyVariables(ws.Cwd(), cfg.Model),
		Asker: asker, Resolver: debugResolver(), Logf: h.proxyLog})
	return r, nil
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
		if v := l.Config.APIKeyEnv; v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// SandboxCapability is what this machine's kernel gives pid's sandbox.
type SandboxCapability = sandbox.Capability

// SandboxStatus reports what this machine's kernel gives pid's sandbox, trying it once per
// process (see sandbox.Probe). Contract: safe for concurrent use.
func SandboxStatus() SandboxCapability { return sandbox.Probe() }

// Escalation is a bash call's request to run outside the sandbox, in the shape of
// beforeToolCall's params.sandbox.
type Escalation = escalate.Request

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
	return escalate.Of(call.Arguments)
}

// escalationScope is the scope of an "always" answer to an escalation: exactly this
// command (escalate.Command), in this session's working folder, outside the sandbox, for
// this session only; nil when the call has no command.
func escalationScope(call llm.ToolCall) *Always {
	cmd, ok := escalate.Command(call.Arguments)
	if !ok {
		return nil
	}
	return &Always{Tool: call.Name, Pattern: cmd, Description: escalate.Describe(cmd)}
}

// rememberedEscalation returns the session's "always" answer to exactly call's command.
func (s *Session) rememberedEscalation(call llm.ToolCall) (permissions.Decision, bool) {
	cmd, ok := escalate.Command(call.Arguments)
	if !ok {
		return "", false
	}
	return s.escalations.Recall(s.ws.Cwd(), cmd)
}

// rememberEscalation keeps an "always" answer to an escalation for exactly its command, for
// the session.
func (s *Session) rememberEscalation(q Approval, d permissions.Decision) {
	cmd, ok := escalate.Command(q.Call.Arguments)
	if q.Always == nil || !ok {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: the call has no command to remember", q.Call.ID))
		return
	}
	s.escalations.Remember(s.ws.Cwd(), cmd, d)
}

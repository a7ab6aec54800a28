// This file decides how a session's bash commands are contained: the "sandbox" settings of
// the user's file, the editor (initializationOptions, then session/new) and the workspace
// folder's file, merged by sandbox.Resolve, and the variables holding model keys, which no
// command sees.

package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

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

// escalationScope is the scope of an "always" answer to an escalation: exactly this
// command, in this session's working folder, outside the sandbox, for this session only; nil
// when the call has no command. A pattern would be wider: `touch ../x` as a rule covers
// every command starting with those words, and a person allowing one command outside the
// sandbox has allowed that one, not its longer relatives.
func escalationScope(call llm.ToolCall) *Always {
	cmd, ok := escalationCommand(call)
	if !ok {
		return nil
	}
	return &Always{Tool: call.Name, Pattern: cmd, Description: "exactly the bash command `" + cmd + "`, run outside the sandbox, for this session"}
}

// escalationCommand returns a bash call's command as the key of an escalation's "always"
// answer: the text as the model wrote it, without the spaces around it.
func escalationCommand(call llm.ToolCall) (string, bool) {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(call.Arguments, &a) != nil || strings.TrimSpace(a.Command) == "" {
		return "", false
	}
	return strings.TrimSpace(a.Command), true
}

// escalationMemory keeps a session's "always" answers to escalations, by exact command and
// working folder. Safe for concurrent use.
type escalationMemory struct {
	// mu guards answers.
	mu      sync.Mutex
	answers map[[2]string]permissions.Decision
}

// rememberedEscalation returns the session's "always" answer to exactly call's command.
func (s *Session) rememberedEscalation(call llm.ToolCall) (permissions.Decision, bool) {
	cmd, ok := escalationCommand(call)
	if !ok {
		return "", false
	}
	m := &s.escalations
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.answers[[2]string{s.ws.Cwd(), cmd}]
	return d, ok
}

// rememberEscalation keeps an "always" answer to an escalation for exactly its command, for
// the session.
func (s *Session) rememberEscalation(q Approval, d permissions.Decision) {
	cmd, ok := escalationCommand(q.Call)
	if q.Always == nil || !ok {
		s.face.Warn(s, fmt.Sprintf("the answer for %s applied to this call only: the call has no command to remember", q.Call.ID))
		return
	}
	m := &s.escalations
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answers == nil {
		m.answers = map[[2]string]permissions.Decision{}
	}
	m.answers[[2]string{s.ws.Cwd(), cmd}] = d
}

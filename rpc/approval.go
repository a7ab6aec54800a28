// This file decides which tool calls need the editor's approval and asks for it: the
// session's beforeToolCall and afterToolCall hooks.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/afterrules"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

const (
	allow = "allow"
	deny  = "deny"
)

// readOnly reports whether a tool of the session only reads: built-in read-only tools, and
// scripted tools that do not require approval. The policy's built-in default allows those
// and asks for the rest.
func (ss *session) readOnly(tool string) bool {
	if ss.builtin[tool] {
		return tools.ReadOnly(tool)
	}
	if need, scripted := ss.asks[tool]; scripted {
		return !need
	}
	return false
}

// verdict decides a call from the settings files, the session's permissions, the tools'
// nature and the remembered answers (see docs/permissions.md).
func (ss *session) verdict(call llm.ToolCall) permissions.Verdict {
	s := ss.srv
	var base *permissions.Policy
	if s.loader != nil {
		base = s.loader.Policy(ss.ws.Cwd())
	}
	pol := base.With(ss.readOnly, permissions.Layer{Source: "session", Spec: ss.spec})
	c := permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: ss.ws.Cwd()}
	v := permissions.Check(pol, s.store, ss.root(), c)
	if v.Decision == permissions.Ask {
		ss.mu.Lock()
		rem := ss.remembered[call.Name]
		ss.mu.Unlock()
		switch rem {
		case allow:
			v.Decision, v.Source = permissions.Allow, "remembered"
		case deny:
			v.Decision, v.Source = permissions.Deny, "remembered"
		}
	}
	return v
}

// root is the workspace folder the session's remembered answers belong to.
func (ss *session) root() string {
	cwd := ss.ws.Cwd()
	best := ""
	for _, r := range ss.ws.Roots() {
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
// editor without a timeout (a person may take their time) and gives up when ctx ends. Any
// failure to get an answer denies the call with a reason the model can read.
func (ss *session) beforeToolCall(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
	name := in.Call.Name
	v := ss.verdict(in.Call)
	switch {
	case v.Decision == permissions.Allow:
		return nil, nil
	case v.Decision == permissions.Deny && v.Source == "remembered":
		return &toolexec.Block{Reason: fmt.Sprintf("The user chose to always deny %s here.", name)}, nil
	case v.Decision == permissions.Deny:
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s is denied by the permissions (%s).", name, v.Source)}, nil
	}
	decision, reason, err := ss.ask(ctx, in.Call)
	if err != nil {
		if ctx.Err() != nil {
			return &toolexec.Block{Reason: "Operation aborted"}, nil
		}
		ss.srv.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("session %s: approval request for %s failed: %v", ss.id, in.Call.ID, err))
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: %s", name, approvalFailure(err))}, nil
	}
	switch decision {
	case "allowAlways":
		ss.remember(in.Call, permissions.Allow)
		fallthrough
	case "allow":
		return nil, nil
	case "denyAlways":
		ss.remember(in.Call, permissions.Deny)
		fallthrough
	case "deny":
		if reason == "" {
			reason = fmt.Sprintf("The user denied this call of %s.", name)
		}
		return &toolexec.Block{Reason: reason}, nil
	}
	return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: the editor answered the approval request with an unknown decision %q.", name, decision)}, nil
}

// remember keeps an "always" answer: in the store (so it survives a restart and can be
// listed and revoked), scoped to the call's pattern for built-in tools (a bash command's
// first words, a file's path) and to the whole tool for the others; in the session too, for
// the whole tool, when the store cannot be used.
func (ss *session) remember(call llm.ToolCall, d permissions.Decision) {
	if st := ss.srv.store; st != nil {
		argPath, pattern := "", ""
		if ss.builtin[call.Name] {
			argPath, pattern = permissions.SuggestPattern(permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: ss.ws.Cwd()})
		}
		_, err := st.Remember(ss.root(), call.Name, argPath, pattern, d)
		if err == nil {
			return
		}
		ss.srv.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("session %s: could not store the answer for %s, kept for this session only: %v", ss.id, call.Name, err))
	}
	ss.mu.Lock()
	ss.remembered[call.Name] = string(d)
	ss.mu.Unlock()
}

// Titles of the showMessageRequest fallback's actions.
const (
	titleAllow       = "Allow"
	titleAlwaysAllow = "Always allow"
	titleDeny        = "Deny"
)

// ask puts the question to the editor: beforeToolCall when the editor declared it, else
// window/showMessageRequest.
func (ss *session) ask(ctx context.Context, call llm.ToolCall) (decision, reason string, err error) {
	ss.srv.mu.Lock()
	declared := ss.srv.clientBefore
	ss.srv.mu.Unlock()
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if declared {
		var a *beforeAnswer
		params, err := beforeParamsJSON(ss.id, call.ID, call.Name, args)
		if err != nil {
			return "", "", err
		}
		if err := ss.srv.call(ctx, "beforeToolCall", params, &a); err != nil {
			return "", "", err
		}
		if a == nil {
			return deny, "", nil
		}
		return a.Decision, a.Reason, nil
	}
	var item *protocol.MessageActionItem
	params := &protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeInfo,
		Message: fmt.Sprintf("pid wants to run %s with %s", call.Name, truncate(string(args), 400)),
		Actions: []protocol.MessageActionItem{{Title: titleAllow}, {Title: titleAlwaysAllow}, {Title: titleDeny}},
	}
	body, err := json.Marshal(params)
	if err != nil {
		return "", "", err
	}
	if err := ss.srv.call(ctx, "window/showMessageRequest", body, &item); err != nil {
		return "", "", err
	}
	if item == nil {
		return deny, "", nil
	}
	switch item.Title {
	case titleAllow:
		return "allow", "", nil
	case titleAlwaysAllow:
		return "allowAlways", "", nil
	}
	return deny, "", nil
}

// afterHook is the session's afterToolCall chain: the editor's hook when it declared one,
// then the redaction of secrets (content only), then the audit log (no change).
func (ss *session) afterHook(editor bool) toolexec.AfterHook {
	s := ss.srv
	var hooks []toolexec.AfterHook
	if editor {
		hooks = append(hooks, ss.afterToolCall)
	}
	if s.redactor != nil {
		hooks = append(hooks, s.redactor.Hook())
	}
	if s.audit != nil {
		hooks = append(hooks, s.audit.Hook(afterrules.AuditOptions{
			Session: ss.id, Started: ss.starts.Started, Redactor: s.redactor,
			OnError: func(err error) { s.log.Warn("audit log", "err", err) },
		}))
	}
	if len(hooks) == 0 {
		return nil
	}
	return afterrules.Chain(hooks...)
}

// afterToolCall asks the editor, which declared afterToolCall. An editor that fails to answer leaves the result unchanged (and
// the failure is logged); null fields count as absent.
func (ss *session) afterToolCall(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
	args := in.Call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	content := in.Result.Content
	if content == nil {
		content = []llm.Content{}
	}
	var a *afterAnswer
	p, err := afterParamsJSON(ss.id, in.Call.ID, in.Call.Name, args, resultOf(content, in.Result.Details), in.IsError)
	if err != nil {
		return nil, err
	}
	if err := ss.srv.call(ctx, "afterToolCall", p, &a); err != nil {
		if ctx.Err() == nil {
			ss.srv.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("session %s: afterToolCall for %s failed, result kept: %v", ss.id, in.Call.ID, err))
		}
		return nil, nil
	}
	if a == nil {
		return nil, nil
	}
	return &toolexec.Override{Content: a.Content, Details: a.Details, IsError: a.IsError, Terminate: a.Terminate}, nil
}

// approvalFailure says, for the model and the log, why an approval request got no decision.
func approvalFailure(err error) string {
	var ee *editorError
	if errors.As(err, &ee) {
		return fmt.Sprintf("the editor answered the approval request with an error (%d: %s).", ee.Code, ee.Message)
	}
	return fmt.Sprintf("the editor did not answer the approval request (%v).", err)
}

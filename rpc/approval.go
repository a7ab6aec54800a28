// This file decides which tool calls need the editor's approval and asks for it: the
// session's beforeToolCall and afterToolCall hooks.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

const (
	allow = "allow"
	ask   = "ask"
	deny  = "deny"
)

func (p *permissions) check() error {
	if p == nil {
		return nil
	}
	valid := func(v string) bool { return v == allow || v == ask || v == deny }
	if p.Default != "" && !valid(p.Default) {
		return invalidParams("permissions.default must be \"allow\", \"ask\" or \"deny\", not %q", p.Default)
	}
	for name, v := range p.Tools {
		if !valid(v) {
			return invalidParams("permissions.tools[%q] must be \"allow\", \"ask\" or \"deny\", not %q", name, v)
		}
	}
	return nil
}

// policy returns allow, ask or deny for a tool: the session's rule for that tool, else its
// default rule, else the tool's own nature (ask for tools that change things, allow the rest).
func (ss *session) policy(tool string) string {
	if ss.perms != nil {
		if v := ss.perms.Tools[tool]; v != "" {
			return v
		}
		if ss.perms.Default != "" {
			return ss.perms.Default
		}
	}
	if ss.asks[tool] {
		return ask
	}
	return allow
}

// beforeToolCall is the session's toolexec.BeforeHook. Contract as there: it waits for the
// editor without a timeout (a person may take their time) and gives up when ctx ends. Any
// failure to get an answer denies the call with a reason the model can read.
func (ss *session) beforeToolCall(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
	name := in.Call.Name
	switch ss.policy(name) {
	case allow:
		return nil, nil
	case deny:
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s is denied by this session's permissions.", name)}, nil
	}
	ss.mu.Lock()
	rem := ss.remembered[name]
	ss.mu.Unlock()
	switch rem {
	case allow:
		return nil, nil
	case deny:
		return &toolexec.Block{Reason: fmt.Sprintf("The user chose to always deny %s in this session.", name)}, nil
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
		ss.remember(name, allow)
		fallthrough
	case "allow":
		return nil, nil
	case "denyAlways":
		ss.remember(name, deny)
		fallthrough
	case "deny":
		if reason == "" {
			reason = fmt.Sprintf("The user denied this call of %s.", name)
		}
		return &toolexec.Block{Reason: reason}, nil
	}
	return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: the editor answered the approval request with an unknown decision %q.", name, decision)}, nil
}

func (ss *session) remember(tool, decision string) {
	ss.mu.Lock()
	ss.remembered[tool] = decision
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

// afterToolCall is the session's toolexec.AfterHook, installed only when the editor
// declared afterToolCall. An editor that fails to answer leaves the result unchanged (and
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

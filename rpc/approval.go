// This file asks the editor about tool calls: beforeToolCall (or LSP's showMessageRequest)
// for approvals, afterToolCall for the editor's say on results.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// Titles of the showMessageRequest fallback's actions.
const (
	titleAllow       = "Allow"
	titleAlwaysAllow = "Always allow"
	titleDeny        = "Deny"
)

// Ask implements session.Face: beforeToolCall when the editor declared it, else
// window/showMessageRequest. No timeout: a person may take their time; ctx ends the wait.
// Both show what an "always" answer would cover, and offer none when it cannot be scoped.
func (s *Server) Ask(ctx context.Context, ss *session.Session, q session.Approval) (session.Answer, error) {
	s.mu.Lock()
	declared := s.clientBefore
	s.mu.Unlock()
	call := q.Call
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if declared {
		var a *beforeAnswer
		params, err := beforeParamsJSON(ss.ID(), ss.ParentID(), call.ID, call.Name, args, q.Always, q.Annotations, q.Escalation)
		if err != nil {
			return session.Answer{}, err
		}
		if err := s.call(ctx, "beforeToolCall", params, &a); err != nil {
			return session.Answer{}, approvalError{err}
		}
		if a == nil {
			return session.Answer{Decision: "deny"}, nil
		}
		return session.Answer{Decision: a.Decision, Reason: a.Reason, Mode: a.Mode}, nil
	}
	if q.Plan != nil {
		return s.askPlan(ctx, q.Plan.Text)
	}
	var item *protocol.MessageActionItem
	actions := []protocol.MessageActionItem{{Title: titleAllow}}
	always := ""
	if q.Always != nil {
		always = titleAlwaysAllow + ": " + q.Always.Description
		actions = append(actions, protocol.MessageActionItem{Title: always})
	}
	actions = append(actions, protocol.MessageActionItem{Title: titleDeny})
	params := &protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeInfo,
		Message: fmt.Sprintf("pid wants to run %s%s with %s%s", call.Name, escalationNote(q.Escalation), truncate(string(args), 400), hintNote(q.Annotations)),
		Actions: actions,
	}
	body, err := json.Marshal(params)
	if err != nil {
		return session.Answer{}, err
	}
	if err := s.call(ctx, "window/showMessageRequest", body, &item); err != nil {
		return session.Answer{}, approvalError{err}
	}
	if item == nil {
		return session.Answer{Decision: "deny"}, nil
	}
	switch {
	case item.Title == titleAllow:
		return session.Answer{Decision: "allow"}, nil
	case always != "" && item.Title == always:
		return session.Answer{Decision: "allowAlways"}, nil
	}
	return session.Answer{Decision: "deny"}, nil
}

// The plan's choices in window/showMessageRequest.
const (
	titlePlanApprove     = "Approve the plan"
	titlePlanAcceptEdits = "Approve, and accept edits"
	titlePlanAuto        = "Approve, and run in auto mode"
	titlePlanKeep        = "Keep planning"
)

// askPlan puts exit_plan_mode's plan, whole, to an editor without beforeToolCall: the
// message is the plan's markdown, and the choices are the modes to go on in, or to keep
// planning.
func (s *Server) askPlan(ctx context.Context, plan string) (session.Answer, error) {
	params := &protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeInfo,
		Message: "pid's plan, for your approval (leaving plan mode):\n\n" + plan,
		Actions: []protocol.MessageActionItem{{Title: titlePlanApprove}, {Title: titlePlanAcceptEdits}, {Title: titlePlanAuto}, {Title: titlePlanKeep}},
	}
	body, err := json.Marshal(params)
	if err != nil {
		return session.Answer{}, err
	}
	var item *protocol.MessageActionItem
	if err := s.call(ctx, "window/showMessageRequest", body, &item); err != nil {
		return session.Answer{}, approvalError{err}
	}
	switch {
	case item == nil:
	case item.Title == titlePlanApprove:
		return session.Answer{Decision: "allow"}, nil
	case item.Title == titlePlanAcceptEdits:
		return session.Answer{Decision: "allow", Mode: session.ModeAcceptEdits}, nil
	case item.Title == titlePlanAuto:
		return session.Answer{Decision: "allow", Mode: session.ModeAuto}, nil
	}
	return session.Answer{Decision: "deny", Reason: "The user chose to keep planning."}, nil
}

// approvalError is an approval request that got no decision; Reason is the sentence the
// model reads.
type approvalError struct{ err error }

func (e approvalError) Error() string { return e.err.Error() }
func (e approvalError) Unwrap() error { return e.err }

func (e approvalError) Reason() string {
	var ee *editorError
	if errors.As(e.err, &ee) {
		return fmt.Sprintf("the editor answered the approval request with an error (%d: %s).", ee.Code, ee.Message)
	}
	return fmt.Sprintf("the editor did not answer the approval request (%v).", e.err)
}

// afterToolCall asks the editor, which declared afterToolCall. An editor that fails to
// answer leaves the result unchanged (and the failure is logged); null fields count as absent.
func (s *Server) afterToolCall(ctx context.Context, ss *session.Session, in session.AfterInput) (*session.Override, error) {
	args := in.Call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	content := in.Content
	if content == nil {
		content = []llm.Content{}
	}
	var a *afterAnswer
	p, err := afterParamsJSON(ss.ID(), in.Call.ID, in.Call.Name, args, event.Result{Content: content, Details: in.Details}, in.IsError)
	if err != nil {
		return nil, err
	}
	if err := s.call(ctx, "afterToolCall", p, &a); err != nil {
		if ctx.Err() == nil {
			s.Warn(ss, fmt.Sprintf("afterToolCall for %s failed, result kept: %v", in.Call.ID, err))
		}
		return nil, nil
	}
	if a == nil {
		return nil, nil
	}
	return &session.Override{Content: a.Content, Details: a.Details, IsError: a.IsError, Terminate: a.Terminate}, nil
}

// Elicit implements session.Face: an MCP server's elicitation/create, made during a tool
// call of the session, goes to the editor as a request of the same name and params (the
// MCP ElicitRequest params), with _meta.pid {sessionId, server, toolCallId} added; the editor's answer is
// the MCP ElicitResult ({action: "accept"|"decline"|"cancel", content?}). An editor that
// answers with an error (it does not know the method, say) declines.
func (s *Server) Elicit(ctx context.Context, ss *session.Session, q session.Elicitation) (session.ElicitAnswer, error) {
	var params map[string]any
	if err := json.Unmarshal(q.Params, &params); err != nil {
		return session.ElicitAnswer{}, err
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	pidMeta := map[string]any{"sessionId": ss.ID(), "server": q.Server}
	if q.ToolCallID != "" {
		pidMeta["toolCallId"] = q.ToolCallID
	}
	meta["pid"] = pidMeta
	params["_meta"] = meta
	body, err := json.Marshal(params)
	if err != nil {
		return session.ElicitAnswer{}, err
	}
	var res *session.ElicitAnswer
	if err := s.call(ctx, "elicitation/create", body, &res); err != nil {
		return session.ElicitAnswer{}, fmt.Errorf("the editor did not answer elicitation/create: %w", err)
	}
	if res == nil {
		return session.ElicitAnswer{Action: "decline"}, nil
	}
	return *res, nil
}

// hintNote is what the showMessageRequest question adds about an MCP tool's annotations:
// what its server claims, said as a claim ("" when it claims nothing worth showing).
func hintNote(a map[string]any) string {
	switch {
	case a["destructiveHint"] == true:
		return " (its MCP server says it may destroy data)"
	case a["readOnlyHint"] == true:
		return " (its MCP server says it only reads)"
	}
	return ""
}

// escalationNote says, in the question, that the call asks to run outside the sandbox.
func escalationNote(e *session.Escalation) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf(" OUTSIDE THE SANDBOX (%s)", truncate(e.Justification, 200))
}

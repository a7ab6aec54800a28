// This file routes an MCP server's elicitation (a question it asks the person during one of
// its tool calls) to the ACP client as elicitation/create, and the client's answer back to
// the server.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/session"
)

// elicitationParams is ACP's CreateElicitationRequest in form mode, scoped to a session
// and to the tool call that asked.
type elicitationParams struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	Meta            elicitationMeta `json:"_meta"`
}

// elicitationMeta is _meta.pid of elicitation/create: the MCP server that asks.
type elicitationMeta struct {
	PID struct {
		Server string `json:"server"`
	} `json:"pid"`
}

// elicitationResponse is ACP's CreateElicitationResponse.
type elicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// emptyForm is the requestedSchema of a question that came without one.
var emptyForm = json.RawMessage(`{"type":"object","properties":{}}`)

// Elicit implements session.Face: a form question goes to the client as elicitation/create
// when it declared elicitation.form, and the client's action (accept with its content,
// decline, cancel) goes back to the server. The question names the tool call the server
// asked during (session.ToolCallID), so that questions of parallel calls of one server are
// told apart. A client without the capability, and a question in another mode (url), get a
// decline, with a warning that says why (the log, and a notice when the client takes
// notices). When ctx ends first (the prompt was cancelled) the client is told with
// $/cancel_request and the server gets cancel; so it does when the client goes away. An
// error response of the client declines (the error is logged by package mcp).
func (s *server) Elicit(ctx context.Context, ss *session.Session, q session.Elicitation) (session.ElicitAnswer, error) {
	decline := session.ElicitAnswer{Action: "decline"}
	cancel := session.ElicitAnswer{Action: "cancel"}
	if ctx.Err() != nil {
		return cancel, nil
	}
	s.mu.Lock()
	form := s.caps.ElicitForm
	s.mu.Unlock()
	switch {
	case q.Mode != "form":
		s.Warn(ss, fmt.Sprintf("The MCP server %s asked a question in %q mode, which pid does not pass to the editor (only form questions); the question was declined.", q.Server, q.Mode))
		return decline, nil
	case !form:
		s.Warn(ss, fmt.Sprintf("The MCP server %s asked a question (%s), but the editor cannot answer questions from MCP servers (it did not declare elicitation.form in its clientCapabilities); the question was declined.", q.Server, title.Code(title.Line(q.Message, 80))))
		return decline, nil
	}
	schema := emptyForm
	if q.RequestedSchema != nil {
		schema = q.RequestedSchema
	}
	p := elicitationParams{SessionID: ss.ID(), Mode: "form", Message: q.Message, RequestedSchema: schema}
	p.Meta.PID.Server = q.Server
	// The call the server's request was made during (every request comes from one; ""
	// would tie the question to the session only).
	p.ToolCallID = q.ToolCallID
	var res elicitationResponse
	if err := s.conn.callCancelling(ctx, "elicitation/create", p, &res); err != nil {
		if ctx.Err() != nil || errors.Is(err, errClosed) {
			return cancel, nil
		}
		return session.ElicitAnswer{}, fmt.Errorf("the editor did not answer elicitation/create: %w", err)
	}
	switch res.Action {
	case "accept":
		return session.ElicitAnswer{Action: "accept", Content: res.Content}, nil
	case "decline", "cancel":
		return session.ElicitAnswer{Action: res.Action}, nil
	}
	s.log.Warn("the editor answered elicitation/create with an unknown action; the question is declined", "session", ss.ID(), "server", q.Server, "action", res.Action)
	return decline, nil
}

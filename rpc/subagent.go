// This file sends a subagent's start and end as the parent session's notifications:
// subagentStart and subagentEnd (docs/protocol.md, "Subagents").

package rpc

import (
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/session"
)

// subagentParams are subagentStart's and subagentEnd's params.
type subagentParams struct {
	SessionID      string `json:"sessionId"`
	ToolCallID     string `json:"toolCallId"`
	ChildSessionID string `json:"childSessionId"`
	Description    string `json:"description,omitempty"`
	Agent          string `json:"agent,omitempty"`
	Worktree       string `json:"worktree,omitempty"`
	StopReason     string `json:"stopReason,omitempty"`
}

// emitSubagent sends the subagent events; it reports whether ev was one.
func (s *Server) emitSubagent(_ *session.Session, ev event.Event) bool {
	switch e := ev.(type) {
	case event.SubagentStart:
		s.notify("subagentStart", &subagentParams{SessionID: e.ParentSessionID, ToolCallID: e.ToolCallID, ChildSessionID: e.ChildSessionID,
			Description: e.Description, Agent: e.Agent, Worktree: e.Worktree})
	case event.SubagentEnd:
		s.notify("subagentEnd", &subagentParams{SessionID: e.ParentSessionID, ToolCallID: e.ToolCallID, ChildSessionID: e.ChildSessionID,
			StopReason: e.StopReason})
	default:
		return false
	}
	return true
}

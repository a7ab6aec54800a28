// This file asks the editor about the hosts a session's allow-list does not know:
// network/allowHost, sent only to an editor that declared
// capabilities.experimental.pid.networkApproval (session.HostAsker).

package rpc

import (
	"context"
	"encoding/json"

	"github.com/pid-agent/pid/session"
)

// allowHostParams are network/allowHost's params.
type allowHostParams struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Command    string `json:"command"`
}

// allowHostResult is network/allowHost's answer.
type allowHostResult struct {
	Decision string `json:"decision"`
}

// CanAskHost implements session.HostAsker: the editor declared networkApproval.
func (s *Server) CanAskHost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientNet
}

// AskHost implements session.HostAsker: network/allowHost, waiting until ctx ends (the
// proxy's 60 s). A null answer, or a decision other than "allow" and "allowAlways", denies.
func (s *Server) AskHost(ctx context.Context, ss *session.Session, q session.HostQuestion) (string, error) {
	body, err := json.Marshal(allowHostParams{SessionID: ss.ID(), ToolCallID: q.ToolCallID, Host: q.Host, Port: q.Port, Command: q.Command})
	if err != nil {
		return "", err
	}
	var a *allowHostResult
	if err := s.call(ctx, "network/allowHost", body, &a); err != nil {
		return "", err
	}
	if a == nil {
		return "deny", nil
	}
	return a.Decision, nil
}

var _ session.HostAsker = (*Server)(nil)

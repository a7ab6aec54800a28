// This file holds hooks/list: the person's hooks that apply to a session (docs/hooks.md).

package rpc

import (
	"github.com/pid-agent/pid/session"
)

// hooksList runs hooks/list {sessionId}: the hooks that apply to the session now, in the
// order they run, with where each was configured.
func (s *Server) hooksList(p *sessionParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return &struct {
		Hooks []session.HookInfo `json:"hooks"`
	}{ss.Hooks()}, nil
}

// This file holds skills/list and agents/list on pid's own face: the session's skills
// (SKILL.md) and agent files, those in use and those left out with why
// (docs/protocol.md, "Skills and agents").

package rpc

import (
	"context"

	"github.com/pid-agent/pid/session"
)

// skillsList answers skills/list {sessionId}: {skills: [...]}, read from disk now. It reads
// files, so it runs on a goroutine of its own.
func (s *Server) skillsList(p *sessionParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		return &struct {
			Skills []session.Skill `json:"skills"`
		}{ss.Skills()}, nil
	}, nil
}

// agentsList answers agents/list {sessionId}: {agents: [...]}, read from disk now.
func (s *Server) agentsList(p *sessionParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		return &struct {
			Agents []session.Agent `json:"agents"`
		}{ss.Agents()}, nil
	}, nil
}

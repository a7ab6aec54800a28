// This file holds session/fork (unstable in ACP's schema, advertised under
// sessionCapabilities.fork): a new session with the conversation of an existing one, whole,
// or up to a message given in _meta.pid.messageCount.

package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
)

type forkParams struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   *string           `json:"cwd"`
	AdditionalDirectories []string          `json:"additionalDirectories"`
	MCPServers            []json.RawMessage `json:"mcpServers"`
	Meta                  struct {
		PID *struct {
			// MessageCount forks at a message: the new session keeps the first
			// messageCount items of the conversation (as session/load replays them,
			// compactions included); absent, it keeps them all.
			MessageCount *int            `json:"messageCount"`
			MCPServers   json.RawMessage `json:"mcpServers"`
		} `json:"pid"`
	} `json:"_meta"`
}

// sessionFork makes a new session, live in this pid, whose conversation is that of the
// given session (live here, or saved), whole or up to _meta.pid.messageCount items, with
// its settings, mode and model; the original is untouched. The fork works in the folder
// its original works in (as session/load, whatever cwd names), with the request's
// additionalDirectories and MCP servers (checked as session/new checks them). It answers
// {sessionId, modes, configOptions}, without replaying the conversation (session/load of
// the new id does that). A count that would cut a tool call from its result is -32602,
// naming the nearest valid counts.
func (s *server) sessionFork(p *forkParams) (rpcconn.Work, error) {
	switch {
	case p.SessionID == "":
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	case p.Cwd == nil || *p.Cwd == "":
		return nil, fmt.Errorf("%w: cwd is required (an absolute path)", errInvalidParams)
	case !filepath.IsAbs(*p.Cwd):
		return nil, fmt.Errorf("%w: cwd must be an absolute path, not %q", errInvalidParams, *p.Cwd)
	}
	folders, err := additionalFolders(p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	count := session.ForkAll
	var own json.RawMessage
	if p.Meta.PID != nil {
		own = p.Meta.PID.MCPServers
		if p.Meta.PID.MessageCount != nil {
			if count = *p.Meta.PID.MessageCount; count < 0 {
				return nil, fmt.Errorf("%w: _meta.pid.messageCount must be 0 or more, not %d", errInvalidParams, count)
			}
		}
	}
	servers, err := mcpServersConfig(p.MCPServers, own, filepath.Clean(*p.Cwd))
	if err != nil {
		return nil, err
	}
	if servers == nil {
		servers = json.RawMessage("{}")
	}
	return s.lifecycle(func() (any, error) {
		id := session.NewID()
		ss, _, err := s.host.Fork(p.SessionID, count, session.Options{Face: s, ID: id, Files: s.editorFiles(id), Terminals: s.editorTerminals(id),
			MCPServers: servers, ModeChanged: s.modeChanged, Folders: folders})
		if err != nil {
			return nil, sessionError(p.SessionID, err)
		}
		st := &sessionState{srv: s, ss: ss, mcpOwn: servers}
		s.mu.Lock()
		s.sessions[ss.ID()] = st
		s.mu.Unlock()
		return &sessionNewResult{SessionID: ss.ID(), Modes: modes(ss), ConfigOptions: configOptions(s.host, ss)}, nil
	}), nil
}

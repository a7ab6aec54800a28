// This file connects a session to MCP servers (package mcp): the servers it names (settings
// files, its own mcpServers) are held by its mcp.Catalog from when it opens, and worked out
// again when its folder's trust changes (refreshMCP: a folder trusted starts its servers,
// one revoked stops them); the host's manager runs them, and routes their questions
// (elicitation) to the face of the session whose call asked.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/mcp"
)

// ToolSearchName is the built-in tool that finds deferred MCP tools.
const ToolSearchName = mcp.SearchToolName

// Sources of tools, as tools/list names them.
const (
	SourceBuiltin = "builtin"
	SourceSession = "session"
	sourceMCP     = "mcp:"
)

// ServerInfo is one MCP server as mcp/servers lists it.
type ServerInfo = mcp.Info

// sessionOf returns the session whose tool call ctx belongs to (mcp.Caller; openMCP).
func sessionOf(ctx context.Context) *Session {
	s, _ := mcp.Caller(ctx).(*Session)
	return s
}

// ToolCallID returns the id of the tool call an MCP server's request (elicitation,
// sampling) was made during, as the model wrote it; "" when ctx is not such a request's.
//
// Contract: pure; any goroutine.
func ToolCallID(ctx context.Context) string { return mcp.CallID(ctx) }

// mcpServers returns the servers a session in cwd names (see mcp.Configs): the user
// settings', its trusted workspace folder's, then its own (own). A settings file's error is
// reported; the session's own is ErrInvalid.
func (h *Host) mcpServers(cwd string, own json.RawMessage) (map[string]mcp.ServerConfig, []string, error) {
	var user, ws json.RawMessage
	trusted := false
	if h.loader != nil {
		user, ws, trusted = h.loader.MCPServers(cwd)
	}
	servers, untrusted, errs, err := mcp.Configs(cwd, user, ws, trusted, own)
	for _, e := range errs {
		h.opts.Report("settings: "+e.Error(), true)
	}
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	return servers, untrusted, nil
}

// CheckMCPServers reports what is wrong with an "mcpServers" object (the settings files'
// shape, see mcp.ParseServers), naming the field; nil when a session could run it.
//
// Contract: pure; safe for concurrent use.
func CheckMCPServers(raw json.RawMessage) error {
	_, err := mcp.ParseServers(raw)
	return err
}

// SameMCPServers is mcp.SameServers.
//
// Contract: pure; safe for concurrent use.
func SameMCPServers(a, b json.RawMessage) (same bool, namesA, namesB []string) {
	return mcp.SameServers(a, b)
}

// openMCP gives the session its catalog of MCP servers, holding servers (they start in the
// background); own is the session's own mcpServers, which servers includes.
func (s *Session) openMCP(servers map[string]mcp.ServerConfig, untrusted []string, own json.RawMessage) {
	s.mcpOwn = own
	s.mcp = mcp.NewCatalog(s.host.mcpManager(), func(ctx context.Context, callID string) context.Context {
		return mcp.WithCaller(ctx, s, callID)
	})
	s.mcp.Set(servers, untrusted)
}

// closeMCP releases the session's servers: now stops at once those no other session holds
// (the session was closed: nothing it started runs on), else they linger (the host is
// closing, and its manager stops them all).
func (s *Session) closeMCP(now bool) {
	if s.mcp != nil {
		s.mcp.Close(now)
	}
}

// refreshMCP works out the session's servers again, after its folder's trust changed: a
// server its workspace settings name starts once the folder is trusted, and one that is no
// longer named (the folder's trust was revoked) is released and, unless another session
// holds it, stopped at once (mcp.Catalog.Set).
//
// Contract: any goroutine; it does not wait for servers to start or stop.
func (s *Session) refreshMCP() {
	if s.mcp == nil {
		return
	}
	configs, untrusted, err := s.host.mcpServers(s.ws.Cwd(), s.mcpOwn)
	if err != nil {
		return // own was read when the session opened: it cannot fail now
	}
	s.mcp.Set(configs, untrusted)
}

// annotations returns an MCP tool's hints (readOnlyHint, destructiveHint...), for the
// approval question; nil for other tools.
func (s *Session) annotations(name string) map[string]any {
	if s.mcp == nil {
		return nil
	}
	return s.mcp.Annotations(name)
}

// MCPServers lists the session's MCP servers for mcp/servers, by name.
func (s *Session) MCPServers() []ServerInfo {
	if s.mcp == nil {
		return nil
	}
	var out []ServerInfo
	for _, st := range s.mcp.Servers() {
		out = append(out, mcp.InfoOf(st))
	}
	return out
}

// MCPServers lists every MCP server of the host's sessions (mcp/servers): those running,
// starting or failed, and those an untrusted workspace names, each once.
func (h *Host) MCPServers() []ServerInfo {
	sessions := h.openSessions()
	lists := make([][]ServerInfo, len(sessions))
	for i, s := range sessions {
		lists[i] = s.MCPServers()
	}
	return mcp.Merge(lists...)
}

// mcpManager returns the manager of the host's servers, made on first use.
func (h *Host) mcpManager() *mcp.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mcpm == nil {
		h.mcpm = mcp.NewManager(h.mcpOptions())
	}
	return h.mcpm
}

// mcpOptions returns the options of the manager of this host's sessions: status changes
// reach their catalogs, then the face (MCPStatus); elicitation goes to the face of the
// session whose call asked, sampling (for servers that may) to its model; roots are the
// workspace folders.
func (h *Host) mcpOptions() mcp.Options {
	return mcp.Options{
		Log:     h.log,
		Version: h.opts.Version,
		OnStatus: func(st mcp.ServerStatus) {
			h.mcpChanged(st)
			if face := h.opts.MCPStatus; face != nil {
				face(mcp.InfoOf(st))
			}
		},
		Elicit: elicit,
		Sample: sample,
		Roots:  h.folders,
		// A server that ignores its stdin closing gets SIGTERM after this, then SIGKILL after
		// as long again: within the second the daemon gives itself to stop.
		StopGrace: 400 * time.Millisecond,
	}
}

// elicit routes an MCP server's elicitation/create to the face of the session whose call
// asked. Contract: mcp.Options.Elicit.
func elicit(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	s := sessionOf(ctx)
	if s == nil {
		return nil, fmt.Errorf("no session is calling the MCP server %s", server)
	}
	return mcp.Ask(ctx, server, ToolCallID(ctx), req, func(ctx context.Context, q Elicitation) (ElicitAnswer, error) {
		return s.face.Elicit(ctx, s, q)
	})
}

// mcpChanged tells the sessions that use a server that its status or tools changed.
//
// Contract: the mcp.Manager's OnStatus calls it; any goroutine.
func (h *Host) mcpChanged(st mcp.ServerStatus) {
	for _, s := range h.openSessions() {
		if s.mcp != nil {
			s.mcp.Changed(st)
		}
	}
}

// openSessions returns the host's sessions now, in no order.
func (h *Host) openSessions() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Values(h.sessions))
}

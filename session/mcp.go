// This file connects a session to MCP servers (package mcp): the servers it names (settings
// files, its own mcpServers) are acquired when it opens, and again when its folder's trust
// changes (refreshMCP: a folder trusted starts its servers, one revoked stops them), and
// their tools reach the pipeline through a toolexec.Catalog: deferred servers' tools are
// found with tool_search and activated by its addedToolNames (R12), eager servers' are
// active from the start.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/toolexec"
)

// ToolSearchName is the built-in tool that finds deferred MCP tools.
const ToolSearchName = "tool_search"

// Sources of tools, as tools/list names them.
const (
	SourceBuiltin = "builtin"
	SourceSession = "session"
	sourceMCP     = "mcp:"
)

// ServerInfo is one MCP server as mcp/servers lists it.
type ServerInfo struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
}

// mcpSet is a session's MCP servers and the catalog of their tools. s and own are set when
// it is made, then only read; cur and version are read and written atomically by any
// goroutine.
type mcpSet struct {
	s *Session
	// own is the session's own mcpServers, kept to work the servers out again.
	own json.RawMessage
	// cur is the servers the set holds now; refreshMCP replaces it whole.
	cur     atomic.Pointer[mcpHeld]
	version atomic.Uint64

	// refresh is taken by refreshMCP (a face's goroutine changing a folder's trust) and
	// closeMCP (closing the session or the host). The host's mu is taken under its mu
	// (acquire asks the host for the manager), never the other way round.
	refresh struct {
		// mu serializes refreshMCP and closeMCP, and guards closed.
		mu     sync.Mutex
		closed bool
	}

	// views is the catalog's cache, made again when a server changed (view): touched by
	// the loop's goroutine, the tool calls', and the face's (tools/list).
	views struct {
		// mu guards the fields below it.
		mu    sync.Mutex
		cache *mcpView
		gen   uint64 // counts the views made: the catalog's Version
	}
}

// mcpHeld is what a set holds at one time; never changed once published.
type mcpHeld struct {
	// servers are the handles the session acquired, by config name; configs their configs.
	servers map[string]*mcp.Server
	configs map[string]mcp.ServerConfig
	// untrusted are the servers an untrusted workspace's settings name: listed, never run.
	untrusted []string
}

// held returns what the set holds now.
func (set *mcpSet) held() *mcpHeld { return set.cur.Load() }

// mcpView is the catalog as of one version and one state of its servers.
type mcpView struct {
	gen     uint64
	version uint64
	held    *mcpHeld
	// states is each server's status and tool count when the view was made: a server
	// may be ready before its OnStatus has bumped the version, so both must match.
	states   string
	byName   map[string]mcp.Tool
	always   []toolexec.Tool
	deferred *mcp.Index
}

// sessionKey and callKey find the session and the tool call in the context of an MCP call
// (for elicitation and sampling).
type (
	sessionKey struct{}
	callKey    struct{}
)

// sessionOf returns the session whose tool call ctx belongs to.
func sessionOf(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// ToolCallID returns the id of the tool call an MCP server's request (elicitation,
// sampling) was made during, as the model wrote it; "" when ctx is not such a request's.
//
// Contract: pure; any goroutine.
func ToolCallID(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}

// mcpServers returns the servers a session names: the user settings', its workspace
// root's (only when that root is trusted: else listed as untrusted), then its own config's,
// later ones replacing earlier ones of the same name.
func (h *Host) mcpServers(cwd string, own json.RawMessage) (map[string]mcp.ServerConfig, []string, error) {
	out := map[string]mcp.ServerConfig{}
	var untrusted []string
	add := func(raw json.RawMessage, where string) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		servers, err := mcp.ParseServers(raw)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		for name, c := range servers {
			if c.Cwd == "" && !c.IsHTTP() {
				c.Cwd = cwd
			}
			out[name] = c
		}
		return nil
	}
	if h.loader != nil {
		user, ws, trusted := h.loader.MCPServers(cwd)
		if err := add(user, "user settings"); err != nil {
			h.opts.Report("settings: "+err.Error(), true)
		}
		if trusted {
			if err := add(ws, "workspace settings"); err != nil {
				h.opts.Report("settings: "+err.Error(), true)
			}
		} else if servers, err := mcp.ParseServers(ws); err == nil {
			for name := range servers {
				untrusted = append(untrusted, name)
			}
			sort.Strings(untrusted)
		}
	}
	if err := add(own, "mcpServers"); err != nil {
		return nil, nil, invalid("%v", err)
	}
	// A name the untrusted workspace shares with the user's settings or the session's own
	// servers is theirs: that one runs, and the name is not listed as untrusted.
	untrusted = slices.DeleteFunc(untrusted, func(n string) bool { _, own := out[n]; return own })
	return out, untrusted, nil
}

// CheckMCPServers reports what is wrong with an "mcpServers" object (the settings files'
// shape, see mcp.ParseServers), naming the field; nil when a session could run it.
//
// Contract: pure; safe for concurrent use.
func CheckMCPServers(raw json.RawMessage) error {
	_, err := mcp.ParseServers(raw)
	return err
}

// SameMCPServers reports whether two "mcpServers" objects name the same servers with the
// same configurations (a server's identity: one process serves both), and lists the names
// of each, sorted. Objects that do not parse are not the same.
//
// Contract: pure; safe for concurrent use.
func SameMCPServers(a, b json.RawMessage) (same bool, namesA, namesB []string) {
	pa, errA := mcp.ParseServers(a)
	pb, errB := mcp.ParseServers(b)
	if errA != nil || errB != nil {
		return false, nil, nil
	}
	namesA, namesB = slices.Sorted(maps.Keys(pa)), slices.Sorted(maps.Keys(pb))
	if !slices.Equal(namesA, namesB) {
		return false, namesA, namesB
	}
	for n, c := range pa {
		if pb[n].Key() != c.Key() {
			return false, namesA, namesB
		}
	}
	return true, namesA, namesB
}

// openMCP acquires the session's servers (they start in the background); own is the
// session's own mcpServers, which servers includes.
func (s *Session) openMCP(servers map[string]mcp.ServerConfig, untrusted []string, own json.RawMessage) {
	set := &mcpSet{s: s, own: own}
	s.mcp = set
	set.cur.Store(set.acquire(&mcpHeld{}, servers, untrusted))
}

// acquire returns what the set holds with the servers configs: the handles of old whose
// configuration is the same are kept, the others acquired (they start in the background).
func (set *mcpSet) acquire(old *mcpHeld, configs map[string]mcp.ServerConfig, untrusted []string) *mcpHeld {
	next := &mcpHeld{servers: map[string]*mcp.Server{}, configs: configs, untrusted: untrusted}
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if srv, ok := old.servers[name]; ok && old.configs[name].Key() == configs[name].Key() {
			next.servers[name] = srv
			continue
		}
		next.servers[name] = set.s.host.mcpManager().Acquire(name, configs[name])
	}
	return next
}

// closeMCP releases the session's servers: now stops at once those no other session holds
// (the session was closed: nothing it started runs on), else they linger (the host is
// closing, and its manager stops them all).
func (s *Session) closeMCP(now bool) {
	if s.mcp == nil {
		return
	}
	s.mcp.refresh.mu.Lock()
	defer s.mcp.refresh.mu.Unlock()
	s.mcp.refresh.closed = true
	for _, srv := range s.mcp.held().servers {
		if now {
			srv.ReleaseNow()
		} else {
			srv.Release()
		}
	}
}

// refreshMCP works out the session's servers again, after its folder's trust changed: a
// server its workspace settings name starts once the folder is trusted, and one that is no
// longer named (the folder's trust was revoked) is released and, unless another session
// holds it, stopped at once. A call in flight on a stopped server fails. The catalog then
// offers the tools of the servers held now.
//
// Contract: any goroutine; it does not wait for servers to start or stop.
func (s *Session) refreshMCP() {
	set := s.mcp
	if set == nil {
		return
	}
	set.refresh.mu.Lock()
	defer set.refresh.mu.Unlock()
	if set.refresh.closed {
		return
	}
	configs, untrusted, err := s.host.mcpServers(s.ws.Cwd(), set.own)
	if err != nil {
		return // own was read when the session opened: it cannot fail now
	}
	old := set.held()
	next := set.acquire(old, configs, untrusted)
	set.cur.Store(next)
	set.changed()
	for name, srv := range old.servers {
		if next.servers[name] != srv {
			srv.ReleaseNow()
		}
	}
}

// changed is called when a server of the set changed status or tools.
func (set *mcpSet) changed() { set.version.Add(1) }

// uses reports whether the set has a server of that identity.
func (set *mcpSet) uses(st mcp.ServerStatus) bool {
	srv := set.held().servers[st.Name]
	return srv != nil && srv.Status().ID == st.ID
}

// view returns the catalog as of now.
func (set *mcpSet) view() *mcpView {
	v := set.version.Load()
	held := set.held()
	states := held.states()
	c := &set.views
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache != nil && c.cache.version == v && c.cache.held == held && c.cache.states == states {
		return c.cache
	}
	c.gen++
	cv := &mcpView{gen: c.gen, version: v, held: held, states: states, byName: map[string]mcp.Tool{}}
	var deferred []mcp.Tool
	names := held.names()
	handles := make([]*mcp.Server, len(names))
	for i, name := range names {
		handles[i] = held.servers[name]
	}
	// AllTools keeps names unique across servers (two long names cut to 64 characters). A
	// server that failed keeps its last tools: calling one restarts it (with backoff).
	for _, t := range mcp.AllTools(handles...) {
		cv.byName[t.Name] = t
		if held.configs[t.Server].Load == mcp.LoadEager {
			cv.always = append(cv.always, set.tool(held, t))
		} else {
			deferred = append(deferred, t)
		}
	}
	if len(deferred) > 0 {
		cv.deferred = mcp.NewIndex(deferred)
	}
	// tool_search is offered while a deferred server starts too, so a prompt sent as the
	// session opens can find its tools: the search waits for it.
	if len(deferred) > 0 || len(held.startingDeferred()) > 0 {
		cv.always = append([]toolexec.Tool{set.searchTool()}, cv.always...)
	}
	c.cache = cv
	return cv
}

// Lookup implements toolexec.Catalog: a server's tool as it is now (a call waits while its
// server starts, and restarts one that failed); a name of an MCP tool no server of the
// session offers now is known but unavailable, so a transcript that activated it keeps it
// (R12) and a call gets an error saying why.
func (set *mcpSet) Lookup(name string) (toolexec.Tool, bool) {
	cv := set.view()
	held := cv.held
	if name == ToolSearchName {
		if cv.deferred == nil && len(held.startingDeferred()) == 0 {
			return toolexec.Tool{Name: name, View: mcp.SearchView, Unavailable: "no MCP server of this session offers deferred tools now"}, true
		}
		return set.searchTool(), true
	}
	if !strings.HasPrefix(name, "mcp__") {
		return toolexec.Tool{}, false
	}
	t, found := cv.byName[name]
	server := t.Server
	if !found {
		server = serverOfName(name, held.servers)
	}
	srv := held.servers[server]
	view := mcp.View(name, nil)
	switch {
	case srv == nil:
		return toolexec.Tool{Name: name, View: view, Unavailable: "no MCP server of this session offers it (the server it came from is no longer configured)"}, true
	case !found:
		st := srv.Status()
		if st.Status == mcp.StatusReady {
			return toolexec.Tool{Name: name, View: view, Unavailable: fmt.Sprintf("the MCP server %s no longer offers it", server)}, true
		}
		return toolexec.Tool{Name: name, View: view, Unavailable: statusText(st)}, true
	}
	return set.tool(held, t), true
}

// Always implements toolexec.Catalog: tool_search when deferred tools exist, and the eager
// servers' tools.
func (set *mcpSet) Always() []toolexec.Tool { return set.view().always }

// Version implements toolexec.Catalog: it moves whenever the view is made again, which is
// when a server's status or tools changed (told or seen).
func (set *mcpSet) Version() uint64 { return set.view().gen }

// serverOfName returns the configured server whose prefix a tool name has, the longest one.
func serverOfName(name string, servers map[string]*mcp.Server) string {
	best := ""
	for s := range servers {
		if p := "mcp__" + s + "__"; strings.HasPrefix(name, p) && len(s) > len(best) {
			best = s
		}
	}
	return best
}

func statusText(st mcp.ServerStatus) string {
	switch st.Status {
	case mcp.StatusStarting:
		return fmt.Sprintf("its MCP server %s is still starting; call it again in a moment", st.Name)
	case mcp.StatusFailed:
		return fmt.Sprintf("its MCP server %s failed: %s", st.Name, st.Error)
	}
	return fmt.Sprintf("its MCP server %s is %s", st.Name, st.Status)
}

// tool is the pipeline's tool for an MCP tool of held: arguments validated against the
// server's schema, the call made on the server with progress, cancelled with ctx.
func (set *mcpSet) tool(held *mcpHeld, t mcp.Tool) toolexec.Tool {
	srv := held.servers[t.Server]
	s := set.s
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Original, t.Server)
	}
	return toolexec.Tool{
		Name: t.Name, Description: desc, Parameters: t.InputSchema, View: mcp.View(t.Name, t.Annotations),
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			ctx = context.WithValue(context.WithValue(ctx, sessionKey{}, s), callKey{}, call.ID)
			return srv.Call(ctx, t.Original, call.Args, onUpdate)
		},
	}
}

// annotations returns an MCP tool's hints (readOnlyHint, destructiveHint...), for the
// approval question; nil for other tools.
func (s *Session) annotations(name string) map[string]any {
	if s.mcp == nil || !strings.HasPrefix(name, "mcp__") {
		return nil
	}
	return s.mcp.view().byName[name].Annotations
}

// searchTool is tool_search: it ranks the deferred tools and activates those it returns.
func (set *mcpSet) searchTool() toolexec.Tool {
	return toolexec.Tool{
		Name: ToolSearchName, View: mcp.SearchView,
		Description: "Find tools of the MCP servers of this session that are not loaded yet. Give a few words of what you need " +
			"(or a tool's exact name); you get the best matching tools with their descriptions, and they can be called from your next step on.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"What the tool should do, or its name."},"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return at most. Default 5."}},"required":["query"],"additionalProperties":false}`),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := call.Decode(&a); err != nil {
				return toolexec.Result{}, err
			}
			// Servers still starting are waited for (their start is bounded by the
			// manager's StartTimeout; an abort ends the wait).
			for _, srv := range set.held().startingDeferred() {
				// A server that fails is named in the notes below.
				if srv.WaitReady(ctx); ctx.Err() != nil {
					return toolexec.Result{}, ctx.Err()
				}
			}
			cv := set.view()
			notes := cv.held.unavailableNotes()
			if cv.deferred == nil {
				return toolexec.TextResult("No MCP server of this session offers tools to load now." + notes), nil
			}
			found := cv.deferred.Search(a.Query, a.Limit)
			if len(found) == 0 {
				return toolexec.TextResult(fmt.Sprintf("No tool matches %q.", a.Query) + notes), nil
			}
			var b strings.Builder
			names := make([]string, 0, len(found))
			fmt.Fprintf(&b, "%d tool(s) found; they can be called from your next step on:\n", len(found))
			for _, t := range found {
				fmt.Fprintf(&b, "\n- %s (MCP server %s): %s", t.Name, t.Server, oneLine(t.Description))
				names = append(names, t.Name)
			}
			b.WriteString(notes)
			return toolexec.Result{Content: []llm.Content{llm.Text(b.String())}, AddedToolNames: names}, nil
		},
	}
}

// states describes the status and tool count of every server held, in name order.
func (set *mcpHeld) states() string {
	var b strings.Builder
	for _, name := range set.names() {
		st := set.servers[name].Status()
		fmt.Fprintf(&b, "%s\x00%s\x00%d\x00", st.ID, st.Status, st.Tools)
	}
	return b.String()
}

// startingDeferred returns the servers with deferred tools that are starting now, by name.
func (set *mcpHeld) startingDeferred() []*mcp.Server {
	var out []*mcp.Server
	for _, name := range set.names() {
		srv := set.servers[name]
		if set.configs[name].Load != mcp.LoadEager && srv.Status().Status == mcp.StatusStarting {
			out = append(out, srv)
		}
	}
	return out
}

// unavailableNotes tells the model which servers with deferred tools are not ready, and
// why: their tools may be missing from a search. It is "" when all are ready.
func (set *mcpHeld) unavailableNotes() string {
	var b strings.Builder
	for _, name := range set.names() {
		if set.configs[name].Load == mcp.LoadEager {
			continue
		}
		switch st := set.servers[name].Status(); st.Status {
		case mcp.StatusReady:
		case mcp.StatusFailed:
			fmt.Fprintf(&b, "\n\nNote: the MCP server %s failed (%s); its tools may be missing here. Calling one of them restarts it.", name, st.Error)
		default:
			fmt.Fprintf(&b, "\n\nNote: the MCP server %s is %s; its tools may be missing here.", name, st.Status)
		}
	}
	return b.String()
}

// names returns the names of the servers held, sorted.
func (set *mcpHeld) names() []string {
	names := make([]string, 0, len(set.servers))
	for name := range set.servers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// MCPServers lists the session's MCP servers for mcp/servers.
func (s *Session) MCPServers() []ServerInfo {
	if s.mcp == nil {
		return nil
	}
	var out []ServerInfo
	held := s.mcp.held()
	for name, srv := range held.servers {
		st := srv.Status()
		out = append(out, ServerInfo{Name: name, Status: string(st.Status), Tools: st.Tools, Error: st.Error})
	}
	for _, name := range held.untrusted {
		out = append(out, ServerInfo{Name: name, Status: "untrusted", Error: "the workspace folder is not trusted, so pid does not start the servers its settings name"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MCPServers lists every MCP server of the host's sessions (mcp/servers): those running,
// starting or failed, and those an untrusted workspace names, each once.
func (h *Host) MCPServers() []ServerInfo {
	h.mu.Lock()
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	seen := map[string]bool{}
	out := []ServerInfo{}
	for _, s := range sessions {
		for _, si := range s.MCPServers() {
			if key := si.Name + "\x00" + si.Status; !seen[key] {
				seen[key] = true
				out = append(out, si)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
				face(ServerInfo{Name: st.Name, Status: string(st.Status), Tools: st.Tools, Error: st.Error})
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
	if req == nil {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	q := Elicitation{Server: server, ToolCallID: ToolCallID(ctx), Mode: req.Mode, Message: req.Message, URL: req.URL, ElicitationID: req.ElicitationID}
	if q.Mode == "" {
		q.Mode = "form"
		if req.URL != "" || req.ElicitationID != "" {
			q.Mode = "url"
		}
	}
	var err error
	if q.Params, err = json.Marshal(req); err != nil {
		return nil, err
	}
	if req.RequestedSchema != nil {
		b, err := json.Marshal(req.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("the requestedSchema of MCP server %s cannot be encoded: %v", server, err)
		}
		if string(b) != "null" {
			q.RequestedSchema = b
		}
	}
	a, err := s.face.Elicit(ctx, s, q)
	if err != nil {
		return nil, err
	}
	return &sdk.ElicitResult{Meta: a.Meta, Action: a.Action, Content: a.Content}, nil
}

// mcpChanged tells the sessions that use a server that its status or tools changed.
//
// Contract: the mcp.Manager's OnStatus calls it; any goroutine.
func (h *Host) mcpChanged(st mcp.ServerStatus) {
	h.mu.Lock()
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		if s.mcp != nil && s.mcp.uses(st) {
			s.mcp.changed()
		}
	}
}

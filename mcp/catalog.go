// This file holds Catalog: the MCP servers one session holds and the catalog of their tools
// the pipeline looks up (toolexec.Catalog). Eager servers' tools are active from the start;
// deferred servers' are found with tool_search and activated by its addedToolNames (R12).

package mcp

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

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// SearchToolName is the built-in tool that finds the deferred servers' tools.
const SearchToolName = "tool_search"

// Catalog is one session's MCP servers and the tools they offer. Its methods are safe for
// concurrent use.
//
// Lock order: refresh.mu (Set, Close), then the Manager's; views.mu is taken alone, while
// the servers' status and tools are read.
type Catalog struct {
	m *Manager
	// callContext, if set, gives each call of a server's tool its context (see NewCatalog).
	callContext func(ctx context.Context, callID string) context.Context
	// cur is the servers held now, which Set replaces whole; version moves when a server
	// held changed (Changed).
	cur     atomic.Pointer[held]
	version atomic.Uint64

	refresh struct {
		// mu serializes Set and Close, and guards closed.
		mu     sync.Mutex
		closed bool
	}

	// views is the catalog's cache, made again when a server changed (view): touched by
	// the loop's goroutine, the tool calls', and the face's (the tool list).
	views struct {
		// mu guards the fields below it.
		mu    sync.Mutex
		cache *view
		gen   uint64 // counts the views made: the catalog's Version
	}
}

// held is what a catalog holds at one time; never changed once published.
type held struct {
	// servers are the handles acquired, by config name; configs their configs.
	servers map[string]*Server
	configs map[string]ServerConfig
	// untrusted are the servers an untrusted workspace's settings name: listed, never run.
	untrusted []string
}

// view is the catalog as of one version and one state of its servers.
type view struct {
	gen     uint64
	version uint64
	held    *held
	// states is each server's status and tool count when the view was made: a server may
	// be ready before its OnStatus has bumped the version, so both must match.
	states   string
	byName   map[string]Tool
	always   []toolexec.Tool
	deferred *Index
}

// NewCatalog returns a catalog of m's servers that holds none yet (Set gives it its
// servers). callContext, if not nil, gets the context of each call of a server's tool and
// the call's id, and returns the context the call runs in: the server's requests made
// during it (elicitation, sampling) get that context (see Options.Elicit).
func NewCatalog(m *Manager, callContext func(ctx context.Context, callID string) context.Context) *Catalog {
	c := &Catalog{m: m, callContext: callContext}
	c.cur.Store(&held{})
	return c
}

// Set makes the catalog hold the servers of configs, and list untrusted as servers that are
// named but never run: a handle of the same name and configuration (ServerConfig.Key) is
// kept, the others acquired (they start in the background); a server it no longer names is
// released and, unless another catalog holds it, stopped at once (a call in flight on it
// fails). The tools of the servers held now are offered from then on. After Close it does
// nothing.
//
// Contract: safe for concurrent use; it waits for no server to start or stop.
func (c *Catalog) Set(configs map[string]ServerConfig, untrusted []string) {
	c.refresh.mu.Lock()
	defer c.refresh.mu.Unlock()
	if c.refresh.closed {
		return
	}
	old := c.cur.Load()
	next := &held{servers: map[string]*Server{}, configs: configs, untrusted: untrusted}
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		if srv, ok := old.servers[name]; ok && old.configs[name].Key() == configs[name].Key() {
			next.servers[name] = srv
			continue
		}
		next.servers[name] = c.m.Acquire(name, configs[name])
	}
	c.cur.Store(next)
	c.version.Add(1)
	for name, srv := range old.servers {
		if next.servers[name] != srv {
			srv.ReleaseNow()
		}
	}
}

// Close releases every server held: now stops at once those no other catalog holds (the
// session was closed), else they linger (Options.Linger). Set does nothing afterwards.
//
// Contract: safe for concurrent use and to call more than once.
func (c *Catalog) Close(now bool) {
	c.refresh.mu.Lock()
	defer c.refresh.mu.Unlock()
	if c.refresh.closed {
		return
	}
	c.refresh.closed = true
	for _, srv := range c.cur.Load().servers {
		if now {
			srv.ReleaseNow()
		} else {
			srv.Release()
		}
	}
}

// Changed tells the catalog that a server changed status or tools (the Manager's
// OnStatus): when it holds that server, its next view is made again.
//
// Contract: any goroutine; it never blocks.
func (c *Catalog) Changed(st ServerStatus) {
	if srv := c.cur.Load().servers[st.Name]; srv != nil && srv.Status().ID == st.ID {
		c.version.Add(1)
	}
}

// view returns the catalog as of now.
func (c *Catalog) view() *view {
	v := c.version.Load()
	h := c.cur.Load()
	states := h.states()
	vc := &c.views
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.cache != nil && vc.cache.version == v && vc.cache.held == h && vc.cache.states == states {
		return vc.cache
	}
	vc.gen++
	cv := &view{gen: vc.gen, version: v, held: h, states: states, byName: map[string]Tool{}}
	var deferred []Tool
	names := h.names()
	handles := make([]*Server, len(names))
	for i, name := range names {
		handles[i] = h.servers[name]
	}
	// AllTools keeps names unique across servers (two long names cut to 64 characters). A
	// server that failed keeps its last tools: calling one restarts it (with backoff).
	for _, t := range AllTools(handles...) {
		cv.byName[t.Name] = t
		if h.configs[t.Server].Load == LoadEager {
			cv.always = append(cv.always, c.tool(h, t))
		} else {
			deferred = append(deferred, t)
		}
	}
	if len(deferred) > 0 {
		cv.deferred = NewIndex(deferred)
	}
	// tool_search is offered while a deferred server starts too, so a prompt sent as the
	// session opens can find its tools: the search waits for it.
	if len(deferred) > 0 || len(h.startingDeferred()) > 0 {
		cv.always = append([]toolexec.Tool{c.searchTool()}, cv.always...)
	}
	vc.cache = cv
	return cv
}

// Lookup implements toolexec.Catalog: a server's tool as it is now (a call waits while its
// server starts, and restarts one that failed); a name of an MCP tool no server of the
// catalog offers now is known but unavailable, so a transcript that activated it keeps it
// (R12) and a call gets an error saying why.
func (c *Catalog) Lookup(name string) (toolexec.Tool, bool) {
	cv := c.view()
	h := cv.held
	if name == SearchToolName {
		if cv.deferred == nil && len(h.startingDeferred()) == 0 {
			return toolexec.Tool{Name: name, View: SearchView, Unavailable: "no MCP server of this session offers deferred tools now"}, true
		}
		return c.searchTool(), true
	}
	if !strings.HasPrefix(name, "mcp__") {
		return toolexec.Tool{}, false
	}
	t, found := cv.byName[name]
	server := t.Server
	if !found {
		server = serverOfName(name, h.servers)
	}
	srv := h.servers[server]
	view := View(name, nil)
	switch {
	case srv == nil:
		return toolexec.Tool{Name: name, View: view, Unavailable: "no MCP server of this session offers it (the server it came from is no longer configured)"}, true
	case !found:
		st := srv.Status()
		if st.Status == StatusReady {
			return toolexec.Tool{Name: name, View: view, Unavailable: fmt.Sprintf("the MCP server %s no longer offers it", server)}, true
		}
		return toolexec.Tool{Name: name, View: view, Unavailable: statusText(st)}, true
	}
	return c.tool(h, t), true
}

// Always implements toolexec.Catalog: tool_search when deferred tools exist, and the eager
// servers' tools.
func (c *Catalog) Always() []toolexec.Tool { return c.view().always }

// Version implements toolexec.Catalog: it moves whenever the view is made again, which is
// when a server's status or tools changed (told or seen).
func (c *Catalog) Version() uint64 { return c.view().gen }

// ToolNames returns the names of every tool the catalog's servers offer now, sorted.
func (c *Catalog) ToolNames() []string { return slices.Sorted(maps.Keys(c.view().byName)) }

// Annotations returns the hints (readOnlyHint, destructiveHint, title...) the server of
// the MCP tool named name gives about it, as the server sent them; nil for other names.
// They are claims of the server's: show them, never trust them to decide.
//
// Contract: safe for concurrent use; the map must not be modified.
func (c *Catalog) Annotations(name string) map[string]any {
	if !strings.HasPrefix(name, "mcp__") {
		return nil
	}
	return c.view().byName[name].Annotations
}

// ServerOf returns the server (its config name) the tool named name comes from, "" when
// none of the catalog's.
func (c *Catalog) ServerOf(name string) string {
	cv := c.view()
	if t, ok := cv.byName[name]; ok {
		return t.Server
	}
	return serverOfName(name, cv.held.servers)
}

// Servers returns the status of every server the catalog names, by name: those held, and
// the untrusted ones (StatusUntrusted, with the reason as Error).
func (c *Catalog) Servers() []ServerStatus {
	h := c.cur.Load()
	var out []ServerStatus
	for name, srv := range h.servers {
		st := srv.Status()
		st.Name = name
		out = append(out, st)
	}
	for _, name := range h.untrusted {
		out = append(out, ServerStatus{Name: name, Status: StatusUntrusted, Error: "the workspace folder is not trusted, so pid does not start the servers its settings name"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WaitStarting waits for the servers that are starting now, one after the other in name
// order (each start is bounded by Options.StartTimeout; a server that fails is waited for no
// more), or until ctx ends.
func (c *Catalog) WaitStarting(ctx context.Context) {
	h := c.cur.Load()
	for _, name := range h.names() {
		srv := h.servers[name]
		if srv.Status().Status != StatusStarting {
			continue
		}
		if srv.WaitReady(ctx); ctx.Err() != nil {
			return
		}
	}
}

// serverOfName returns the configured server whose prefix a tool name has, the longest one.
func serverOfName(name string, servers map[string]*Server) string {
	best := ""
	for s := range servers {
		if p := "mcp__" + s + "__"; strings.HasPrefix(name, p) && len(s) > len(best) {
			best = s
		}
	}
	return best
}

func statusText(st ServerStatus) string {
	switch st.Status {
	case StatusStarting:
		return fmt.Sprintf("its MCP server %s is still starting; call it again in a moment", st.Name)
	case StatusFailed:
		return fmt.Sprintf("its MCP server %s failed: %s", st.Name, st.Error)
	}
	return fmt.Sprintf("its MCP server %s is %s", st.Name, st.Status)
}

// tool is the pipeline's tool for an MCP tool of h: arguments validated against the
// server's schema, the call made on the server with progress, cancelled with ctx.
func (c *Catalog) tool(h *held, t Tool) toolexec.Tool {
	srv := h.servers[t.Server]
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Original, t.Server)
	}
	return toolexec.Tool{
		Name: t.Name, Description: desc, Parameters: t.InputSchema, View: View(t.Name, t.Annotations),
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			if c.callContext != nil {
				ctx = c.callContext(ctx, call.ID)
			}
			return srv.Call(ctx, t.Original, call.Args, onUpdate)
		},
	}
}

// searchParams are tool_search's parameters.
var searchParams = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"What the tool should do, or its name."},"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return at most. Default 5."}},"required":["query"],"additionalProperties":false}`)

// searchTool is tool_search: it ranks the deferred tools and activates those it returns.
func (c *Catalog) searchTool() toolexec.Tool {
	return toolexec.Tool{
		Name: SearchToolName, View: SearchView,
		Description: "Find tools of the MCP servers of this session that are not loaded yet. Give a few words of what you need " +
			"(or a tool's exact name); you get the best matching tools with their descriptions, and they can be called from your next step on.",
		Parameters: searchParams,
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
			for _, srv := range c.cur.Load().startingDeferred() {
				// A server that fails is named in the notes below.
				if srv.WaitReady(ctx); ctx.Err() != nil {
					return toolexec.Result{}, ctx.Err()
				}
			}
			return c.search(a.Query, a.Limit), nil
		},
	}
}

// search is tool_search's answer: the tools found for query, activated, with the servers
// that are not ready named.
func (c *Catalog) search(query string, limit int) toolexec.Result {
	cv := c.view()
	notes := cv.held.unavailableNotes()
	if cv.deferred == nil {
		return toolexec.TextResult("No MCP server of this session offers tools to load now." + notes)
	}
	found := cv.deferred.Search(query, limit)
	if len(found) == 0 {
		return toolexec.TextResult(fmt.Sprintf("No tool matches %q.", query) + notes)
	}
	var b strings.Builder
	names := make([]string, 0, len(found))
	fmt.Fprintf(&b, "%d tool(s) found; they can be called from your next step on:\n", len(found))
	for _, t := range found {
		fmt.Fprintf(&b, "\n- %s (MCP server %s): %s", t.Name, t.Server, oneLine(t.Description))
		names = append(names, t.Name)
	}
	b.WriteString(notes)
	return toolexec.Result{Content: []llm.Content{llm.Text(b.String())}, AddedToolNames: names}
}

// states describes the status and tool count of every server held, in name order.
func (h *held) states() string {
	var b strings.Builder
	for _, name := range h.names() {
		st := h.servers[name].Status()
		fmt.Fprintf(&b, "%s\x00%s\x00%d\x00", st.ID, st.Status, st.Tools)
	}
	return b.String()
}

// startingDeferred returns the servers with deferred tools that are starting now, by name.
func (h *held) startingDeferred() []*Server {
	var out []*Server
	for _, name := range h.names() {
		srv := h.servers[name]
		if h.configs[name].Load != LoadEager && srv.Status().Status == StatusStarting {
			out = append(out, srv)
		}
	}
	return out
}

// unavailableNotes tells the model which servers with deferred tools are not ready, and
// why: their tools may be missing from a search. It is "" when all are ready.
func (h *held) unavailableNotes() string {
	var b strings.Builder
	for _, name := range h.names() {
		if h.configs[name].Load == LoadEager {
			continue
		}
		switch st := h.servers[name].Status(); st.Status {
		case StatusReady:
		case StatusFailed:
			fmt.Fprintf(&b, "\n\nNote: the MCP server %s failed (%s); its tools may be missing here. Calling one of them restarts it.", name, st.Error)
		default:
			fmt.Fprintf(&b, "\n\nNote: the MCP server %s is %s; its tools may be missing here.", name, st.Status)
		}
	}
	return b.String()
}

// names returns the names of the servers held, sorted.
func (h *held) names() []string { return slices.Sorted(maps.Keys(h.servers)) }

// oneLine is a description on one line, cut to 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

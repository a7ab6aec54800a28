// Package mcp is pid's client of MCP (Model Context Protocol) servers: tool sources a
// session names in "mcpServers" (see ParseServers). It runs them through the official Go
// SDK (github.com/modelcontextprotocol/go-sdk): stdio servers as child processes that
// procgroup.StartGroup starts (see process.go for why not the SDK's CommandTransport), remote
// ones over streamable HTTP.
//
// The entry point is Manager: one per daemon. A session Acquires each server it names and
// gets a *Server handle; servers start in the background, so nothing waits for a slow one.
// Sessions that name the same server with the same configuration share one process. Tools
// lists a server's tools under pid's names (ToolName), Call runs one, Release gives the
// handle back, and Close stops everything. Search and Index rank tools for tool_search.
//
// What the session layer must know:
//
//   - Goroutines: a ready stdio server costs five (two of pid's: the process's waiter and
//     its stderr reader; three of the SDK's: its pipe reader, its dispatcher, and the
//     tools/list_changed subscription of protocol 2026-07-28), plus tools' spawner for
//     the first child; an HTTP server about six (the SDK's and net/http's). A start, a
//     tool-list refresh or a stop adds one while it runs.
//   - Release: the process keeps running Options.Linger after its last handle is
//     released (so a session closed and reopened, or the next session, finds it ready),
//     then stops; Linger < 0 stops it at once. Close stops every server whatever its users.
//   - A server that crashes is marked failed (OnStatus) and keeps its last tool list; the
//     next Call restarts it, after a backoff that grows with consecutive failures (none
//     the first time, then 1 s, 2 s, ... up to 30 s). WaitReady never restarts: it waits
//     while the server starts and returns the failure otherwise.
//   - Errors a call returns name the server and, for a stdio server that exited, the last
//     2 KiB of its stderr (the last 8 KiB are kept).
//   - Stopping a stdio server: stdin closed, SIGTERM to its group after Options.StopGrace,
//     SIGKILL after another; at most about twice StopGrace.
package mcp

//lint:file-ignore SA1019 Options.Sample takes the SDK's sampling types, which protocol 2026-07-28 deprecates (see conn.go)

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Status is the state of a server.
type Status string

const (
	StatusStarting  Status = "starting"  // its process or connection is being set up
	StatusReady     Status = "ready"     // its tools are listed and it takes calls
	StatusFailed    Status = "failed"    // it could not start, or it crashed (Error says why)
	StatusUntrusted Status = "untrusted" // set by the session layer: a workspace's server pid does not start
)

// ServerStatus describes a server for the editor.
type ServerStatus struct {
	Name   string // the server's config name
	ID     string // equal for the handles that share one server (same name and config)
	Status Status
	Tools  int    // how many tools it offers (kept after a crash)
	Error  string // why it failed, for a person: what happened and what to do
}

// Tool is one tool a server offers, as pid names it.
type Tool struct {
	Name        string // mcp__server__tool, sanitized, unique within its server (see AllTools)
	Server      string // the server's config name
	Original    string // the tool's name on the server
	Description string
	// InputSchema is the tool's JSON Schema for its arguments; a schema pid's validator
	// cannot compile is replaced by {"type":"object"} (the server still checks).
	InputSchema json.RawMessage
	// Annotations are the server's hints (readOnlyHint, destructiveHint, idempotentHint,
	// openWorldHint, title), nil when it sent none. Hints: shown, never trusted.
	Annotations map[string]any
}

// Options configures a Manager. Every field is optional.
type Options struct {
	// Log receives what an operator may want: servers starting, failing, their stderr
	// (debug level). Nil discards.
	Log *slog.Logger
	// OnStatus is called when a server's status or tool list changes, with the new state.
	//
	// Contract: called from any goroutine, never concurrently for one server, always with
	// the latest state; it must not block long, nor call into the Manager or a Server
	// (other than Status and Tools).
	OnStatus func(ServerStatus)
	// Elicit routes an elicitation/create request to the editor. ctx is the context of the
	// Call it belongs to (with its values, so the session can find its editor) when pid
	// can tell: always for servers that embed the request in the call (protocol
	// 2026-07-28), and for older ones when exactly one call of that server is running.
	// Nil, an error, or a nil result declines. A server has one question here at a time
	// (the next waits for the answer) and at most 10 per call: the rest are refused
	// without calling it.
	//
	// Contract: called from the SDK's goroutines, for different servers concurrently; it
	// must return when ctx is done.
	Elicit func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error)
	// Sample answers a sampling/createMessage request of a server whose config sets
	// "sampling": true (the others are declined with an error saying so). ctx is chosen as
	// for Elicit. Nil declines every request, saying pid cannot sample.
	//
	// Contract: as Elicit.
	Sample func(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	// Roots returns the workspace folders (absolute paths) for roots/list. It is read when
	// a server starts, before each call, when a server asks, and on RootsChanged. Nil
	// means no roots.
	//
	// Contract: called from any goroutine; must be quick and must not call the Manager.
	Roots func() []string
	// StopGrace is how long a stopping stdio server gets after its stdin is closed, and
	// again after SIGTERM, before SIGKILL. Default 2 s.
	StopGrace time.Duration
	// StartTimeout bounds a server's start (initialize and the first tools/list).
	// Default 30 s.
	StartTimeout time.Duration
	// Linger is how long a server keeps running once no handle uses it. Default 1 minute;
	// negative: it stops at once.
	Linger time.Duration
	// Version is pid's version, sent to servers in clientInfo.
	Version string
}

// Defaults of Options.
const (
	DefaultStopGrace    = 2 * time.Second
	DefaultStartTimeout = 30 * time.Second
	DefaultLinger       = time.Minute
)

// Manager runs the MCP servers of a daemon's sessions. It is safe for concurrent use.
type Manager struct {
	o   Options
	log *slog.Logger
	bg  tracker
	// protocolVersion, when set, is the version the clients ask for (tests use it to
	// speak the protocol of older servers).
	protocolVersion string

	// mu guards the fields below it; it is taken before any server's mu.
	mu      sync.Mutex
	servers map[string]*server // by name + "\x00" + ServerConfig.Key
	closed  bool
}

// NewManager returns a Manager with nothing running.
func NewManager(o Options) *Manager {
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{o: o, log: log, servers: map[string]*server{}}
}

// Acquire makes the Manager run the server name with cfg and returns a handle on it: the
// running one when a handle with the same name and configuration (ServerConfig.Key) is
// held or lingering, else a new one starting in the background; a failed one starts again
// in the background if its backoff is over. It never waits.
//
// Contract: safe for concurrent use; cfg should have been checked by ParseServers (a
// config it would reject fails at start, with the reason in the status). Each handle must
// be Released once. After Close the handle's server is failed and never starts.
func (m *Manager) Acquire(name string, cfg ServerConfig) *Server {
	key := name + "\x00" + cfg.Key()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		s := newServer(m, name, cfg, key)
		s.gone = true
		s.status = StatusFailed
		s.errText = "pid is shutting down"
		return &Server{s: s}
	}
	s := m.servers[key]
	isNew := s == nil
	if isNew {
		s = newServer(m, name, cfg, key)
		m.servers[key] = s
	}
	s.mu.Lock()
	s.refs++
	if s.linger != nil {
		s.linger.Stop()
		s.linger = nil
	}
	// A new server starts; so does one that failed (a session opening is a use), once
	// its backoff is over.
	start := isNew || s.status == StatusFailed && !time.Now().Before(s.retryAt)
	if start {
		s.startLocked()
	}
	s.mu.Unlock()
	m.mu.Unlock()
	if start {
		s.notify()
	}
	return &Server{s: s}
}

// Servers returns the status of every server the Manager runs (held or lingering),
// sorted by name.
//
// Contract: safe for concurrent use.
func (m *Manager) Servers() []ServerStatus {
	m.mu.Lock()
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	m.mu.Unlock()
	out := make([]ServerStatus, len(list))
	for i, s := range list {
		out[i] = s.statusNow()
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// RootsChanged tells the running servers that Options.Roots may answer differently now;
// those whose roots changed get notifications/roots/list_changed.
//
// Contract: safe for concurrent use; it does not wait for the servers.
func (m *Manager) RootsChanged() {
	m.mu.Lock()
	var conns []*conn
	for _, s := range m.servers {
		s.mu.Lock()
		if s.conn != nil {
			conns = append(conns, s.conn)
		}
		s.mu.Unlock()
	}
	m.mu.Unlock()
	for _, c := range conns {
		c.syncRoots()
	}
}

// Close stops every server (see the package comment for the sequence) and waits until
// their processes have exited and every goroutine of the Manager has returned. Calls in
// flight end with an error; handles stay valid but their servers are failed.
//
// Contract: safe to call more than once and concurrently with anything; it takes at most
// about twice StopGrace (plus the HTTP servers' session deletion, at most 5 s).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	clear(m.servers)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop("pid is shutting down")
		}()
	}
	wg.Wait()
	m.bg.closeAndWait()
}

// tracker runs the Manager's background goroutines so that Close can wait for them.
type tracker struct {
	// mu guards closed, and orders wg.Add before closeAndWait's Wait.
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// goFunc runs f on a new goroutine and reports whether it did (not after closeAndWait).
func (t *tracker) goFunc(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
}

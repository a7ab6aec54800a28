// This file holds a server shared by the sessions that name it (server) and their handles
// on it (Server): starting in the background, restarting after a crash with backoff,
// lingering after the last release, and stopping.

package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
)

// Backoff between restarts: none after the first failure, then restartBase doubling up to
// restartMax. A server that ran for stableAfter before failing starts the count again.
const (
	restartBase = time.Second
	restartMax  = 30 * time.Second
	stableAfter = time.Minute
)

// server is one MCP server (one process, or one HTTP session) shared by the handles that
// name it with the same configuration.
type server struct {
	m    *Manager
	name string
	cfg  ServerConfig
	key  string
	id   string
	log  *slog.Logger

	// notifyMu serializes OnStatus calls for this server, so they come in order.
	notifyMu sync.Mutex

	// mu guards the fields below it.
	mu     sync.Mutex
	refs   int
	linger *time.Timer // running while no handle holds the server
	// gone is set when the server is stopped for good: it never starts again.
	gone    bool
	status  Status
	errText string
	tools   []Tool // the last tool list, kept after a crash
	// conn is the live connection while ready; conns is every connection not yet shut
	// down (the live one, one being started, crashed ones being cleaned up).
	conn  *conn
	conns map[*conn]struct{}
	// attempt is closed when the running start attempt ends; attemptCancel cancels it.
	attempt       chan struct{}
	attemptCancel context.CancelFunc
	failures      int       // consecutive failed starts or crashes
	retryAt       time.Time // no restart before this
}

func newServer(m *Manager, name string, cfg ServerConfig, key string) *server {
	sum := sha256.Sum256([]byte(key))
	return &server{
		m: m, name: name, cfg: cfg, key: key, id: hex.EncodeToString(sum[:6]),
		log:   m.log.With("mcpServer", name),
		conns: map[*conn]struct{}{},
	}
}

// Server is a session's handle on an MCP server. Its methods are safe for concurrent use.
type Server struct {
	s        *server
	released atomic.Bool
}

// Status returns the server's current state.
//
// Contract: safe for concurrent use, also from OnStatus.
func (h *Server) Status() ServerStatus { return h.s.statusNow() }

// Tools returns the server's tools: the current list while ready, the last list after a
// crash (calling one restarts the server), none while it first starts or when it never
// started. The slice is shared: the caller must not modify it.
//
// Contract: safe for concurrent use, also from OnStatus.
func (h *Server) Tools() []Tool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.tools
}

// WaitReady waits while the server starts and returns nil once it is ready, the reason
// when it failed (it does not restart it: Call does), or ctx's error.
//
// Contract: safe for concurrent use; it returns as soon as ctx is done.
func (h *Server) WaitReady(ctx context.Context) error {
	s := h.s
	for {
		s.mu.Lock()
		status, attempt, why := s.status, s.attempt, s.errText
		s.mu.Unlock()
		switch status {
		case StatusReady:
			return nil
		case StatusStarting:
			select {
			case <-attempt:
			case <-ctx.Done():
				return ctx.Err()
			}
		default:
			return fmt.Errorf("MCP server %q is not available: %s", s.name, why)
		}
	}
}

// Call calls the tool named tool (its name on the server, Tool.Original) with args (a
// JSON object; empty means {}). It waits while the server starts and restarts a failed
// one (once per call, after the backoff). Progress notifications go to onUpdate (nil:
// none are asked for) until Call returns; cancelling ctx cancels the MCP request and
// returns ctx's error at once.
//
// A result with isError is returned as a *ToolError (see it). Other errors say what
// happened and name the server: it could not start, it crashed during the call (with the
// end of its stderr; the next call restarts it), it refused the request, the handle was
// released, pid is shutting down.
//
// Progress is throttled as bash's output is: onUpdate gets at most one update per
// ProgressInterval, the latest notification, and the last one held back before Call
// returns (a server sending 100,000 notifications makes a few updates a second).
//
// Contract: safe for concurrent use; onUpdate is called from the SDK's goroutines or a
// timer's, one update at a time, never after Call returns, and must not block long.
func (h *Server) Call(ctx context.Context, tool string, args json.RawMessage, onUpdate func(event.Result)) (toolexec.Result, error) {
	if h.released.Load() {
		return toolexec.Result{}, fmt.Errorf("MCP server %q: this session released it; pid calls the tools of a session's own servers only", h.s.name)
	}
	c, err := h.s.use(ctx)
	if err != nil {
		return toolexec.Result{}, err
	}
	return c.call(ctx, tool, args, onUpdate)
}

// ExecTool returns t (one of h's tools) as a tool of pid's pipeline: its name, description
// and schema, and an Execute that calls it through h (Call, with t's original name).
// Unavailable is left for the caller to set from the server's status.
//
// Contract: safe for concurrent use; the tool is valid as long as the handle is held.
func (h *Server) ExecTool(t Tool) toolexec.Tool {
	original := t.Original
	return toolexec.Tool{
		Name:        t.Name,
		Description: t.Description,
		Parameters:  t.InputSchema,
		View:        View(t.Name, t.Annotations),
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			return h.Call(ctx, original, call.Args, onUpdate)
		},
	}
}

// Release gives the handle back. When no handle holds the server any more, it keeps
// running for Options.Linger and then stops (at once for a negative Linger); an Acquire
// meanwhile takes it back. Calls through this handle afterwards fail.
//
// Contract: safe for concurrent use and idempotent; it never waits for the server.
func (h *Server) Release() { h.release(false) }

// ReleaseNow is Release for a server that must not linger (its folder is no longer
// trusted): when no other handle holds it, it stops at once.
//
// Contract: as Release.
func (h *Server) ReleaseNow() { h.release(true) }

// release gives the handle back; now stops a server no handle holds without its linger.
func (h *Server) release(now bool) {
	if !h.released.CompareAndSwap(false, true) {
		return
	}
	s := h.s
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs--
	if s.refs > 0 || s.gone {
		return
	}
	if now || m.o.Linger < 0 {
		s.retireLocked()
		return
	}
	s.linger = time.AfterFunc(m.o.Linger, s.lingerDone)
}

// lingerDone stops a server no handle took back during its linger.
func (s *server) lingerDone() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == 0 && !s.gone && s.linger != nil {
		s.linger = nil
		s.retireLocked()
	}
}

// retireLocked takes the server out of the Manager and stops it in the background.
// m.mu and s.mu are held.
func (s *server) retireLocked() {
	if s.m.servers[s.key] == s {
		delete(s.m.servers, s.key)
	}
	// Without the tracker (Close has begun), Close stops the server itself.
	s.m.bg.goFunc(func() { s.stop("no session uses it any more") })
}

// statusNow returns the current state.
func (s *server) statusNow() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ServerStatus{Name: s.name, ID: s.id, Status: s.status, Tools: len(s.tools), Error: s.errText}
}

// notify calls OnStatus with the current state; s.mu is not held.
func (s *server) notify() {
	f := s.m.o.OnStatus
	if f == nil {
		return
	}
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	f(s.statusNow())
}

// startLocked begins a start attempt in the background. s.mu is held and s is not gone.
func (s *server) startLocked() {
	s.status = StatusStarting
	s.errText = ""
	done := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), s.m.o.StartTimeout)
	s.attempt, s.attemptCancel = done, cancel
	ok := s.m.bg.goFunc(func() {
		defer cancel()
		s.runAttempt(ctx, done)
	})
	if !ok {
		cancel()
		s.status = StatusFailed
		s.errText = "pid is shutting down"
		close(done)
	}
}

// runAttempt starts a connection and makes it the server's, or records why it failed.
func (s *server) runAttempt(ctx context.Context, done chan struct{}) {
	c, tools, err := s.connect(ctx)
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		if c != nil {
			c.shutdown("stopped while it started")
		}
		close(done)
		return
	}
	if err != nil {
		s.failLocked(err.Error(), time.Time{})
		s.log.Warn("mcp server failed to start", "error", err)
	} else {
		s.conn = c
		s.tools = tools
		s.status = StatusReady
		s.errText = ""
		s.log.Info("mcp server ready", "tools", len(tools))
	}
	s.attempt, s.attemptCancel = done, nil
	s.mu.Unlock()
	// OnStatus first: whoever waits on done (WaitReady, a call) must find the users of
	// the status (a session's tool catalog) already told.
	s.notify()
	close(done)
}

// failLocked marks the server failed, counting the failure for the backoff; up is when
// the connection that failed became ready (zero for a failed start). s.mu is held.
func (s *server) failLocked(why string, up time.Time) {
	if !up.IsZero() && time.Since(up) >= stableAfter {
		s.failures = 0
	}
	s.failures++
	var delay time.Duration
	if s.failures > 1 {
		delay = restartBase << (s.failures - 2)
		if delay > restartMax || delay <= 0 {
			delay = restartMax
		}
	}
	s.retryAt = time.Now().Add(delay)
	s.status = StatusFailed
	s.errText = why
}

// use returns the ready connection, waiting while the server starts, and restarting a
// failed server once (after its backoff).
func (s *server) use(ctx context.Context) (*conn, error) {
	restarted := false
	for {
		s.mu.Lock()
		if s.gone {
			why := s.errText
			s.mu.Unlock()
			return nil, fmt.Errorf("MCP server %q is stopped: %s", s.name, why)
		}
		switch s.status {
		case StatusReady:
			c := s.conn
			s.mu.Unlock()
			return c, nil
		case StatusStarting:
			attempt := s.attempt
			s.mu.Unlock()
			select {
			case <-attempt:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		default:
			why := s.errText
			if restarted {
				s.mu.Unlock()
				return nil, fmt.Errorf("MCP server %q is not available: %s", s.name, why)
			}
			if wait := time.Until(s.retryAt); wait > 0 {
				s.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, ctx.Err()
				}
				continue
			}
			restarted = true
			s.log.Info("restarting mcp server", "after", why)
			s.startLocked()
			s.mu.Unlock()
			s.notify()
		}
	}
}

// connLost is called once when c stops working on its own (crash, broken connection):
// the server is failed with why, and c is shut down in the background.
func (s *server) connLost(c *conn, why string) {
	s.mu.Lock()
	current := s.conn == c
	if current {
		s.conn = nil
		s.failLocked(why, c.up)
	}
	s.mu.Unlock()
	if current {
		s.log.Warn("mcp server stopped", "why", why)
		s.notify()
	}
	// Without the tracker (Close has begun), Close shuts c down with the others.
	s.m.bg.goFunc(func() { c.shutdown(why) })
}

// setTools replaces the tool list of c's server after a refresh, if c is still its
// connection.
func (s *server) setTools(c *conn, tools []Tool) {
	s.mu.Lock()
	current := s.conn == c
	if current {
		s.tools = tools
	}
	s.mu.Unlock()
	if current {
		s.notify()
	}
}

// stop stops the server for good and waits until every connection of it is shut down.
func (s *server) stop(why string) {
	s.mu.Lock()
	if !s.gone {
		s.gone = true
		s.status = StatusFailed
		s.errText = why
		if s.linger != nil {
			s.linger.Stop()
			s.linger = nil
		}
		if s.attemptCancel != nil {
			s.attemptCancel()
		}
	}
	s.conn = nil
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	attempt := s.attempt
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.shutdown(why)
		}()
	}
	wg.Wait()
	if attempt != nil {
		<-attempt // an attempt that was connecting shuts its connection down itself
	}
}

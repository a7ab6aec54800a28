// Package acp is pid's second face: the Agent Client Protocol (ACP, protocol version 1),
// which Zed, JetBrains IDEs, Neovim plugins and others speak to coding agents. It is
// JSON-RPC 2.0 over stdio, one message per line. Like package rpc it is thin: sessions,
// the loop, the tools and the permission policy all come from package session; this package
// only maps them onto ACP's methods and updates. docs/acp.md describes what works and how.
//
// The entry point is Serve.
//
// This file holds the server: the read loop, dispatch and the lifecycle.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/session"
	"github.com/pid-agent/pid/store"
)

// ProtocolVersion is the ACP version pid speaks.
const ProtocolVersion = 1

// Options configure Serve.
type Options struct {
	Version string       // pid's version, reported in agentInfo
	Log     *slog.Logger // where logs go (stderr in the daemon); nil discards them
}

// server is one connection with a client.
type server struct {
	opts Options
	log  *slog.Logger
	conn *conn

	// hmu guards hosts (the session layer's hosts, one per session cwd: see hostFor),
	// catalog and saved.
	hmu   sync.Mutex
	hosts map[string]*session.Host
	// catalog is the host with no workspace folder that lists and deletes saved sessions
	// (see catalogHost); nil until first used.
	catalog *session.Host
	// saved is the sessions folder, read to find the cwd a saved session belongs to (see
	// savedStore); nil until opened, and while it cannot be.
	saved *store.Store

	// mcpm runs the MCP servers of every session of the face (see newMCPManager); closed
	// when Serve ends, so that no server outlives it.
	mcpm *mcp.Manager
	// mmu guards mcpHosts (the hosts told about MCP status changes, with their cwds: the
	// roots MCP servers see) and mcpSeen. It is never held while calling out.
	mmu      sync.Mutex
	mcpHosts []hostRoot
	// mcpSeen, if set, is called with each MCP status change once every host has been told
	// (so the catalogs of the sessions that use the server are up to date): tests wait on
	// it. Called from the manager's goroutines, never concurrently for one server; it must
	// not block nor call into the server.
	mcpSeen func(mcp.ServerStatus)

	// wg counts the goroutines of requests.
	wg sync.WaitGroup

	// mu guards the fields below it.
	mu          sync.Mutex
	initialized bool
	caps        clientCaps
	sessions    map[string]*sessionState
	inflight    map[string]context.CancelFunc // id of a running request -> its cancel
	// lifeTail closes when the last lifecycle request received (session/load, resume,
	// list, close, delete) has been answered; see lifecycle.
	lifeTail chan struct{}
}

// clientCaps is what the client declared in initialize.
type clientCaps struct {
	ReadTextFile  bool
	WriteTextFile bool
	Terminal      bool
	Notices       bool
	Compaction    bool // session.compaction: compaction_update and its summary
	// ElicitForm is elicitation.form: MCP servers' questions go to the client as
	// elicitation/create (form mode).
	ElicitForm bool
}

// Serve speaks ACP on r and w until r ends (the client closed pid's stdin) or ctx ends, and
// returns the process exit code: 0 when the input ended, 1 when reading it failed. When it
// returns, every request has been answered and every goroutine it started has finished:
// running prompts are cancelled (they answer "cancelled"), pid's own requests to the
// client are given up, and every MCP server the sessions used has stopped.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) int {
	return newServer(r, w, opts).serve(ctx, r)
}

func newServer(r io.Reader, w io.Writer, opts Options) *server {
	s := &server{opts: opts, log: opts.Log, sessions: map[string]*sessionState{}, inflight: map[string]context.CancelFunc{}, hosts: map[string]*session.Host{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.conn = newConn(r, w, s.log)
	s.mcpm = s.newMCPManager()
	return s
}

// hostFor returns the session layer's host for sessions in cwd, set up on first use with
// cwd as its only workspace folder. ACP has no workspace folders of its own: each session
// names its cwd, which thereby is its workspace root, and its .pid/settings.json is read
// (with the user's settings file) as the native face reads each workspace folder's. Hosts
// share the remembered answers and the audit log through their files, as pid processes do,
// and the MCP servers through the face's one manager.
func (s *server) hostFor(cwd string) *session.Host {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if h := s.hosts[cwd]; h != nil {
		return h
	}
	h := session.NewHost(session.HostOptions{Log: s.log, MCP: s.mcpm, Report: func(msg string, severe bool) {
		if severe {
			s.log.Error(msg, "cwd", cwd)
		} else {
			s.log.Warn(msg, "cwd", cwd)
		}
	}})
	h.SetUp([]string{cwd})
	s.hosts[cwd] = h
	s.mmu.Lock()
	s.mcpHosts = append(s.mcpHosts, hostRoot{cwd: cwd, host: h})
	s.mmu.Unlock()
	return h
}

// serve is Serve's body; r is the input newServer was given.
func (s *server) serve(ctx context.Context, r io.Reader) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := func() bool { return false }
	if c, ok := r.(io.Closer); ok {
		// A read cannot be interrupted otherwise: closing the input ends it.
		stop = context.AfterFunc(ctx, func() { c.Close() })
	}
	err := s.readLoop(ctx)
	stopped := ctx.Err() != nil // the caller ended the connection
	stop()
	// The input has ended: cancel every running request, give up pid's own requests.
	cancel()
	s.conn.close()
	s.wg.Wait()
	s.hmu.Lock()
	for _, h := range s.hosts {
		h.Close()
	}
	if s.catalog != nil {
		s.catalog.Close()
	}
	s.hmu.Unlock()
	// The sessions have released their servers: stop them all now (and wait for them),
	// rather than after the linger that would keep them for a next session.
	s.mcpm.Close()
	if !errors.Is(err, io.EOF) && !stopped { // readLoop returns only when reading ends
		s.log.Error("reading the input failed", "err", err)
		return 1
	}
	return 0
}

// readLoop reads and dispatches messages until the input ends. Notifications and quick
// requests are handled here, in arrival order (so session/cancel reaches a running prompt
// at once, and a prompt sent right after session/new finds its session); prompts run on
// goroutines of their own.
func (s *server) readLoop(ctx context.Context) error {
	for {
		msg, k, err := s.conn.next()
		if err != nil {
			return err
		}
		if msg == nil {
			continue // answered, or dropped
		}
		switch k {
		case kindResponse:
			s.conn.deliver(msg)
		case kindNotification:
			s.guard(msg.Method, func() { s.notification(msg) })
		case kindRequest:
			s.request(ctx, msg)
		}
	}
}

// guard runs f and logs a panic instead of crashing the daemon; it returns the panic as an
// internal error.
func (s *server) guard(method string, f func()) (err *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = errorf(codeInternalError, "Internal error: the handler of %s panicked: %v", method, p)
		}
	}()
	f()
	return nil
}

// A quick method runs on the read loop and never blocks for long.
type quickMethod func(s *server, params json.RawMessage) (any, error)

// A long method checks its request on the read loop (so errors such as a busy session are
// answered in order) and returns the work to run on a goroutine of its own. The work
// answers the request itself, through reply (exactly once).
type longMethod func(s *server, id json.RawMessage, params json.RawMessage) (work func(ctx context.Context, reply func(result any, err error)), err error)

var (
	quickMethods map[string]quickMethod
	longMethods  map[string]longMethod
)

func init() {
	quickMethods = map[string]quickMethod{
		"initialize":                (*server).initialize,
		"authenticate":              (*server).authenticate,
		"session/new":               (*server).sessionNew,
		"session/set_config_option": (*server).sessionSetConfigOption,
	}
	longMethods = map[string]longMethod{
		"session/prompt": (*server).sessionPrompt,
		"session/load":   (*server).sessionLoad,
		"session/resume": (*server).sessionResume,
		"session/list":   (*server).sessionList,
		"session/close":  (*server).sessionClose,
		"session/delete": (*server).sessionDelete,
	}
}

// request answers one request: the id of a request still running with -32600 (a
// $/cancel_request naming it could not tell the two apart), unknown methods (extension
// methods starting with "_" included) with -32601, anything but initialize before initialize
// with -32600.
func (s *server) request(ctx context.Context, msg *message) {
	s.mu.Lock()
	running := s.inflight[idKey(msg.ID)] != nil
	s.mu.Unlock()
	if running {
		s.conn.replyError(msg.ID, errorf(codeInvalidRequest, "Invalid request: a request with this id is still running; give every request an id of its own"))
		return
	}
	quick, isQuick := quickMethods[msg.Method]
	long, isLong := longMethods[msg.Method]
	if !isQuick && !isLong {
		what := "Method not found"
		if strings.HasPrefix(msg.Method, "_") {
			what = "Method not found (pid has no extension methods)"
		}
		s.conn.replyError(msg.ID, errorf(codeMethodNotFound, "%s: %s", what, msg.Method))
		return
	}
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if msg.Method != "initialize" && !initialized {
		s.conn.replyError(msg.ID, errorf(codeInvalidRequest, "Invalid request: send initialize first"))
		return
	}
	if isQuick {
		var result any
		var err error
		if perr := s.guard(msg.Method, func() { result, err = quick(s, msg.Params) }); perr != nil {
			s.conn.replyError(msg.ID, perr)
			return
		}
		s.answer(msg.ID, result, err)
		return
	}
	var work func(context.Context, func(any, error))
	var err error
	perr := s.guard(msg.Method, func() { work, err = long(s, msg.ID, msg.Params) })
	msg.Params = nil // the line is not kept alive while the request runs
	if perr != nil {
		s.conn.replyError(msg.ID, perr)
		return
	}
	if err != nil {
		s.answer(msg.ID, nil, err)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	key := idKey(msg.ID)
	s.mu.Lock()
	s.inflight[key] = cancel
	s.mu.Unlock()
	s.wg.Go(func() {
		defer cancel()
		var once sync.Once
		reply := func(result any, err error) {
			once.Do(func() {
				s.mu.Lock()
				delete(s.inflight, key)
				s.mu.Unlock()
				s.answer(msg.ID, result, err)
			})
		}
		if perr := s.guard(msg.Method, func() { work(rctx, reply) }); perr != nil {
			reply(nil, perr)
		}
		reply(nil, errorf(codeInternalError, "Internal error: %s ended without an answer", msg.Method))
	})
}

// answer writes a request's response: its result, or its error mapped to a code.
func (s *server) answer(id json.RawMessage, result any, err error) {
	if err != nil {
		s.conn.replyError(id, toWire(err))
		return
	}
	if result == nil {
		result = struct{}{}
	}
	s.conn.reply(id, result)
}

// toWire maps an error to the JSON-RPC error sent to the client; no error has code 0.
func toWire(err error) *rpcError {
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, session.ErrUnknownSession):
		return &rpcError{Code: codeNotFound, Message: "Resource not found: " + err.Error()}
	case errors.Is(err, session.ErrLocked):
		return &rpcError{Code: codeRequestFailed, Message: "Session in use: " + strings.TrimPrefix(err.Error(), session.ErrLocked.Error()+": ")}
	case errors.Is(err, session.ErrInvalid):
		return &rpcError{Code: codeInvalidParams, Message: "Invalid params: " + strings.TrimPrefix(err.Error(), session.ErrInvalid.Error()+": ")}
	}
	return &rpcError{Code: codeInternalError, Message: "Internal error: " + err.Error()}
}

// notification handles one notification on the read loop; none is ever answered.
func (s *server) notification(msg *message) {
	switch msg.Method {
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := decodeParams(msg.Params, &p); err != nil {
			s.log.Warn("bad session/cancel", "err", err)
			return
		}
		s.mu.Lock()
		st := s.sessions[p.SessionID]
		s.mu.Unlock()
		if st != nil {
			st.cancelTurn()
		}
	case "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if err := decodeParams(msg.Params, &p); err != nil || p.RequestID == nil {
			s.log.Warn("bad $/cancel_request", "err", err)
			return
		}
		s.mu.Lock()
		cancel := s.inflight[idKey(p.RequestID)]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		s.log.Debug("ignored notification", "method", msg.Method)
	}
}

// decodeParams decodes a request's params, which must be an object (or absent when the
// method has no required member).
func decodeParams(raw json.RawMessage, v any) error {
	b := strings.TrimSpace(string(raw))
	if b == "" || b == "null" {
		b = "{}"
	}
	if b[0] != '{' {
		return errorf(codeInvalidParams, "Invalid params: params must be an object")
	}
	if err := json.Unmarshal([]byte(b), v); err != nil {
		return errorf(codeInvalidParams, "Invalid params: %s", describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must not be a JSON %s", te.Field, te.Value)
	}
	return err.Error()
}

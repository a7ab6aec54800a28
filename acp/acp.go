// Package acp is pid's second face: the Agent Client Protocol (ACP, protocol version 1),
// which Zed, JetBrains IDEs, Neovim plugins and others speak to coding agents. It is
// JSON-RPC 2.0 over stdio, one message per line. Like package rpc it is thin: sessions,
// the loop, the tools and the permission policy all come from package session; this package
// only maps them onto ACP's methods and updates. docs/acp.md describes what works and how.
//
// The entry point is Serve.
//
// This file holds the server: the face's side of the connection (package rpcconn runs it),
// its method and notification tables (each handler gets its params typed, decoded once by
// the face's decodeParams) and the lifecycle.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
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
	conn conn

	// host is the session layer: every session of the face, each in its own working folder
	// (HostOptions.OwnFolders: ACP has no workspace folders of its own, so each session's
	// cwd is its workspace folder), with what they share (the saved sessions, the MCP
	// servers, the command folders' watch). It is set up by the first initialize (setUp)
	// and closed when Serve ends, so that no MCP server outlives it.
	host  *session.Host
	setUp sync.Once

	// mmu guards mcpSeen. It is never held while calling out.
	mmu sync.Mutex
	// mcpSeen, if set, is called with each MCP status change once the sessions that use
	// the server have been told (their catalogs are up to date): tests wait on it. Called
	// from the manager's goroutines, never concurrently for one server; it must not block
	// nor call into the server.
	mcpSeen func(session.ServerInfo)

	// mu guards the fields below it.
	mu          sync.Mutex
	initialized bool
	caps        clientCaps
	sessions    map[string]*sessionState
	// lifeTail closes when the last lifecycle request received (session/load, resume,
	// list, close, delete) has been answered; see lifecycle.
	lifeTail chan struct{}

	// commandsSent holds, by session id, the commands of the last
	// available_commands_update sent ([]session.CommandInfo; commands.go).
	commandsSent sync.Map
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
	s := &server{opts: opts, log: opts.Log, sessions: map[string]*sessionState{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.conn = conn{rpcconn.New(rpcconn.Face{
		Codec:        newLines(r),
		Log:          s.log,
		Methods:      s.methods(),
		Decode:       decodeParams,
		Admit:        s.admit,
		Notification: s.notification,
		ToWire:       func(err error) *jsonrpc2.Error { return toWire(err).wire() },
		Marshal:      marshal,
		CancelMethod: "$/cancel_request",
		CancelField:  "requestId",
	}, w)}
	s.host = session.NewHost(session.HostOptions{
		Log: s.log, OwnFolders: true, Version: opts.Version,
		MCPStatus: s.mcpStatus, CommandsChanged: s.commandsChanged,
		Report: func(msg string, severe bool) {
			if severe {
				s.log.Error(msg)
			} else {
				s.log.Warn(msg)
			}
		},
	})
	return s
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
	// The connection cancels every running request when the input ends, waits for their
	// answers and gives up pid's own requests.
	err := s.conn.Serve(ctx)
	stopped := ctx.Err() != nil // the caller ended the connection
	stop()
	cancel()
	// The sessions, then every MCP server they used (at once, and waited for, rather than
	// after the linger that would keep them for a next session).
	s.host.Close()
	if !errors.Is(err, io.EOF) && !stopped { // the connection ends only when reading does
		s.log.Error("reading the input failed", "err", err)
		return 1
	}
	return 0
}

// A method is one entry of ACP's method table: given the server, the entry the connection
// runs (package rpcconn), typed, so that its params are decoded once, by decodeParams (the
// face's Decode), before the handler sees them.
type method func(s *server) rpcconn.Method

// quick is a method that runs on the read loop and never blocks for long. A result of nil
// is answered {}.
func quick[P any](h func(s *server, p *P) (any, error)) method {
	return func(s *server) rpcconn.Method {
		return rpcconn.QuickOf(func(p *P) (any, error) { return orEmpty(h(s, p)) })
	}
}

// long is a method that checks its request on the read loop (so errors such as a busy
// session are answered in order) and returns the work to run on a goroutine of its own. The
// work answers the request itself, through reply (exactly once); a result of nil is
// answered {}.
func long[P any](h func(s *server, p *P) (rpcconn.Work, error)) method {
	return func(s *server) rpcconn.Method {
		return rpcconn.LongOf(func(p *P) (rpcconn.Work, error) {
			work, err := h(s, p)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, reply func(any, error)) {
				work(ctx, func(result any, err error) { reply(orEmpty(result, err)) })
			}, nil
		})
	}
}

// orEmpty is a handler's answer with a nil result made {}: ACP's results are objects.
func orEmpty(result any, err error) (any, error) {
	if err == nil && result == nil {
		result = struct{}{}
	}
	return result, err
}

// methodTable is ACP's method table: every request method pid takes, each typed (quick or
// long). admit answers the others.
var methodTable map[string]method

func init() {
	methodTable = map[string]method{
		"initialize":                quick((*server).initialize),
		"authenticate":              quick((*server).authenticate),
		"session/new":               quick((*server).sessionNew),
		"session/set_config_option": quick((*server).sessionSetConfigOption),
		"session/set_mode":          quick((*server).sessionSetMode),
		"session/prompt":            long((*server).sessionPrompt),
		"session/load":              long((*server).sessionLoad),
		"session/resume":            long((*server).sessionResume),
		"session/list":              long((*server).sessionList),
		"session/close":             long((*server).sessionClose),
		"session/delete":            long((*server).sessionDelete),
		"session/fork":              long((*server).sessionFork),
		// pid's extension methods (docs/acp.md).
		"_pid/checkpoints/list": quick((*server).checkpointsList),
		"_pid/checkpoints/diff": long((*server).checkpointsDiff),
		"_pid/session/rewind":   long((*server).sessionRewind),
		"_pid/changes/list":     long((*server).changesList),
		"_pid/changes/undo":     long((*server).changesUndo),
		"_pid/changes/keep":     long((*server).changesKeep),
	}
}

// methods is the method table for the connection (package rpcconn): notifications and quick
// requests are handled on the read loop, in arrival order (so session/cancel reaches a
// running prompt at once, and a prompt sent right after session/new finds its session);
// long ones run on goroutines of their own.
func (s *server) methods() map[string]rpcconn.Method {
	t := make(map[string]rpcconn.Method, len(methodTable))
	for name, m := range methodTable {
		t[name] = m(s)
	}
	return t
}

// admit answers the id of a request still running with -32600 (a $/cancel_request naming it
// could not tell the two apart), unknown methods (extension methods starting with "_"
// included) with -32601, anything but initialize before initialize with -32600.
func (s *server) admit(method string, running bool) error {
	if running {
		return fmt.Errorf("%w: a request with this id is still running; give every request an id of its own", errInvalidRequest)
	}
	if _, ok := methodTable[method]; !ok {
		if strings.HasPrefix(method, "_") {
			return fmt.Errorf("%w (pid's extension methods are _pid/checkpoints/list, _pid/checkpoints/diff, _pid/session/rewind and _pid/changes/list, _pid/changes/undo, _pid/changes/keep): %s", errMethodNotFound, method)
		}
		return fmt.Errorf("%w: %s", errMethodNotFound, method)
	}
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if method != "initialize" && !initialized {
		return fmt.Errorf("%w: send initialize first", errInvalidRequest)
	}
	return nil
}

// notificationTable is ACP's table of the notifications pid heeds; it ignores the others.
var notificationTable map[string]func(s *server, method string, params json.RawMessage)

func init() {
	notificationTable = map[string]func(*server, string, json.RawMessage){
		"session/cancel":   heed((*server).sessionCancel),
		"$/cancel_request": heed((*server).cancelRequest),
	}
}

// heed is a notification handler given its params typed, decoded as a request's are
// (decodeParams); params it cannot decode are logged and the notification dropped.
func heed[P any](h func(s *server, p *P)) func(*server, string, json.RawMessage) {
	return func(s *server, method string, params json.RawMessage) {
		p := new(P)
		if err := decodeParams(params, p); err != nil {
			s.log.Warn("bad "+method, "err", err)
			return
		}
		h(s, p)
	}
}

// notification handles one notification on the read loop; none is ever answered, and none
// ends the connection.
func (s *server) notification(method string, params json.RawMessage) bool {
	if h, ok := notificationTable[method]; ok {
		h(s, method, params)
	} else {
		s.log.Debug("ignored notification", "method", method)
	}
	return false
}

type cancelParams struct {
	SessionID string `json:"sessionId"`
}

// sessionCancel cancels the running prompt of a live session (session/cancel), which then
// answers "cancelled"; a session not live here is ignored.
func (s *server) sessionCancel(p *cancelParams) {
	s.mu.Lock()
	st := s.sessions[p.SessionID]
	s.mu.Unlock()
	if st != nil {
		st.cancelTurn()
	}
}

type cancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// cancelRequest cancels the running request whose id is requestId ($/cancel_request).
func (s *server) cancelRequest(p *cancelRequestParams) {
	if p.RequestID == nil {
		s.log.Warn("bad $/cancel_request: requestId is required")
		return
	}
	s.conn.CancelRequest(idKey(p.RequestID))
}

// decodeParams is the face's Decode (rpcconn.Decode): it decodes a request's or a
// notification's params into v, a pointer to the params' type. They must be an object;
// absent or null they are {} (for a method with no required member). What it refuses is
// invalid params, saying why.
func decodeParams(raw json.RawMessage, v any) error {
	b := strings.TrimSpace(string(raw))
	if b == "" || b == "null" {
		b = "{}"
	}
	if b[0] != '{' {
		return fmt.Errorf("%w: params must be an object", errInvalidParams)
	}
	if err := json.Unmarshal([]byte(b), v); err != nil {
		return fmt.Errorf("%w: %s", errInvalidParams, describeJSONError(err))
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

// Package rpc is pid's JSON-RPC face for editors: JSON-RPC 2.0 with LSP framing over a
// byte stream (the daemon's stdin and stdout). It decodes requests, calls the core (package
// loop), and encodes results, notifications and requests to the editor; docs/protocol.md
// describes the protocol. The entry point is Serve.
//
// This file holds the server: the face's side of the connection (package rpcconn runs it),
// the lifecycle, the method table and pid's own requests to the editor.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/internal/rpcwire"
	"github.com/pid-agent/pid/session"
)

// Options configure Serve.
type Options struct {
	Version string
	Log     *slog.Logger // where logs go (stderr in the daemon); nil discards them
}

// Server is one connection with an editor.
type Server struct {
	opts Options
	log  *slog.Logger
	conn *rpcconn.Conn

	// host is the session layer: the sessions and what they share.
	host *session.Host

	// bg is the context of pid's own questions to the editor that no request waits for
	// (workspace/requestTrust); shutdown cancels it and waits for bgWG before answering.
	bg       context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	// mu guards the fields below it.
	mu           sync.Mutex
	initialized  bool
	shutdown     bool
	exitCode     int
	clientBefore bool           // the editor answers beforeToolCall
	clientAfter  bool           // the editor answers afterToolCall
	clientTrust  bool           // the editor answers workspace/requestTrust
	clientRead   bool           // the editor answers fs/read_text_file
	clientWrite  bool           // the editor answers fs/write_text_file
	clientDiag   bool           // the editor answers editor/diagnostics (diagnostics.go)
	clientUsage  bool           // the editor wants usageUpdate (plan.go)
	clientNet    bool           // the editor answers network/allowHost (network.go)
	defaults     session.Config // initializationOptions
}

// Serve speaks the protocol on r and w until the editor sends exit or r ends, and returns
// the process exit code: 0 after shutdown, 1 otherwise. When it returns, every request has
// been answered or cancelled and every goroutine it started has finished; r is closed if it
// is an io.Closer. Ending ctx closes r (when it is an io.Closer), which ends Serve.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) int {
	s := &Server{opts: opts, log: opts.Log, exitCode: 1}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.conn = rpcconn.New(rpcconn.Face{
		Codec:        newFrameStream(r),
		Log:          s.log,
		Methods:      s.methods(),
		Decode:       decodeParams,
		Admit:        s.admit,
		Notification: s.notification,
		ToWire:       toWire,
		Marshal:      json.Marshal,
		CancelMethod: "$/cancelRequest",
		CancelField:  "id",
		SealOn:       "shutdown",
	}, w)
	s.host = session.NewHost(session.HostOptions{Log: s.log, Report: s.report, MCPStatus: s.mcpStatus})
	closeInput := func() {}
	stop := func() bool { return true }
	closed := make(chan struct{})
	if c, ok := r.(io.Closer); ok {
		// A read cannot be interrupted otherwise: closing the input ends it.
		var once sync.Once
		closeInput = func() { once.Do(func() { c.Close() }) }
		stop = context.AfterFunc(ctx, func() { defer close(closed); closeInput() })
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.bg, s.bgCancel = context.WithCancel(ctx)

	err := s.conn.Serve(ctx)
	var rej *rpcconn.Reject
	switch {
	case errors.As(err, &rej):
		s.log.Error("closing the connection: the input cannot be read on", "reason", rej.Error())
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil:
		s.log.Warn("reading the input failed; closing the connection", "err", err)
	}
	closeInput()
	if !stop() {
		<-closed // ctx ended: wait for its close to finish
	}
	cancel()
	s.bgCancel()
	s.bgWG.Wait()
	s.host.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// methods returns the server's rpcconn method table, made from methodTable.
func (s *Server) methods() map[string]rpcconn.Method {
	m := make(map[string]rpcconn.Method, len(methodTable))
	for name, entry := range methodTable {
		m[name] = entry(s)
	}
	return m
}

// admit applies the lifecycle (nothing before initialize, nothing after shutdown), refuses
// the id of a request still running (a cancel naming it could not tell the two apart), and
// answers unknown methods.
func (s *Server) admit(method string, running bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.shutdown:
		return errShutdown
	case method == "initialize" && s.initialized:
		return fmt.Errorf("%w: initialize was already received", errInvalidRequest)
	case method != "initialize" && !s.initialized:
		return errNotInitialized
	case running:
		return fmt.Errorf("%w: a request with this id is still running; give every request an id of its own", errInvalidRequest)
	}
	if _, ok := methodTable[method]; !ok {
		return fmt.Errorf("%w: %s", errUnknownMethod, method)
	}
	return nil
}

// notification handles one notification on the read goroutine; exit ends the connection.
func (s *Server) notification(method string, params json.RawMessage) bool {
	switch method {
	case "exit":
		s.mu.Lock()
		if s.shutdown {
			s.exitCode = 0
		}
		s.mu.Unlock()
		return true
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if err := decodeParams(params, &p); err != nil {
			s.log.Warn("bad $/cancelRequest", "err", err)
			return false
		}
		key, ok := rpcwire.IDKey(p.ID)
		if !ok {
			s.log.Warn("bad $/cancelRequest: id must be a string or a number", "id", truncate(string(p.ID), 80))
			return false
		}
		s.conn.CancelRequest(key)
	case "initialized", "$/setTrace", "$/logTrace":
	default:
		s.log.Debug("ignored notification", "method", method)
	}
	return false
}

// notify writes a notification. Errors mean the editor is gone, or that the shutdown reply
// was written; they are logged only.
func (s *Server) notify(method string, params any) {
	if err := s.conn.Notify(method, params); err != nil {
		s.log.Debug("notification not sent", "method", method, "err", err)
	}
}

// logMessage sends window/logMessage (type 1 error, 2 warning, 3 info) and logs it too.
func (s *Server) logMessage(typ protocol.MessageType, msg string) {
	s.log.Warn(msg)
	s.notify("window/logMessage", &protocol.LogMessageParams{Type: typ, Message: msg})
}

// call sends a request to the editor and waits for its answer or for ctx; the answer's
// result is decoded into result. When ctx ends first, the editor is told with
// $/cancelRequest. Once the read loop has ended, or after the shutdown reply, it fails at
// once.
func (s *Server) call(ctx context.Context, method string, params []byte, result any) error {
	raw, err := s.conn.Call(ctx, method, json.RawMessage(params), true)
	var je *jsonrpc2.Error
	var me *rpcconn.MalformedError
	switch {
	case errors.As(err, &je):
		return &editorError{Code: je.Code, Message: je.Message}
	case errors.As(err, &me):
		return &editorError{Message: me.Error()}
	case errors.Is(err, rpcconn.ErrClosed):
		return errors.New("the editor disconnected")
	case err != nil:
		return err
	}
	return decodeAnswer(raw, result)
}

// editorError is an error response from the editor.
type editorError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *editorError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// decodeAnswer decodes the result of the editor's answer into result.
func decodeAnswer(raw json.RawMessage, result any) error {
	if result == nil || raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("the editor's answer does not have the expected shape: %v", err)
	}
	return nil
}

// methodTable is the native face's method table, by method name: each entry makes the
// method for a server (Serve makes them all at once, see methods), and admit answers a name
// not in it as an unknown method. Every handler has one shape, func(s, *P), and gets its
// params already decoded into a new P, by decodeParams (the face's Decode) on the read
// goroutine: a decoding error is the answer and the handler is not called; a method that
// takes no params takes *noParams, which nothing is decoded into. A quick handler runs on
// the read goroutine, never blocks, and its result is the answer; a long one checks its
// request there (so that errors such as a busy session are answered in order) and returns
// the work to run on a goroutine of its own. Tests add methods to it in init functions.
var methodTable = map[string]func(*Server) rpcconn.Method{
	"initialize":         quick((*Server).initialize),
	"session/new":        quick((*Server).sessionNew),
	"session/steer":      quick((*Server).sessionSteer),
	"session/followUp":   quick((*Server).sessionFollowUp),
	"permissions/list":   quick((*Server).permissionsList),
	"permissions/revoke": quick((*Server).permissionsRevoke),
	"trust/list":         quick((*Server).trustList),
	"trust/grant":        quick((*Server).trustGrant),
	"trust/revoke":       quick((*Server).trustRevoke),
	"tools/list":         quick((*Server).toolsList),
	"session/close":      quick((*Server).sessionClose),
	"mcp/servers":        quick((*Server).mcpServers),
	"session/delete":     quick((*Server).sessionDelete),
	"session/setModel":   quick((*Server).sessionSetModel),
	"session/setMode":    quick((*Server).sessionSetMode),
	"models/list":        quick((*Server).modelsList),
	"checkpoints/list":   quick((*Server).checkpointsList),
	"hooks/list":         quick((*Server).hooksList),
	"jobs/list":          quick((*Server).jobsList),
	"jobs/output":        quick((*Server).jobsOutput),
	"lsp/servers":        quick((*Server).lspServers),

	"session/prompt":   long((*Server).sessionPrompt),
	"session/list":     long((*Server).sessionList),
	"session/load":     long((*Server).sessionLoad),
	"session/fork":     long((*Server).sessionFork),
	"session/messages": long((*Server).sessionMessages),
	"session/compact":  long((*Server).sessionCompact),
	"tools/execute":    long((*Server).toolsExecute),
	"checkpoints/diff": long((*Server).checkpointsDiff),
	"session/rewind":   long((*Server).sessionRewind),
	"changes/list":     long((*Server).changesList),
	"changes/undo":     long((*Server).changesUndo),
	"changes/keep":     long((*Server).changesKeep),
	"commands/list":    long((*Server).commandsList),
	"skills/list":      long((*Server).skillsList),
	"agents/list":      long((*Server).agentsList),
	"jobs/kill":        long((*Server).jobsKill),
	"shutdown":         long((*Server).shutdownReq),
}

// quick makes a quick method's entry: h gets the params decoded into a new P, and its
// result is the answer.
func quick[P any](h func(*Server, *P) (any, error)) func(*Server) rpcconn.Method {
	return func(s *Server) rpcconn.Method {
		return rpcconn.QuickOf(func(p *P) (any, error) { return h(s, p) })
	}
}

// work is a long method's work, run on a goroutine of its own with the request's context;
// what it returns is the answer.
type work func(context.Context) (any, error)

// long makes a long method's entry: h gets the params decoded into a new P and checks the
// request on the read goroutine (an error is the answer), and the work it returns runs on a
// goroutine of its own.
func long[P any](h func(*Server, *P) (work, error)) func(*Server) rpcconn.Method {
	return func(s *Server) rpcconn.Method {
		return rpcconn.LongOf(func(p *P) (rpcconn.Work, error) {
			run, err := h(s, p)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, reply func(any, error)) { reply(run(ctx)) }, nil
		})
	}
}

func (s *Server) initialize(p *protocol.InitializeParams) (any, error) {
	var defaults session.Config
	if p.InitializationOptions != nil {
		b, _ := json.Marshal(p.InitializationOptions)
		if err := json.Unmarshal(b, &defaults); err != nil {
			return nil, invalidParams("initializationOptions: %s", describeJSONError(err))
		}
	}
	caps := declared(p.Capabilities.Experimental)
	roots, err := workspaceRoots(p)
	if err != nil {
		return nil, err
	}
	s.host.SetUp(roots)
	s.mu.Lock()
	s.initialized = true
	s.clientBefore, s.clientAfter, s.clientTrust = caps.before, caps.after, caps.trust
	s.clientRead, s.clientWrite = caps.readFile, caps.writeFile
	s.clientDiag = caps.diagnostics
	s.clientUsage = caps.usage
	s.clientNet = caps.networkApproval
	s.defaults = defaults
	s.mu.Unlock()
	return &protocol.InitializeResult{
		ServerInfo: &protocol.ServerInfo{Name: "pid", Version: s.opts.Version},
		Capabilities: protocol.ServerCapabilities{
			Experimental: map[string]any{"pid": map[string]any{
				"protocolVersion": ProtocolVersion,
				"sessions":        true,
				"tools":           session.BuiltinTools(),
				"sandbox":         s.host.SandboxReport(defaults.Sandbox),
			}},
		},
	}, nil
}

// clientCaps are the editor's declarations under capabilities.experimental.pid.
type clientCaps struct {
	before, after, trust bool
	readFile, writeFile  bool
	diagnostics          bool
	usage                bool
	networkApproval      bool
}

// declared reads capabilities.experimental.pid.{beforeToolCall,afterToolCall,trust,
// diagnostics,usage,networkApproval} and .fs.{readTextFile,writeTextFile}.
func declared(exp any) clientCaps {
	m, _ := exp.(map[string]any)
	pid, _ := m["pid"].(map[string]any)
	var c clientCaps
	c.before, _ = pid["beforeToolCall"].(bool)
	c.after, _ = pid["afterToolCall"].(bool)
	c.trust, _ = pid["trust"].(bool)
	c.diagnostics, _ = pid["diagnostics"].(bool)
	c.usage, _ = pid["usage"].(bool)
	c.networkApproval, _ = pid["networkApproval"].(bool)
	fs, _ := pid["fs"].(map[string]any)
	c.readFile, _ = fs["readTextFile"].(bool)
	c.writeFile, _ = fs["writeTextFile"].(bool)
	return c
}

// shutdownReq stops taking requests at once (admit answers -32600 from now on), cancels the
// running ones and pid's own questions, and answers only once they have all been answered:
// an editor that has the shutdown reply knows nothing more is coming. Its reply seals the
// connection (rpcconn.Face.SealOn), so that whatever part of pid still reports after it (a
// settings file that changes) is logged but not sent.
func (s *Server) shutdownReq(*noParams) (work, error) {
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	drain := s.conn.Drain()
	return func(context.Context) (any, error) {
		s.bgCancel()
		drain()
		s.bgWG.Wait()
		return nil, nil
	}, nil
}

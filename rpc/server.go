// Package rpc is pid's JSON-RPC face for editors: JSON-RPC 2.0 with LSP framing over a
// byte stream (the daemon's stdin and stdout). It decodes requests, calls the core (package
// loop), and encodes results, notifications and requests to the editor; docs/protocol.md
// describes the protocol. The entry point is Serve.
//
// This file holds the server: the connection, the lifecycle and request dispatch.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// Options configure Serve.
type Options struct {
	Version string
	Log     *slog.Logger // where logs go (stderr in the daemon); nil discards them
}

// Server is one connection with an editor.
type Server struct {
	opts   Options
	log    *slog.Logger
	stream *frameStream
	conn   *jsonrpc2.Conn
	// ready closes once conn is set: jsonrpc2 starts reading before NewConn returns.
	ready chan struct{}

	// host is the session layer: the sessions and what they share.
	host *session.Host

	// wg counts request goroutines.
	wg sync.WaitGroup

	// bg is the context of pid's own questions to the editor that no request waits for
	// (workspace/requestTrust); shutdown cancels it and waits for bgWG before answering.
	bg       context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	// afterReply holds work a quick method leaves for after its reply is written (a question
	// to the editor that must not come before the answer it follows). Only the read
	// goroutine touches it.
	afterReply []func()

	// exited closes when the editor sends exit or the connection ends.
	exitOnce sync.Once
	exited   chan struct{}

	// mu guards the fields below it.
	mu           sync.Mutex
	initialized  bool
	shutdown     bool
	exitCode     int
	clientBefore bool           // the editor answers beforeToolCall
	clientAfter  bool           // the editor answers afterToolCall
	clientTrust  bool           // the editor answers workspace/requestTrust
	defaults     session.Config // initializationOptions
	inflight     map[jsonrpc2.ID]*inflight
	nextOutID    uint64
	waiting      map[string]chan []byte // id of a request to the editor -> its answer
}

// inflight is a request running on a goroutine of its own.
type inflight struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once it has been answered
}

// Serve speaks the protocol on r and w until the editor sends exit or r ends, and returns
// the process exit code: 0 after shutdown, 1 otherwise. When it returns, every request has
// been answered or cancelled and every goroutine it started has finished.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) int {
	s := &Server{opts: opts, log: opts.Log, exited: make(chan struct{}), ready: make(chan struct{}), inflight: map[jsonrpc2.ID]*inflight{}, waiting: map[string]chan []byte{}, exitCode: 1}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var closer io.Closer
	if c, ok := r.(io.Closer); ok {
		closer = c
	}
	s.stream = newFrameStream(r, w, closer)
	s.stream.intercept = s.answer
	s.host = session.NewHost(session.HostOptions{Log: s.log, Report: s.report})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.bg, s.bgCancel = context.WithCancel(ctx)
	s.conn = jsonrpc2.NewConn(ctx, s.stream, s, jsonrpc2.SetLogger(slogPrinter{s.log}))
	close(s.ready)
	select {
	case <-s.conn.DisconnectNotify():
	case <-s.exited:
		s.conn.Close()
	}
	cancel()
	s.mu.Lock()
	for _, f := range s.inflight {
		f.cancel()
	}
	s.mu.Unlock()
	s.bgCancel()
	s.bgWG.Wait()
	s.wg.Wait()
	s.host.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) { p.log.Info(fmt.Sprintf(format, v...)) }

// Handle is called by jsonrpc2 on its read goroutine, in arrival order. Notifications and
// quick requests are handled right here, so their order is kept ($/cancelRequest reaches a
// running prompt at once, steer lands before anything sent after it); requests that run the
// agent or wait on the editor get a goroutine and a context of their own.
func (s *Server) Handle(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	<-s.ready
	if req.Notif {
		s.guard(req, func() { s.notification(req) })
		return
	}
	if err := s.admit(req.Method); err != nil {
		s.reply(req.ID, nil, err)
		return
	}
	if h, ok := longMethods[req.Method]; ok {
		rctx, cancel := context.WithCancel(ctx)
		start, err := h.start(s, req)
		if err != nil {
			cancel()
			s.reply(req.ID, nil, err)
			return
		}
		f := &inflight{cancel: cancel, done: make(chan struct{})}
		s.mu.Lock()
		s.inflight[req.ID] = f
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				if s.inflight[req.ID] == f {
					delete(s.inflight, req.ID)
				}
				s.mu.Unlock()
				cancel()
				close(f.done)
			}()
			var result any
			var err error
			if perr := s.guard(req, func() { result, err = start(rctx) }); perr != nil {
				result, err = nil, perr
			}
			s.reply(req.ID, result, err)
		})
		return
	}
	h, ok := quickMethods[req.Method]
	if !ok {
		s.reply(req.ID, nil, fmt.Errorf("%w: %s", errUnknownMethod, req.Method))
		return
	}
	var result any
	var err error
	if perr := s.guard(req, func() { result, err = h(s, req) }); perr != nil {
		result, err = nil, perr
	}
	s.reply(req.ID, result, err)
	for _, f := range s.afterReply {
		f()
	}
	s.afterReply = s.afterReply[:0]
}

// guard runs f and logs a panic instead of crashing the daemon. It returns the panic as an
// internal error, which the caller answers the request with (never a result).
func (s *Server) guard(req *jsonrpc2.Request, f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", req.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("the handler of %s panicked: %v", req.Method, p)
		}
	}()
	f()
	return nil
}

// admit applies the lifecycle: nothing before initialize, nothing after shutdown.
func (s *Server) admit(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.shutdown:
		return errShutdown
	case method == "initialize" && s.initialized:
		return fmt.Errorf("%w: initialize was already received", errInvalidRequest)
	case method != "initialize" && !s.initialized:
		return errNotInitialized
	}
	return nil
}

func (s *Server) reply(id jsonrpc2.ID, result any, err error) {
	if err != nil {
		if rerr := s.conn.ReplyWithError(context.Background(), id, toWire(err)); rerr != nil {
			s.log.Debug("reply failed", "err", rerr)
		}
		return
	}
	if result == nil {
		result = json.RawMessage("null")
	}
	if rerr := s.conn.Reply(context.Background(), id, result); rerr != nil {
		s.log.Debug("reply failed", "err", rerr)
	}
}

// notification handles one notification on the read goroutine.
func (s *Server) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "exit":
		s.mu.Lock()
		if s.shutdown {
			s.exitCode = 0
		}
		s.mu.Unlock()
		s.exitOnce.Do(func() { close(s.exited) })
	case "$/cancelRequest":
		var p struct {
			ID jsonrpc2.ID `json:"id"`
		}
		if err := decodeParams(req.Params, &p); err != nil {
			s.log.Warn("bad $/cancelRequest", "err", err)
			return
		}
		s.mu.Lock()
		f := s.inflight[p.ID]
		s.mu.Unlock()
		if f != nil {
			f.cancel()
		}
	case "initialized", "$/setTrace", "$/logTrace":
	default:
		s.log.Debug("ignored notification", "method", req.Method)
	}
}

// notify writes a notification. Errors mean the editor is gone; they are logged only.
func (s *Server) notify(method string, params any) {
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		s.log.Error("encoding a notification failed", "method", method, "err", err)
		return
	}
	if err := s.stream.writeFrame(body); err != nil {
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
// $/cancelRequest. pid's requests bypass jsonrpc2's Conn: the request is written by hand and
// the answer taken off the frame stream (answer), which saves a map-based encoding and two
// decodings on the approval round trip.
func (s *Server) call(ctx context.Context, method string, params []byte, result any) error {
	s.mu.Lock()
	s.nextOutID++
	id := strconv.FormatUint(s.nextOutID, 10)
	ch := make(chan []byte, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
	}()
	b := make([]byte, 0, 64+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = llm.AppendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	b = append(b, '}')
	if err := s.stream.writeFrame(b); err != nil {
		return fmt.Errorf("writing %s: %w", method, err)
	}
	select {
	case body := <-ch:
		return decodeAnswer(body, result)
	case <-s.conn.DisconnectNotify():
		return errors.New("the editor disconnected")
	case <-ctx.Done():
		s.notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})
		return ctx.Err()
	}
}

// answer takes a response to one of pid's own requests off the stream; it reports false for
// any other response, which then goes to jsonrpc2 (and is logged as unexpected there).
func (s *Server) answer(id json.RawMessage, body []byte) bool {
	s.mu.Lock()
	ch := s.waiting[string(id)]
	delete(s.waiting, string(id))
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- body
	return true
}

// editorError is an error response from the editor.
type editorError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *editorError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

func decodeAnswer(body []byte, result any) error {
	f := gjson.GetManyBytes(body, "error", "result")
	if f[0].Exists() && f[0].Type != gjson.Null {
		var e editorError
		if err := json.Unmarshal([]byte(f[0].Raw), &e); err != nil {
			return &editorError{Message: "malformed error response: " + f[0].Raw}
		}
		return &e
	}
	if result == nil || !f[1].Exists() {
		return nil
	}
	if err := json.Unmarshal([]byte(f[1].Raw), result); err != nil {
		return fmt.Errorf("the editor's answer does not have the expected shape: %v", err)
	}
	return nil
}

// quickMethods run on the read goroutine: they never block.
var quickMethods = map[string]func(*Server, *jsonrpc2.Request) (any, error){
	"initialize":         (*Server).initialize,
	"session/new":        (*Server).sessionNew,
	"session/steer":      (*Server).sessionSteer,
	"session/followUp":   (*Server).sessionFollowUp,
	"permissions/list":   (*Server).permissionsList,
	"permissions/revoke": (*Server).permissionsRevoke,
	"trust/list":         (*Server).trustList,
	"trust/grant":        (*Server).trustGrant,
	"trust/revoke":       (*Server).trustRevoke,
	"tools/list":         (*Server).toolsList,
}

// longMethod validates its request on the read goroutine (so that errors such as a busy
// session are answered in order) and returns the work to run on a goroutine of its own.
type longMethod struct {
	start func(*Server, *jsonrpc2.Request) (func(context.Context) (any, error), error)
}

var longMethods map[string]longMethod

func init() {
	longMethods = map[string]longMethod{
		"session/prompt": {(*Server).sessionPrompt},
		"tools/execute":  {(*Server).toolsExecute},
		"shutdown":       {(*Server).shutdownReq},
	}
}

func (s *Server) initialize(req *jsonrpc2.Request) (any, error) {
	var p protocol.InitializeParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	var defaults session.Config
	if p.InitializationOptions != nil {
		b, _ := json.Marshal(p.InitializationOptions)
		if err := json.Unmarshal(b, &defaults); err != nil {
			return nil, invalidParams("initializationOptions: %s", describeJSONError(err))
		}
	}
	caps := declared(p.Capabilities.Experimental)
	roots, err := workspaceRoots(&p)
	if err != nil {
		return nil, err
	}
	s.host.SetUp(roots)
	s.mu.Lock()
	s.initialized = true
	s.clientBefore, s.clientAfter, s.clientTrust = caps.before, caps.after, caps.trust
	s.defaults = defaults
	s.mu.Unlock()
	return &protocol.InitializeResult{
		ServerInfo: &protocol.ServerInfo{Name: "pid", Version: s.opts.Version},
		Capabilities: protocol.ServerCapabilities{
			Experimental: map[string]any{"pid": map[string]any{
				"protocolVersion": ProtocolVersion,
				"tools":           session.BuiltinTools(),
			}},
		},
	}, nil
}

// clientCaps are the editor's declarations under capabilities.experimental.pid.
type clientCaps struct {
	before, after, trust bool
}

// declared reads capabilities.experimental.pid.{beforeToolCall,afterToolCall,trust}.
func declared(exp any) clientCaps {
	m, _ := exp.(map[string]any)
	pid, _ := m["pid"].(map[string]any)
	var c clientCaps
	c.before, _ = pid["beforeToolCall"].(bool)
	c.after, _ = pid["afterToolCall"].(bool)
	c.trust, _ = pid["trust"].(bool)
	return c
}

// shutdownReq stops taking requests at once (admit answers -32600 from now on), cancels the
// running ones, and answers only once they have all been answered: an editor that has the
// shutdown reply knows nothing more is coming.
func (s *Server) shutdownReq(*jsonrpc2.Request) (func(context.Context) (any, error), error) {
	s.mu.Lock()
	s.shutdown = true
	running := make([]*inflight, 0, len(s.inflight))
	for _, f := range s.inflight {
		running = append(running, f)
	}
	s.mu.Unlock()
	return func(context.Context) (any, error) {
		for _, f := range running {
			f.cancel()
		}
		s.bgCancel()
		for _, f := range running {
			<-f.done
		}
		s.bgWG.Wait()
		return nil, nil
	}, nil
}

// Package rpc is pid's JSON-RPC face for editors: JSON-RPC 2.0 with LSP framing over a
// byte stream (the daemon's stdin and stdout). It decodes requests, calls the core (package
// loop), and encodes results, notifications and requests to the editor; docs/protocol.md
// describes the protocol. The entry point is Serve.
//
// This file holds the server: the read loop, the lifecycle, request dispatch and replies,
// and pid's own requests to the editor.
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
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/internal/rpcwire"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/sandbox"
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

	// exit is set by the exit notification; only the read goroutine touches it.
	exit bool
	// done closes when the read loop has ended (exit, or the input ended or broke): pid's
	// requests to the editor then get no answer.
	done chan struct{}

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
	defaults     session.Config // initializationOptions
	// inflight holds the long requests not yet answered, by id key (rpcwire.IDKey): what
	// $/cancelRequest reaches, and the ids a new request may not reuse.
	inflight map[string]*inflight
	// running holds the long requests whose reply is not yet written: what shutdown waits for.
	running   map[*inflight]struct{}
	nextOutID uint64
	waiting   map[string]chan answerMsg // id key of a request to the editor -> its answer
}

// inflight is a request running on a goroutine of its own.
type inflight struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once it has been answered
}

// answerMsg is the editor's response to one of pid's requests: its members, raw.
type answerMsg struct {
	result, err json.RawMessage
}

// Serve speaks the protocol on r and w until the editor sends exit or r ends, and returns
// the process exit code: 0 after shutdown, 1 otherwise. When it returns, every request has
// been answered or cancelled and every goroutine it started has finished; r is closed if it
// is an io.Closer. Ending ctx closes r (when it is an io.Closer), which ends Serve.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) int {
	s := &Server{opts: opts, log: opts.Log, done: make(chan struct{}), exitCode: 1,
		inflight: map[string]*inflight{}, running: map[*inflight]struct{}{}, waiting: map[string]chan answerMsg{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.stream = newFrameStream(r, w)
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

	err := s.readLoop(ctx)
	close(s.done)
	var fe *frameError
	switch {
	case errors.As(err, &fe):
		s.log.Error("closing the connection: the input cannot be read on", "reason", fe.msg)
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil:
		s.log.Warn("reading the input failed; closing the connection", "err", err)
	}
	closeInput()
	if !stop() {
		<-closed // ctx ended: wait for its close to finish
	}
	cancel()
	s.mu.Lock()
	for f := range s.running {
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

// readLoop reads and dispatches messages until the editor sends exit (it returns nil) or the
// input ends or breaks (it returns why).
func (s *Server) readLoop(ctx context.Context) error {
	for {
		m, err := s.stream.readMessage()
		switch {
		case err != nil:
			return err
		case m == nil: // answered with an error
		case m.response:
			s.answer(m)
		default:
			s.handle(ctx, m)
			if s.exit {
				return nil
			}
		}
	}
}

// handle dispatches one request or notification, on the read goroutine, in arrival order.
// Notifications and quick requests are handled right here, so their order is kept
// ($/cancelRequest reaches a running prompt at once, steer lands before anything sent after
// it); requests that run the agent or wait on the editor get a goroutine and a context of
// their own. Handlers see a jsonrpc2.Request with Method and Params; its ID is not set (the
// id the editor wrote is answered by this file, exactly as written).
func (s *Server) handle(ctx context.Context, m *incoming) {
	if m.id == nil {
		s.guard(m.method, func() { s.notification(m) })
		return
	}
	if err := s.admit(m.method, m.key); err != nil {
		s.reply(m.id, nil, err)
		return
	}
	req := &jsonrpc2.Request{Method: m.method}
	if m.params != nil {
		p := m.params
		req.Params = &p
	}
	if h, ok := longMethods[m.method]; ok {
		var start func(context.Context) (any, error)
		var err error
		if perr := s.guard(m.method, func() { start, err = h.start(s, req) }); perr != nil {
			err = perr
		}
		req.Params = nil // the frame is not kept alive while the request runs
		if err != nil {
			s.reply(m.id, nil, err)
			return
		}
		rctx, cancel := context.WithCancel(ctx)
		f := &inflight{cancel: cancel, done: make(chan struct{})}
		s.mu.Lock()
		s.inflight[m.key] = f
		s.running[f] = struct{}{}
		s.mu.Unlock()
		id, key, method := m.id, m.key, m.method
		s.wg.Go(func() {
			var result any
			var err error
			if perr := s.guard(method, func() { result, err = start(rctx) }); perr != nil {
				result, err = nil, perr
			}
			// The id is free again before the answer goes out: an editor may reuse it as
			// soon as it has the answer.
			s.mu.Lock()
			if s.inflight[key] == f {
				delete(s.inflight, key)
			}
			s.mu.Unlock()
			s.writeReply(id, result, err, method == "shutdown" && err == nil)
			cancel()
			s.mu.Lock()
			delete(s.running, f)
			s.mu.Unlock()
			close(f.done)
		})
		return
	}
	h, ok := quickMethods[m.method]
	if !ok {
		s.reply(m.id, nil, fmt.Errorf("%w: %s", errUnknownMethod, m.method))
		return
	}
	var result any
	var err error
	if perr := s.guard(m.method, func() { result, err = h(s, req) }); perr != nil {
		result, err = nil, perr
	}
	s.reply(m.id, result, err)
	for _, f := range s.afterReply {
		f()
	}
	s.afterReply = s.afterReply[:0]
}

// guard runs f and logs a panic instead of crashing the daemon. It returns the panic as an
// internal error, which the caller answers the request with (never a result).
func (s *Server) guard(method string, f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("the handler of %s panicked: %v", method, p)
		}
	}()
	f()
	return nil
}

// admit applies the lifecycle (nothing before initialize, nothing after shutdown) and
// refuses the id of a request still running: a cancel naming it could not tell the two apart.
func (s *Server) admit(method, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.shutdown:
		return errShutdown
	case method == "initialize" && s.initialized:
		return fmt.Errorf("%w: initialize was already received", errInvalidRequest)
	case method != "initialize" && !s.initialized:
		return errNotInitialized
	case s.inflight[key] != nil:
		return fmt.Errorf("%w: a request with this id is still running; give every request an id of its own", errInvalidRequest)
	}
	return nil
}

// reply answers the request with id: its result, or its error mapped to a code.
func (s *Server) reply(id json.RawMessage, result any, err error) {
	s.writeReply(id, result, err, false)
}

// writeReply is reply; last marks the shutdown reply, after which pid starts nothing.
func (s *Server) writeReply(id json.RawMessage, result any, err error, last bool) {
	var body []byte
	if err == nil {
		rb, merr := json.Marshal(result) // nil is null
		if merr != nil {
			s.log.Error("encoding a result failed", "err", merr)
			err = merr
		} else {
			body = make([]byte, 0, 40+len(id)+len(rb))
			body = append(body, `{"jsonrpc":"2.0","id":`...)
			body = append(body, id...)
			body = append(body, `,"result":`...)
			body = append(body, rb...)
			body = append(body, '}')
		}
	}
	if err != nil {
		body = errorBody(id, toWire(err))
	}
	if werr := s.stream.writeAnswer(body, last); werr != nil {
		s.log.Debug("reply failed", "err", werr)
	}
}

// notification handles one notification on the read goroutine.
func (s *Server) notification(m *incoming) {
	switch m.method {
	case "exit":
		s.mu.Lock()
		if s.shutdown {
			s.exitCode = 0
		}
		s.mu.Unlock()
		s.exit = true
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		params := m.params
		if err := decodeParams(&params, &p); err != nil {
			s.log.Warn("bad $/cancelRequest", "err", err)
			return
		}
		key, ok := rpcwire.IDKey(p.ID)
		if !ok {
			s.log.Warn("bad $/cancelRequest: id must be a string or a number", "id", truncate(string(p.ID), 80))
			return
		}
		s.mu.Lock()
		f := s.inflight[key]
		s.mu.Unlock()
		if f != nil {
			f.cancel()
		}
	case "initialized", "$/setTrace", "$/logTrace":
	default:
		s.log.Debug("ignored notification", "method", m.method)
	}
}

// notify writes a notification. Errors mean the editor is gone, or that the shutdown reply
// was written; they are logged only.
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
// $/cancelRequest. Once the read loop has ended, or after the shutdown reply, it fails at
// once. The answer is taken off the read loop (answer), with no decoding but result's.
func (s *Server) call(ctx context.Context, method string, params []byte, result any) error {
	s.mu.Lock()
	s.nextOutID++
	id := strconv.FormatUint(s.nextOutID, 10)
	key, _ := rpcwire.IDKey([]byte(id))
	ch := make(chan answerMsg, 1)
	s.waiting[key] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, key)
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
	case a := <-ch:
		return decodeAnswer(a, result)
	case <-s.done:
		return errors.New("the editor disconnected")
	case <-ctx.Done():
		s.notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})
		return ctx.Err()
	}
}

// answer hands a response to the request of pid's it answers. A response to nothing pid
// waits for (a late answer to a request given up on, or one with id null) is logged and
// dropped.
func (s *Server) answer(m *incoming) {
	s.mu.Lock()
	ch := s.waiting[m.key]
	delete(s.waiting, m.key)
	s.mu.Unlock()
	if ch == nil {
		if m.id == nil && m.error != nil {
			s.log.Warn("the editor answered with an error to a message it could not read", "error", truncate(string(m.error), 400))
			return
		}
		s.log.Debug("dropped a response to no pending request of pid's", "id", truncate(string(m.id), 80))
		return
	}
	ch <- answerMsg{result: m.result, err: m.error}
}

// editorError is an error response from the editor.
type editorError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *editorError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

func decodeAnswer(a answerMsg, result any) error {
	if a.err != nil && string(a.err) != "null" {
		var e editorError
		if err := json.Unmarshal(a.err, &e); err != nil {
			return &editorError{Message: "malformed error response: " + truncate(string(a.err), 200)}
		}
		return &e
	}
	if result == nil || a.result == nil {
		return nil
	}
	if p, ok := result.(**beforeAnswer); ok {
		if v, ok := decodeBeforeAnswer(a.result); ok {
			*p = v
			return nil
		}
	}
	if err := json.Unmarshal(a.result, result); err != nil {
		return fmt.Errorf("the editor's answer does not have the expected shape: %v", err)
	}
	return nil
}

// decodeBeforeAnswer decodes the usual answer to beforeToolCall, an object whose members are
// "decision" and "reason" with plain strings, without encoding/json's reflection (an answer
// is on the path of every approval). It reports false for anything else (other members,
// escapes, null, bytes that are not UTF-8), which the caller then decodes with
// encoding/json: so the outcome is always what encoding/json gives. raw has passed
// rpcwire.Scan.
func decodeBeforeAnswer(raw []byte) (*beforeAnswer, bool) {
	a := &beforeAnswer{}
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return a, skipWS(raw, i+1) == len(raw)
	}
	for {
		key, next, ok := plainString(raw, i)
		if !ok {
			return nil, false
		}
		i = skipWS(raw, next)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		val, next, ok := plainString(raw, skipWS(raw, i+1))
		if !ok {
			return nil, false
		}
		switch string(key) {
		case "decision":
			a.Decision = string(val)
		case "reason":
			a.Reason = string(val)
		default:
			return nil, false
		}
		i = skipWS(raw, next)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipWS(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return a, skipWS(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// plainString returns the inside of the JSON string at b[i] and the index after it, and
// reports false when there is none or it holds an escape or bytes that are not UTF-8.
func plainString(b []byte, i int) (inner []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			inner = b[i+1 : j]
			return inner, j + 1, ascii || utf8.Valid(inner)
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, 0, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
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
	"session/close":      (*Server).sessionClose,
	"mcp/servers":        (*Server).mcpServers,
	"session/delete":     (*Server).sessionDelete,
	"session/setModel":   (*Server).sessionSetModel,
	"models/list":        (*Server).modelsList,
}

// longMethod validates its request on the read goroutine (so that errors such as a busy
// session are answered in order) and returns the work to run on a goroutine of its own.
type longMethod struct {
	start func(*Server, *jsonrpc2.Request) (func(context.Context) (any, error), error)
}

var longMethods map[string]longMethod

func init() {
	longMethods = map[string]longMethod{
		"session/prompt":   {(*Server).sessionPrompt},
		"session/list":     {(*Server).sessionList},
		"session/load":     {(*Server).sessionLoad},
		"session/fork":     {(*Server).sessionFork},
		"session/messages": {(*Server).sessionMessages},
		"session/compact":  {(*Server).sessionCompact},
		"tools/execute":    {(*Server).toolsExecute},
		"shutdown":         {(*Server).shutdownReq},
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
	s.clientRead, s.clientWrite = caps.readFile, caps.writeFile
	s.defaults = defaults
	s.mu.Unlock()
	return &protocol.InitializeResult{
		ServerInfo: &protocol.ServerInfo{Name: "pid", Version: s.opts.Version},
		Capabilities: protocol.ServerCapabilities{
			Experimental: map[string]any{"pid": map[string]any{
				"protocolVersion": ProtocolVersion,
				"sessions":        true,
				"tools":           session.BuiltinTools(),
				"sandbox":         sandbox.Probe(),
			}},
		},
	}, nil
}

// clientCaps are the editor's declarations under capabilities.experimental.pid.
type clientCaps struct {
	before, after, trust bool
	readFile, writeFile  bool
}

// declared reads capabilities.experimental.pid.{beforeToolCall,afterToolCall,trust} and
// .fs.{readTextFile,writeTextFile}.
func declared(exp any) clientCaps {
	m, _ := exp.(map[string]any)
	pid, _ := m["pid"].(map[string]any)
	var c clientCaps
	c.before, _ = pid["beforeToolCall"].(bool)
	c.after, _ = pid["afterToolCall"].(bool)
	c.trust, _ = pid["trust"].(bool)
	fs, _ := pid["fs"].(map[string]any)
	c.readFile, _ = fs["readTextFile"].(bool)
	c.writeFile, _ = fs["writeTextFile"].(bool)
	return c
}

// shutdownReq stops taking requests at once (admit answers -32600 from now on), cancels the
// running ones and pid's own questions, and answers only once they have all been answered:
// an editor that has the shutdown reply knows nothing more is coming. Its reply is written
// with last set (handle), so that whatever part of pid still reports after it (a settings
// file that changes) is logged but not sent.
func (s *Server) shutdownReq(*jsonrpc2.Request) (func(context.Context) (any, error), error) {
	s.mu.Lock()
	s.shutdown = true
	running := make([]*inflight, 0, len(s.running))
	for f := range s.running {
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

// This file holds one connection to a server (conn): the SDK client session over a stdio
// process or streamable HTTP, tool calls with their progress, the server's requests
// (elicitation, sampling, roots), tool-list refreshes, and the shutdown.

package mcp

//lint:file-ignore SA1019 roots, sampling and logging are what the issue asks for: protocol 2026-07-28 deprecates them, but keeps them for a year and older servers use them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
)

// exitWait bounds how long a call that lost its stdio connection waits for the process to
// exit on its own (a crash) before pid kills it (a broken connection).
const exitWait = time.Second

// conn is one connection to a server: a started process (stdio) or an HTTP session.
type conn struct {
	srv    *server
	client *sdk.Client
	httpT  *http.Transport // nil for stdio; its idle connections are closed at shutdown
	// ctx ends when the connection is shut down or lost; calls and handlers derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	up     time.Time // when it became ready

	shutOnce sync.Once
	closed   chan struct{} // closed when shutdown is complete

	// asking holds a token while one of the server's questions is with the person: one is
	// open at a time, the next waits for its answer.
	asking chan struct{}

	// rootsMu serializes syncRoots and guards the fields below it.
	rootsMu   sync.Mutex
	rootsRaw  []string // the last Options.Roots answer
	rootsSent []string // the URIs the client holds

	// mu guards the fields below it. cs and proc are set once, while the connection
	// starts, before it is published as the server's.
	mu       sync.Mutex
	cs       *sdk.ClientSession
	proc     *process // nil for HTTP
	shutting bool     // shutdown has begun: a session connected now is closed at once
	calls    map[string]*activeCall
	nextCall uint64
	// dead is set once the connection stopped working on its own; deadWhy says how
	// ("its process exited (exit status 3)"), deadDetail adds the end of stderr.
	dead                bool
	deadWhy, deadDetail string
	refreshing, refetch bool
}

// maxQuestionsPerCall is how many questions (elicitation requests) a server may ask the
// person during one tool call; the rest are refused, saying so.
const maxQuestionsPerCall = 10

// activeCall is a running tools/call.
type activeCall struct {
	ctx      context.Context
	progress *progressThrottle // nil when the caller takes no updates
	asked    atomic.Int32      // the questions the server asked during the call
}

// callKey marks the context of a call, so that a server's request made within the call
// (multi round-trip, protocol 2026-07-28) is routed with it.
type callKey struct{}

// connect starts a connection and lists its tools. On failure everything it started is
// stopped and the error says why, for a person.
func (s *server) connect(ctx context.Context) (*conn, []Tool, error) {
	cfg, err := s.cfg.expand(lookupEnv)
	if err != nil {
		return nil, nil, err
	}
	c := &conn{srv: s, calls: map[string]*activeCall{}, closed: make(chan struct{}), asking: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return nil, nil, errors.New("stopped before it started")
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()

	opts := &sdk.ClientOptions{
		Logger:                 s.log,
		ElicitationHandler:     c.elicit,
		CreateMessageHandler:   c.sample,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.refreshTools() },
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			s.log.Debug("mcp server log", "level", r.Params.Level, "logger", r.Params.Logger, "data", r.Params.Data)
		},
	}
	var transport sdk.Transport
	if cfg.IsHTTP() {
		// Over HTTP the SDK delivers progress from its dispatcher; over stdio pid reads it
		// off the connection, ahead of the response (see progressConn).
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { c.progress(r.Params) }
		c.httpT = http.DefaultTransport.(*http.Transport).Clone()
		transport = &sdk.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: &http.Client{Transport: headerTransport{base: c.httpT, headers: cfg.Headers}},
		}
	}
	c.client = sdk.NewClient(&sdk.Implementation{Name: "pid", Version: s.m.o.Version}, opts)
	c.client.AddReceivingMiddleware(c.rootsMiddleware)
	c.syncRoots()
	if !cfg.IsHTTP() {
		p, err := startProcess(s.name, cfg, s.log, c.processExited)
		if err != nil {
			c.shutdown(err.Error())
			return nil, nil, err
		}
		c.mu.Lock()
		stopping := c.shutting
		if !stopping {
			c.proc = p
		}
		c.mu.Unlock()
		if stopping {
			p.stop(s.m.o.StopGrace)
			p.closeOutput()
			return nil, nil, errors.New("stopped while it started")
		}
		transport = &stdioTransport{io: &sdk.IOTransport{Reader: sdkReader{p.stdout}, Writer: sdkWriter{p}}, c: c}
	}
	cs, err := c.client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: s.m.protocolVersion})
	if err == nil {
		c.mu.Lock()
		if c.shutting {
			err = errors.New("stopped while it started")
		} else {
			c.cs = cs
		}
		c.mu.Unlock()
		if err != nil {
			cs.Close()
		}
	}
	var tools []Tool
	if err == nil {
		tools, err = c.listTools(ctx)
	}
	if err != nil {
		err = c.startError(ctx, cfg, err)
		c.shutdown(err.Error())
		return nil, nil, err
	}
	c.up = time.Now()
	return c, tools, nil
}

// startError explains a failed start: the start took too long (checked first: giving up
// on initialize closes the server's stdin, and a server that then exits has not crashed),
// the process ended (with its stderr), or what the SDK said.
func (c *conn) startError(ctx context.Context, cfg ServerConfig, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		what := fmt.Sprintf("%q", cfg.Command)
		if cfg.IsHTTP() {
			what = cfg.URL
		}
		msg := fmt.Sprintf("%s did not answer initialize and tools/list within %v (the start timeout), so pid stopped it; check that it is an MCP server and that it starts", what, c.srv.m.o.StartTimeout)
		if c.proc != nil {
			msg += "." + stderrPart(c.proc)
		}
		return errors.New(msg)
	}
	if c.proc != nil {
		t := time.NewTimer(exitWait)
		select {
		case <-c.proc.exited:
		case <-t.C:
		}
		t.Stop()
		select {
		case <-c.proc.exited:
			return fmt.Errorf("%q exited (%s) before it answered pid's initialize request.%s", cfg.Command, c.proc.exitText(), stderrPart(c.proc))
		default:
		}
	}
	if cfg.IsHTTP() {
		return fmt.Errorf("cannot connect to %s: %v; check the url and headers, and that the server is up", cfg.URL, err)
	}
	return fmt.Errorf("%q failed to start: %v.%s", cfg.Command, err, stderrPart(c.proc))
}

// stderrPart is " The end of its stderr:\n..." or " It wrote nothing on stderr.".
func stderrPart(p *process) string {
	if p == nil {
		return ""
	}
	if t := p.stderrTail(); t != "" {
		return " The end of its stderr:\n" + t
	}
	return " It wrote nothing on stderr."
}

// listTools lists the server's tools (every page) under pid's names.
func (c *conn) listTools(ctx context.Context) ([]Tool, error) {
	c.mu.Lock()
	cs := c.cs
	c.mu.Unlock()
	if cs == nil {
		return nil, errors.New("not connected")
	}
	out := []Tool{}
	taken := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list failed: %w", err)
		}
		out = append(out, c.srv.toTool(t, taken))
	}
	return out, nil
}

// anyObject is the schema given to a tool whose own one pid cannot compile.
var anyObject = json.RawMessage(`{"type":"object"}`)

// toTool names an SDK tool for pid (unique among taken, which it extends), with a schema
// pid's validator compiles and its annotations as a map.
func (s *server) toTool(t *sdk.Tool, taken map[string]bool) Tool {
	name := ToolName(s.name, t.Name, func(n string) bool { return taken[n] })
	taken[name] = true
	schema := anyObject
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			schema = b
		}
	}
	// Compiling it here fills toolexec's cache for the session's toolbox, and keeps one
	// bad schema from failing every tool of the session.
	noop := func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return toolexec.Result{}, nil
	}
	if _, err := toolexec.NewToolbox(toolexec.Tool{Name: name, Parameters: schema, Execute: noop}); err != nil {
		s.log.Warn("mcp tool schema does not compile; its arguments are not checked by pid", "tool", t.Name, "error", err)
		schema = anyObject
	}
	out := Tool{Name: name, Server: s.name, Original: t.Name, Description: t.Description, InputSchema: schema}
	if a := t.Annotations; a != nil {
		m := map[string]any{"readOnlyHint": a.ReadOnlyHint, "idempotentHint": a.IdempotentHint}
		if a.DestructiveHint != nil {
			m["destructiveHint"] = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			m["openWorldHint"] = *a.OpenWorldHint
		}
		if a.Title != "" {
			m["title"] = a.Title
		}
		out.Annotations = m
	}
	return out
}

// call runs tools/call (see Server.Call).
func (c *conn) call(parent context.Context, tool string, args json.RawMessage, onUpdate func(event.Result)) (toolexec.Result, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	ac := &activeCall{ctx: ctx}
	if onUpdate != nil {
		ac.progress = newProgressThrottle(onUpdate, ProgressInterval)
		// Runs once the call is out of c.calls (deferred below): the update held back is
		// delivered before Call returns, and none after.
		defer ac.progress.finish()
	}
	c.mu.Lock()
	c.nextCall++
	id := "pid-" + strconv.FormatUint(c.nextCall, 10)
	c.calls[id] = ac
	cs := c.cs
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	ctx = context.WithValue(ctx, callKey{}, ac)
	params := &sdk.CallToolParams{Name: tool}
	if len(args) > 0 {
		params.Arguments = args
	}
	if onUpdate != nil {
		params.SetProgressToken(id)
	}
	c.syncRoots()
	res, err := cs.CallTool(ctx, params)
	if err == nil {
		if res.IsError {
			return toolexec.Result{}, &ToolError{Server: c.srv.name, Tool: tool, Result: mapResult(res)}
		}
		return mapResult(res), nil
	}
	if c.ctx.Err() == nil && parent.Err() != nil {
		return toolexec.Result{}, parent.Err()
	}
	if c.ctx.Err() == nil && !c.isLost(err) {
		return toolexec.Result{}, fmt.Errorf("MCP server %q: %s failed: %v", c.srv.name, tool, err)
	}
	c.breakOff(err)
	return toolexec.Result{}, c.endError(tool)
}

// isLost reports whether a call's error says the connection is gone, rather than that the
// server refused the call: for stdio, the pipe closed or the process exited; over HTTP, no
// answer from the server (the SDK keeps an HTTP session after a failed request, so that a
// passing failure does not end it; pid starts a new one on the next call instead).
func (c *conn) isLost(err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	if c.httpT != nil {
		var ue *url.Error
		return errors.As(err, &ue) || errors.Is(err, sdk.ErrSessionMissing)
	}
	select {
	case <-c.proc.exited:
		return true
	default:
		return false
	}
}

// breakOff handles a connection a call found broken: a stdio process gets a moment to exit
// on its own (a crash, whose exit processExited reports) before it is killed as broken.
func (c *conn) breakOff(err error) {
	if c.ctx.Err() != nil {
		return // shut down, or already lost
	}
	if c.proc != nil {
		t := time.NewTimer(exitWait)
		select {
		case <-c.proc.exited:
		case <-t.C:
		}
		t.Stop()
	}
	if c.proc != nil {
		c.lost(fmt.Sprintf("its connection broke (%v)", err), "")
	} else {
		c.lost(fmt.Sprintf("the connection to %s broke (%v)", c.srv.cfg.URL, err), "")
	}
}

// endError is the error of a call whose connection ended under it.
func (c *conn) endError(tool string) error {
	c.mu.Lock()
	dead, why, detail := c.dead, c.deadWhy, c.deadDetail
	c.mu.Unlock()
	if dead {
		return fmt.Errorf("MCP server %q: %s during the call to %s; %s.%s", c.srv.name, why, tool, c.again(), detail)
	}
	return fmt.Errorf("MCP server %q was stopped during the call to %s: %v", c.srv.name, tool, context.Cause(c.ctx))
}

// again says what the next call does about a lost connection.
func (c *conn) again() string {
	if c.httpT != nil {
		return "the next call connects again"
	}
	return "the next call starts it again"
}

// processExited is the process's exit report: unless pid stopped it, the server crashed.
func (c *conn) processExited(p *process, stopped bool) {
	if stopped {
		return
	}
	c.lost("its process exited ("+p.exitText()+")", stderrPart(p))
}

// lost marks the connection as dead (once): calls in flight end, the server is failed.
func (c *conn) lost(why, detail string) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead, c.deadWhy, c.deadDetail = true, why, detail
	c.mu.Unlock()
	c.cancel(errors.New(why))
	status := why + "; " + c.again() + "."
	if detail != "" {
		status += detail
	}
	c.srv.connLost(c, status)
}

// shutdown ends the connection and waits until it is over: calls and handlers are
// cancelled (why is their cause), a process is stopped (process.stop), the SDK's session
// closed, and the pipes and HTTP connections released.
func (c *conn) shutdown(why string) {
	c.shutOnce.Do(func() {
		c.cancel(errors.New(why))
		c.mu.Lock()
		c.shutting = true
		cs, proc := c.cs, c.proc
		c.mu.Unlock()
		if proc != nil {
			proc.stop(c.srv.m.o.StopGrace)
		}
		if cs != nil {
			cs.Close()
		}
		if proc != nil {
			proc.closeOutput()
		}
		if c.httpT != nil {
			c.httpT.CloseIdleConnections()
		}
		c.srv.mu.Lock()
		delete(c.srv.conns, c)
		c.srv.mu.Unlock()
		close(c.closed)
	})
	<-c.closed
}

// progress hands a progress notification to the call whose token it carries, through the
// call's throttle (see progressThrottle).
func (c *conn) progress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	c.mu.Lock()
	ac := c.calls[tok]
	c.mu.Unlock()
	if ac != nil && ac.progress != nil {
		ac.progress.push(p)
	}
}

// callOf returns the call a server's request belongs to: the one whose context it
// carries (multi round-trip, protocol 2026-07-28), else the only call running on this
// connection, else nil.
func (c *conn) callOf(ctx context.Context) *activeCall {
	if ac, ok := ctx.Value(callKey{}).(*activeCall); ok {
		return ac
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) == 1 {
		for _, ac := range c.calls {
			return ac
		}
	}
	return nil
}

// routeCtx returns the context a server's request is handled in: its own when it is part
// of a call (multi round-trip, protocol 2026-07-28), else the context of the only call
// running on this connection, else its own; in the last two cases it also ends when the
// request's context or the connection does.
func (c *conn) routeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(callKey{}) != nil {
		return ctx, func() {}
	}
	base := ctx
	if ac := c.callOf(ctx); ac != nil {
		base = ac.ctx
	}
	merged, cancel := context.WithCancel(base)
	stopReq := context.AfterFunc(ctx, cancel)
	stopConn := context.AfterFunc(c.ctx, cancel)
	return merged, func() { stopReq(); stopConn(); cancel() }
}

// elicit routes elicitation/create to Options.Elicit; without an answer it declines. A
// server has one question open at a time (the next waits for the answer) and at most
// maxQuestionsPerCall per call: a question over the limit is refused, with an error for
// a request of its own, and for an input request of the call (protocol 2026-07-28, where
// an error would fail the whole call) with the action cancel and the reason in
// _meta.pid.reason.
func (c *conn) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: "decline"}
	f := c.srv.m.o.Elicit
	if f == nil {
		return decline, nil
	}
	_, inCall := ctx.Value(callKey{}).(*activeCall)
	if ac := c.callOf(ctx); ac != nil && ac.asked.Add(1) > maxQuestionsPerCall {
		why := fmt.Sprintf("pid declined this question: MCP server %q already asked %d questions during this tool call, the most pid lets one call ask the person", c.srv.name, maxQuestionsPerCall)
		c.srv.log.Info("elicitation refused", "why", why)
		if inCall {
			return &sdk.ElicitResult{Action: "cancel", Meta: sdk.Meta{"pid": map[string]any{"reason": why}}}, nil
		}
		return nil, &jsonrpc.Error{Code: -1, Message: why}
	}
	ctx, done := c.routeCtx(ctx)
	defer done()
	select {
	case c.asking <- struct{}{}:
	case <-ctx.Done():
		return nil, &jsonrpc.Error{Code: -1, Message: fmt.Sprintf("pid cancelled this question of MCP server %q before it was asked: %v", c.srv.name, context.Cause(ctx))}
	}
	defer func() { <-c.asking }()
	res, err := f(ctx, c.srv.name, req.Params)
	if err != nil || res == nil {
		if err != nil {
			c.srv.log.Info("elicitation declined", "error", err)
		}
		return decline, nil
	}
	return res, nil
}

// sample answers sampling/createMessage through Options.Sample when the server's config
// allows it, and declines with an error saying what to do otherwise.
func (c *conn) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	s := c.srv
	if !s.cfg.Sampling {
		return nil, &jsonrpc.Error{Code: -1, Message: fmt.Sprintf(`pid declined the sampling/createMessage request of MCP server %q: sampling is off for this server; set "sampling": true in its mcpServers entry to let it use pid's model`, s.name)}
	}
	f := s.m.o.Sample
	if f == nil {
		return nil, &jsonrpc.Error{Code: -1, Message: fmt.Sprintf(`pid declined the sampling/createMessage request of MCP server %q: this pid cannot sample for MCP servers`, s.name)}
	}
	ctx, done := c.routeCtx(ctx)
	defer done()
	return f(ctx, s.name, req.Params)
}

// syncRoots gives the client the current workspace folders (Options.Roots) as file://
// roots, if they changed; the SDK tells the server with notifications/roots/list_changed.
func (c *conn) syncRoots() {
	var raw []string
	if f := c.srv.m.o.Roots; f != nil {
		raw = f()
	}
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	if c.rootsRaw != nil && slices.Equal(raw, c.rootsRaw) {
		return
	}
	c.rootsRaw = append([]string{}, raw...)
	want := make([]string, 0, len(raw))
	for _, p := range raw {
		if p == "" {
			continue
		}
		u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(p))}).String()
		if !slices.Contains(want, u) {
			want = append(want, u)
		}
	}
	var gone []string
	for _, u := range c.rootsSent {
		if !slices.Contains(want, u) {
			gone = append(gone, u)
		}
	}
	var add []*sdk.Root
	for _, u := range want {
		if !slices.Contains(c.rootsSent, u) {
			add = append(add, &sdk.Root{URI: u, Name: filepath.Base(filepath.FromSlash(u[len("file://"):]))})
		}
	}
	c.rootsSent = want
	if len(gone) > 0 {
		c.client.RemoveRoots(gone...)
	}
	if len(add) > 0 {
		c.client.AddRoots(add...)
	}
}

// rootsMiddleware refreshes the roots before the SDK answers a roots/list request.
func (c *conn) rootsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "roots/list" {
			c.syncRoots()
		}
		return next(ctx, method, req)
	}
}

// refreshTools lists the tools again after notifications/tools/list_changed, on a
// goroutine of its own (a handler must not hold up the SDK's dispatcher); changes that
// arrive meanwhile make it list once more.
func (c *conn) refreshTools() {
	c.mu.Lock()
	if c.refreshing {
		c.refetch = true
		c.mu.Unlock()
		return
	}
	c.refreshing = true
	c.mu.Unlock()
	if !c.srv.m.bg.goFunc(c.refreshLoop) {
		c.mu.Lock()
		c.refreshing = false
		c.mu.Unlock()
	}
}

func (c *conn) refreshLoop() {
	for {
		ctx, cancel := context.WithTimeout(c.ctx, c.srv.m.o.StartTimeout)
		tools, err := c.listTools(ctx)
		cancel()
		if err == nil {
			c.srv.setTools(c, tools)
		} else if c.ctx.Err() == nil {
			c.srv.log.Warn("mcp tools/list after list_changed failed", "error", err)
		}
		c.mu.Lock()
		if !c.refetch || c.ctx.Err() != nil {
			c.refreshing = false
			c.mu.Unlock()
			return
		}
		c.refetch = false
		c.mu.Unlock()
	}
}

// stdioTransport is the SDK's IOTransport over a process's pipes, with its connection
// wrapped in progressConn.
type stdioTransport struct {
	io *sdk.IOTransport
	c  *conn
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.io.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: conn, c: t.c}, nil
}

// progressConn hands progress notifications to their call as the SDK reads them off a
// stdio connection. The SDK's own handler runs on a dispatcher goroutine and can lag
// behind the response that follows a notification, so a call could return before its
// last progress was seen; here a notification is handled before the next message is read.
type progressConn struct {
	sdk.Connection
	c *conn
}

func (p *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := p.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/progress" {
		var params sdk.ProgressNotificationParams
		if json.Unmarshal(req.Params, &params) == nil {
			p.c.progress(&params)
		}
	}
	return msg, err
}

// headerTransport adds the configured headers to every request of an HTTP server.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		if r.Header.Get(k) == "" {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

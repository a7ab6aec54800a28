// This file holds sessions: the session/* and tools/* methods, and the translation of the
// loop's events into notifications.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/afterrules"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/permissions"
	modelProvider "github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// session is one conversation of the editor's.
type session struct {
	id    string
	srv   *Server
	agent *loop.Agent
	// spec is the session's own permissions, the last layer of its policy.
	spec *permissions.Spec
	// asks holds the scripted tools that need approval unless permissions say otherwise
	// (their requiresApproval); builtin holds the built-in tools the session has.
	asks    map[string]bool
	builtin map[string]bool
	ws      *tools.Workspace
	starts  *afterrules.Starts
	gates   *endGates

	// mu guards the fields below it.
	mu         sync.Mutex
	running    bool              // a session/prompt is in progress
	remembered map[string]string // tool -> "allow" | "deny", from allowAlways/denyAlways
}

func (s *Server) sessionNew(req *jsonrpc2.Request) (any, error) {
	s.mu.Lock()
	cfg := s.defaults
	s.mu.Unlock()
	var p settings
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Cwd != "" {
		cfg.Cwd = p.Cwd
	}
	if p.Model != nil {
		cfg.Model = p.Model
	}
	if cfg.Model == nil {
		s.mu.Lock()
		roots := s.roots
		s.mu.Unlock()
		cfg.Model = settingsModel(roots)
	}
	if p.ToolExecution != "" {
		cfg.ToolExecution = p.ToolExecution
	}
	if len(p.Permissions) > 0 && string(p.Permissions) != "null" {
		cfg.Permissions = p.Permissions
	}
	if p.ScriptedTools != nil {
		cfg.ScriptedTools = p.ScriptedTools
	}
	if p.SystemPrompt != "" {
		cfg.SystemPrompt = p.SystemPrompt
	}
	ss, err := s.newSession(cfg)
	if err != nil {
		return nil, err
	}
	return &sessionNewResult{SessionID: ss.id, Tools: toolInfos(ss.agent.Tools())}, nil
}

func (s *Server) newSession(cfg settings) (*session, error) {
	switch cfg.ToolExecution {
	case "", string(toolexec.Parallel), string(toolexec.Sequential):
	default:
		return nil, invalidParams("toolExecution must be %q or %q, not %q", toolexec.Parallel, toolexec.Sequential, cfg.ToolExecution)
	}
	spec, err := permissions.ParseSpec(cfg.Permissions)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	ws, err := s.workspace(cfg.Cwd)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			ws.Close()
		}
	}()
	var provider llm.Provider
	if cfg.Model != nil {
		switch cfg.Model.Provider {
		case "script":
			provider = llm.NewScript(cfg.Model.Turns...)
		default:
			m := cfg.Model
			p, err := modelProvider.New(modelProvider.Config{Provider: m.Provider, ID: m.ID, BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv, MaxTokens: m.MaxTokens})
			if err != nil {
				return nil, invalidParams("%v", err)
			}
			provider = p
		}
	}
	ss := &session{srv: s, spec: spec, asks: map[string]bool{}, builtin: map[string]bool{}, ws: ws, starts: afterrules.NewStarts(), gates: newEndGates(), remembered: map[string]string{}}
	scripted, initial, err := ss.scriptedTools(cfg.ScriptedTools)
	if err != nil {
		return nil, err
	}
	// Built-in tools first; a scripted tool of the same name replaces the built-in one.
	var all []toolexec.Tool
	for _, t := range tools.New(ws) {
		if _, replaced := ss.asks[t.Name]; !replaced {
			all = append(all, t)
			ss.builtin[t.Name] = true
			initial = append(initial, t.Name)
		}
	}
	all = append(all, scripted...)
	box, err := toolexec.NewToolbox(all...)
	if err != nil {
		return nil, invalidParams("scriptedTools: %v", err)
	}
	acfg := loop.AgentConfig{
		Provider: provider, SystemPrompt: cfg.SystemPrompt, Toolbox: box, InitialTools: initial,
		ToolExecution: toolexec.Mode(cfg.ToolExecution), Before: ss.beforeToolCall,
	}
	s.mu.Lock()
	clientAfter := s.clientAfter
	s.nextSession++
	ss.id = fmt.Sprintf("s%d", s.nextSession)
	s.mu.Unlock()
	acfg.After = ss.afterHook(clientAfter)
	if ss.agent, err = loop.NewAgent(acfg); err != nil {
		return nil, invalidParams("%v", err)
	}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	ok = true
	return ss, nil
}

func toolInfos(set *toolexec.ActiveSet) []toolInfo {
	specs := set.Specs()
	all := set.Tools()
	out := make([]toolInfo, len(specs))
	for i, sp := range specs {
		mode := all[i].ExecutionMode
		if mode == "" {
			mode = toolexec.Parallel
		}
		out[i] = toolInfo{Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters, ExecutionMode: string(mode)}
	}
	return out
}

// lookup returns the session named in params.
func (s *Server) lookup(id string) (*session, error) {
	if id == "" {
		return nil, invalidParams("sessionId is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return nil, fmt.Errorf("%w: %q", errUnknownSession, id)
	}
	return ss, nil
}

func (s *Server) sessionPrompt(req *jsonrpc2.Request) (func(context.Context) (any, error), error) {
	var p textParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	busy := ss.running
	ss.running = !busy
	ss.mu.Unlock()
	if busy {
		return nil, errBusy
	}
	return func(ctx context.Context) (any, error) {
		defer func() {
			ss.mu.Lock()
			ss.running = false
			ss.mu.Unlock()
		}()
		res, err := ss.agent.Prompt(ctx, p.Text, ss.sink())
		if errors.Is(err, loop.ErrNoProvider) {
			return nil, fmt.Errorf("%w: no model is configured for this session: pass model {provider: \"openai\" or \"anthropic\", id: MODEL} in session/new or in initializationOptions (keys come from OPENAI_API_KEY or ANTHROPIC_API_KEY, or the variable named by apiKeyEnv; OPENAI_BASE_URL or baseUrl points at Ollama, vLLM, llama.cpp or LM Studio), or {provider: \"script\", turns: [...]} for a scripted model", errFailed)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errFailed, err)
		}
		out := &promptResult{StopReason: res.StopReason, Messages: res.Messages, Terminated: res.Terminated}
		if res.Aborted {
			out.StopReason = llm.StopAborted
		}
		if out.Messages == nil {
			out.Messages = []llm.Message{}
		}
		return out, nil
	}, nil
}

func (s *Server) queue(req *jsonrpc2.Request, add func(*loop.Agent, llm.Message)) (any, error) {
	var p textParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	add(ss.agent, llm.NewUser(p.Text))
	return nil, nil
}

func (s *Server) sessionSteer(req *jsonrpc2.Request) (any, error) {
	return s.queue(req, (*loop.Agent).Steer)
}

func (s *Server) sessionFollowUp(req *jsonrpc2.Request) (any, error) {
	return s.queue(req, (*loop.Agent).FollowUp)
}

func (s *Server) toolsList(req *jsonrpc2.Request) (any, error) {
	var p sessionParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	return &toolsResult{Tools: toolInfos(ss.agent.Tools())}, nil
}

func (s *Server) toolsExecute(req *jsonrpc2.Request) (func(context.Context) (any, error), error) {
	var p executeParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	ss, err := s.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	switch p.ToolExecution {
	case "", string(toolexec.Parallel), string(toolexec.Sequential):
	default:
		return nil, invalidParams("toolExecution must be %q or %q, not %q", toolexec.Parallel, toolexec.Sequential, p.ToolExecution)
	}
	for i, c := range p.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return nil, invalidParams("toolCalls[%d] needs an id and a name", i)
		}
	}
	return func(ctx context.Context) (any, error) {
		out := ss.agent.Execute(ctx, p.ToolCalls, toolexec.Mode(p.ToolExecution), ss.sink())
		res := &executeResult{Messages: out.Messages, Terminate: out.Terminate, Aborted: out.Aborted}
		if res.Messages == nil {
			res.Messages = []llm.Message{}
		}
		if out.Aborted {
			res.Terminate = false
		}
		return res, nil
	}, nil
}

// sink is the event sink of the session's runs: the audit log's start times, then emit.
func (ss *session) sink() event.Sink { return ss.starts.Sink(ss.emit) }

// emit turns the loop's events into notifications. It is the session's event.Sink, so it is
// never called concurrently for one run and keeps the run's order.
func (ss *session) emit(ev event.Event) {
	if w, ok := ev.(event.Warning); ok {
		if w.Stack != "" {
			ss.srv.log.Warn(w.Message, "session", ss.id, "stack", w.Stack)
		}
		ss.srv.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("session %s: %s", ss.id, w.Message))
		return
	}
	bp := bufPool.Get().(*[]byte)
	b, ok, err := encodeEvent((*bp)[:0], ss.id, ev)
	switch {
	case err != nil:
		ss.srv.log.Error("encoding a notification failed", "session", ss.id, "event", fmt.Sprintf("%T", ev), "err", err)
	case ok:
		if werr := ss.srv.stream.writeFrame(b); werr != nil {
			ss.srv.log.Debug("notification not sent", "err", werr)
		}
	}
	*bp = b
	bufPool.Put(bp)
	if e, ok := ev.(event.ToolEnd); ok {
		ss.gates.ended(e.ToolCallID)
	}
}

func nonNil(m []llm.Message) []llm.Message {
	if m == nil {
		return []llm.Message{}
	}
	return m
}

func nonNilResult(r event.Result) event.Result {
	if r.Content == nil {
		r.Content = []llm.Content{}
	}
	return r
}

// endGates lets scripted tools wait for another call's toolEnd (the waitForEnd step), so
// fixtures can fix completion order without timing.
type endGates struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]chan struct{}
}

func newEndGates() *endGates { return &endGates{m: map[string]chan struct{}{}} }

func (g *endGates) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.m[id]
	if c == nil {
		c = make(chan struct{})
		g.m[id] = c
	}
	return c
}

func (g *endGates) ended(id string) {
	c := g.ch(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// wait returns when toolEnd of id was sent or ctx ends.
func (g *endGates) wait(ctx context.Context, id string) error {
	select {
	case <-g.ch(id):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ = json.RawMessage{}

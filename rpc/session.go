// This file holds the session/* and tools/* methods, and the face the session layer talks
// to: events become notifications, approval questions become requests to the editor.

package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/leangc"
	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

func (s *Server) sessionNew(p *session.Config) (any, error) {
	s.mu.Lock()
	cfg := s.defaults.Merge(*p)
	s.mu.Unlock()
	opts := s.sessionOptions(session.NewID())
	ss, err := s.host.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	res := &sessionNewResult{SessionID: ss.ID(), Tools: ss.Tools(), Modes: ss.Modes(), Instructions: ss.Instructions()}
	if q, ok := s.host.TrustQuestion(ss); ok {
		return rpcconn.Then(res, func() { s.askTrust(q) }), nil // the question names the session the answer gives
	}
	return res, nil
}

// sessionPrompt runs session/prompt: text and content blocks become one user message
// (session.UserMessage), checked here so that a bad block is answered in order.
func (s *Server) sessionPrompt(p *promptParams) (work, error) {
	ss, msg, err := s.userMessage(p)
	if err != nil {
		return nil, err
	}
	if err := ss.Begin(); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		defer ss.End()
		if call, ok := ss.FindCommand(msg); ok {
			return s.runCommand(ctx, ss, call, msg)
		}
		res, err := ss.Prompt(ctx, []llm.Message{msg})
		if err != nil {
			return nil, err
		}
		out := &promptResult{StopReason: res.StopReason, Messages: res.Messages, Terminated: res.Terminated}
		if out.Messages == nil {
			out.Messages = []llm.Message{}
		}
		return out, nil
	}, nil
}

// userMessage returns the session the params of session/prompt, steer or followUp name and
// the user message they make.
func (s *Server) userMessage(p *promptParams) (*session.Session, llm.Message, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, llm.Message{}, err
	}
	msg, err := ss.UserMessage("content", p.Text, p.Content)
	if err != nil {
		return nil, llm.Message{}, err
	}
	return ss, msg, nil
}

func (s *Server) queue(p *promptParams, add func(*session.Session, llm.Message)) (any, error) {
	ss, msg, err := s.userMessage(p)
	if err != nil {
		return nil, err
	}
	add(ss, msg)
	return nil, nil
}

func (s *Server) sessionSteer(p *promptParams) (any, error) {
	return s.queue(p, (*session.Session).SteerMessage)
}

func (s *Server) sessionFollowUp(p *promptParams) (any, error) {
	return s.queue(p, (*session.Session).FollowUpMessage)
}

// sessionSetModel runs session/setModel: the session's next model call uses the model.
func (s *Server) sessionSetModel(p *setModelParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return nil, ss.SetModel(p.Model)
}

// sessionSetMode runs session/setMode: the session's next tool calls are decided in the
// mode; modeUpdate goes out (before the answer) when it changed.
func (s *Server) sessionSetMode(p *setModeParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return nil, ss.SetMode(p.ModeID)
}

// modeChanged is the sessions' ModeChanged hook: it sends modeUpdate.
func (s *Server) modeChanged(ss *session.Session, mode string) {
	s.notify("modeUpdate", &modeUpdateParams{SessionID: ss.ID(), CurrentModeID: mode})
}

// modelsList runs models/list: the settings' models, and the session's model or the one a
// new session would get (initializationOptions.model, else the settings').
func (s *Server) modelsList(p *sessionParams) (any, error) {
	s.mu.Lock()
	def := s.defaults.Model
	s.mu.Unlock()
	return s.host.ModelList(p.SessionID, def)
}

func (s *Server) toolsList(p *sessionParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return &toolsResult{Tools: ss.ToolList()}, nil
}

// mcpServers answers mcp/servers: every MCP server of the sessions, with its status.
func (s *Server) mcpServers(*noParams) (any, error) {
	return &struct {
		Servers []session.ServerInfo `json:"servers"`
	}{s.host.MCPServers()}, nil
}

// mcpStatus sends mcp/serverStatus when a server's status changes.
func (s *Server) mcpStatus(st session.ServerInfo) {
	s.notify("mcp/serverStatus", &struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Error  string `json:"error,omitempty"`
	}{st.Name, st.Status, st.Error})
}

func (s *Server) toolsExecute(p *executeParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	for i, c := range p.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return nil, invalidParams("toolCalls[%d] needs an id and a name", i)
		}
	}
	switch p.ToolExecution {
	case "", "parallel", "sequential":
	default:
		return nil, invalidParams("toolExecution must be \"parallel\" or \"sequential\", not %q", p.ToolExecution)
	}
	return func(ctx context.Context) (any, error) {
		out, err := ss.Execute(ctx, p.ToolCalls, p.ToolExecution)
		if err != nil {
			return nil, err
		}
		res := &executeResult{Messages: out.Messages, Terminate: out.Terminate, Aborted: out.Aborted}
		if res.Messages == nil {
			res.Messages = []llm.Message{}
		}
		return res, nil
	}, nil
}

// Emit implements session.Face: events become notifications, warnings window/logMessage.
func (s *Server) Emit(ss *session.Session, ev event.Event) {
	if w, ok := ev.(event.Warning); ok {
		if w.Stack != "" {
			s.log.Warn(w.Message, "session", ss.ID(), "stack", w.Stack)
		}
		s.Warn(ss, w.Message)
		return
	}
	if s.emitSubagent(ss, ev) || s.emitSession(ss, ev) {
		return
	}
	bp := bufPool.Get().(*[]byte)
	b, ok, err := encodeEvent((*bp)[:0], ss.ID(), ev)
	switch {
	case err != nil:
		s.log.Error("encoding a notification failed", "session", ss.ID(), "event", fmt.Sprintf("%T", ev), "err", err)
	case ok:
		send := s.conn.Send
		if _, ok := ev.(event.ToolExecutionStart); ok {
			// Most tools return at once: their toolEnd then shares this write.
			send = s.conn.SendDeferred
		}
		if werr := send(b); werr != nil {
			s.log.Debug("notification not sent", "err", werr)
		}
		freezeAfter(ev)
	}
	*bp = b
	bufPool.Put(bp)
}

// freeze is PID_DEBUG_FREEZE_AFTER=KIND:N, a hook for crash tests: the run that sends the
// Nth event of that kind (a Go type name of package event, such as MessageEnd) stops right
// after sending it, forever, so that a test killing pid then kills it at exactly that point.
var freeze = func() (kind string, n int64) {
	k, nth, ok := strings.Cut(os.Getenv("PID_DEBUG_FREEZE_AFTER"), ":")
	if !ok {
		return "", 0
	}
	v, err := strconv.ParseInt(nth, 10, 64)
	if err != nil || v < 1 {
		return "", 0
	}
	return k, v
}

var (
	freezeKind, freezeN = freeze()
	freezeSeen          atomic.Int64
)

func freezeAfter(ev event.Event) {
	if freezeKind == "" || strings.TrimPrefix(fmt.Sprintf("%T", ev), "event.") != freezeKind {
		return
	}
	if freezeSeen.Add(1) == freezeN {
		select {}
	}
}

// Warn implements session.Face.
func (s *Server) Warn(ss *session.Session, msg string) {
	s.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("session %s: %s", ss.ID(), msg))
}

// The saved sessions: session/list, load, fork, close, delete and compact (docs/protocol.md,
// "Saved sessions").

type listParams struct {
	Cwd    string `json:"cwd"`
	Cursor string `json:"cursor"`
}

type listResult struct {
	Sessions   []session.Summary `json:"sessions"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// loadPageBytes caps the encoded messages of one session/load, session/fork or
// session/messages result (one item more when a single item is larger): a long session is
// answered in pages, never in one giant frame.
const loadPageBytes = 4 << 20

type loadedResult struct {
	SessionID string             `json:"sessionId"`
	Tools     []session.ToolInfo `json:"tools"`
	Modes     session.Modes      `json:"modes"`
	// Messages are the session's items from FirstIndex to the last, encoded one at a time.
	Messages []json.RawMessage `json:"messages"`
	// FirstIndex is the index, among the session's items, of the first of Messages: absent
	// (0) when they are all there, else the editor gets the earlier ones with
	// session/messages.
	FirstIndex int `json:"firstIndex,omitempty"`
	// Unsaved are the holes of the session's file (session/load only): where messages are
	// missing because saving them failed.
	Unsaved []session.Unsaved `json:"unsaved,omitempty"`
	// Instructions are the instruction files the model gets (absent: none).
	Instructions []session.InstructionFile `json:"instructions,omitempty"`
}

func (s *Server) sessionList(p *listParams) (work, error) {
	return func(context.Context) (any, error) {
		page, next, err := s.host.List(p.Cwd, p.Cursor)
		if err != nil {
			return nil, err
		}
		if page == nil {
			page = []session.Summary{}
		}
		return &listResult{Sessions: page, NextCursor: next}, nil
	}, nil
}

// sessionOptions are the options of the session with that id this face makes, loads or
// forks: the editor's afterToolCall and its buffers (fs.go) when it declared them.
func (s *Server) sessionOptions(id string) session.Options {
	s.mu.Lock()
	clientAfter := s.clientAfter
	s.mu.Unlock()
	opts := session.Options{Face: s, ID: id, Files: s.editorFiles(id), ModeChanged: s.modeChanged}
	if clientAfter {
		opts.After = s.afterToolCall
	}
	return opts
}

// loadParams are session/load's params.
type loadParams struct {
	SessionID  string          `json:"sessionId"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

func (s *Server) sessionLoad(p *loadParams) (work, error) {
	return func(context.Context) (any, error) {
		opts := s.sessionOptions(p.SessionID)
		opts.MCPServers = p.MCPServers
		defer leangc.Lower()()
		ss, items, err := s.host.Load(p.SessionID, opts)
		if err != nil {
			return nil, err
		}
		res, err := loaded(ss, items)
		if err != nil {
			return nil, err
		}
		return rpcconn.Then(res, s.planAfter(ss)), nil // the plan follows the answer (plan.go)
	}, nil
}

func loaded(ss *session.Session, items []session.Item) (*loadedResult, error) {
	first, page, err := pageOf(items, len(items))
	if err != nil {
		return nil, err
	}
	return &loadedResult{SessionID: ss.ID(), Tools: ss.Tools(), Modes: ss.Modes(), Messages: page, FirstIndex: first, Unsaved: ss.Unsaved(),
		Instructions: ss.Instructions()}, nil
}

// pageOf encodes the items before end, from the last back, as many as fit in
// loadPageBytes (at least one), and returns the index of the first it took with them in
// order.
func pageOf(items []session.Item, end int) (first int, page []json.RawMessage, err error) {
	size := 0
	first = end
	for first > 0 {
		b, err := items[first-1].MarshalJSON()
		if err != nil {
			return 0, nil, err
		}
		if first < end && size+len(b)+1 > loadPageBytes {
			break
		}
		size += len(b) + 1
		page = append(page, b)
		first--
	}
	slices.Reverse(page)
	if page == nil {
		page = []json.RawMessage{}
	}
	return first, page, nil
}

// sessionMessages is session/messages: the items of a live session before index before, a
// page at a time (see loadPageBytes), for an editor whose session/load (or fork) answered
// with firstIndex.
func (s *Server) sessionMessages(p *messagesParams) (work, error) {
	if p.Before == nil {
		return nil, invalidParams("before is required (the firstIndex of the page you have)")
	}
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		defer leangc.Lower()()
		items := ss.Items()
		if *p.Before < 0 || *p.Before > len(items) {
			return nil, invalidParams("before %d is out of range: the session has %d messages (compactions included)", *p.Before, len(items))
		}
		first, page, err := pageOf(items, *p.Before)
		if err != nil {
			return nil, err
		}
		return &messagesPage{Messages: page, FirstIndex: first}, nil
	}, nil
}

// messagesParams are session/messages' params.
type messagesParams struct {
	SessionID string `json:"sessionId"`
	Before    *int   `json:"before"`
}

// messagesPage is session/messages' result.
type messagesPage struct {
	Messages   []json.RawMessage `json:"messages"`
	FirstIndex int               `json:"firstIndex"`
}

// forkParams are session/fork's params.
type forkParams struct {
	SessionID    string          `json:"sessionId"`
	MessageCount *int            `json:"messageCount"`
	MCPServers   json.RawMessage `json:"mcpServers"`
}

func (s *Server) sessionFork(p *forkParams) (work, error) {
	if p.MessageCount == nil {
		return nil, invalidParams("messageCount is required")
	}
	return func(context.Context) (any, error) {
		opts := s.sessionOptions(session.NewID())
		opts.MCPServers = p.MCPServers
		ss, items, err := s.host.Fork(p.SessionID, *p.MessageCount, opts)
		if err != nil {
			return nil, err
		}
		res, err := loaded(ss, items)
		if err != nil {
			return nil, err
		}
		return rpcconn.Then(res, s.planAfter(ss)), nil // the plan follows the answer (plan.go)
	}, nil
}

func (s *Server) sessionClose(p *sessionParams) (any, error) {
	return nil, s.host.CloseSession(p.SessionID)
}

func (s *Server) sessionDelete(p *sessionParams) (any, error) {
	return nil, s.host.DeleteSession(p.SessionID)
}

// compactParams are session/compact's params.
type compactParams struct {
	SessionID    string `json:"sessionId"`
	Instructions string `json:"instructions"`
}

func (s *Server) sessionCompact(p *compactParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		res, err := ss.Compact(ctx, p.Instructions)
		if err != nil {
			return nil, err
		}
		return &res, nil
	}, nil
}

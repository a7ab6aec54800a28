// This file is the face the session layer talks to (session.Face): the loop's events become
// session/update notifications, approval questions become session/request_permission
// requests. It also holds the state of a session's running turn, which is what guarantees
// that every update of a turn is written before the prompt's response and none after it.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// sessionState is what the face keeps for one session.
type sessionState struct {
	srv *server
	ss  *session.Session
	// mcpOwn is the session's own mcpServers as the session layer has them (settings
	// shape; nil or {}: none): what session/new gave, or the load that made it live.
	mcpOwn json.RawMessage

	// active is the running turn, for session/cancel on the read loop (which must not wait
	// for mu while an update is being written).
	active atomic.Pointer[turn]

	// mu serializes the session's writes (updates, replays, and the prompt's response) and
	// guards the fields below it.
	mu  sync.Mutex
	cur *turn // the running turn, nil between prompts
	// closing is set by session/close and session/delete: no prompt starts any more.
	closing bool
	// liveCompactions counts the compactions shown live, for their ids.
	liveCompactions int
}

// turn is one session/prompt in progress.
type turn struct {
	// cmu guards cancel and wasCancelled.
	cmu          sync.Mutex
	cancel       context.CancelFunc
	wasCancelled bool

	// The fields below are guarded by the session's mu.
	calls map[string]*callState // tool calls started in this turn
	order []string              // their ids, in start order
}

// callState is one tool call of a turn.
type callState struct {
	name   string
	args   json.RawMessage
	status string // the last status sent: pending, in_progress, completed or failed
	// terminal is the client's terminal the call runs in (bash through terminal/create),
	// shown in its content from the progress that named it.
	terminal string
}

// errClosing is open's error for a session being closed or deleted.
var errClosing = errors.New("the session is being closed")

// open claims the session for a prompt (Session.Begin) and opens its turn. It fails with
// errClosing once close has begun (so a prompt either starts before closing is set, and is
// cancelled by the close, or not at all), and with Begin's error (loop.ErrBusy) while a
// prompt runs. Contract: called on the read loop.
func (st *sessionState) open() (*turn, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closing {
		return nil, errClosing
	}
	if err := st.ss.Begin(); err != nil {
		return nil, err
	}
	t := &turn{calls: map[string]*callState{}}
	st.cur = t
	st.active.Store(t)
	return t, nil
}

// setCancel gives the turn its cancel function; a cancel that came first applies at once.
func (t *turn) setCancel(cancel context.CancelFunc) {
	t.cmu.Lock()
	t.cancel = cancel
	was := t.wasCancelled
	t.cmu.Unlock()
	if was {
		cancel()
	}
}

func (t *turn) cancelled() bool {
	t.cmu.Lock()
	defer t.cmu.Unlock()
	return t.wasCancelled
}

// cancelTurn aborts the running turn, if any (session/cancel).
func (st *sessionState) cancelTurn() {
	t := st.active.Load()
	if t == nil {
		return
	}
	t.cmu.Lock()
	t.wasCancelled = true
	cancel := t.cancel
	t.cmu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// finish closes the turn: every tool call that never got its final update gets one
// (failed), the session is released, and respond writes the prompt's response, all under
// mu, so that no update of this turn can follow the response.
func (st *sessionState) finish(t *turn, respond func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range t.order {
		c := t.calls[id]
		if c.status != "completed" && c.status != "failed" {
			st.srv.log.Warn("a tool call had no end; it is reported as failed", "session", st.ss.ID(), "toolCallId", id)
			c.status = "failed"
			st.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "failed"})
		}
	}
	st.cur = nil
	st.active.Store(nil)
	st.ss.End()
	respond()
}

// liveCompactionID is the id of the compaction being shown live: distinct from a replay's
// ids ("compaction-N"), which number the saved compactions. Contract: mu is held.
func (st *sessionState) liveCompactionID() string {
	return fmt.Sprintf("compaction-live-%d", st.liveCompactions)
}

// update writes one session/update. Contract: mu is held, and a turn is open, the
// session's conversation is being replayed (session/load), or the session's mode changed
// (modeChanged).
func (st *sessionState) update(u any) {
	st.srv.conn.notify("session/update", sessionNotification{SessionID: st.ss.ID(), Update: u})
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// state returns the face's state of a session.
func (s *server) state(ss *session.Session) *sessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[ss.ID()]
}

// Emit implements session.Face: text and thinking deltas become message and thought
// chunks, and each tool call's start, execution start, progress and end become tool_call
// and tool_call_update (pending, in_progress, progress content, completed or failed); a
// compaction becomes compaction_update (in_progress, then completed or failed) when the
// client declared session.compaction. It
// never encodes the partial message of a MessageUpdate, so streaming costs O(delta). Events outside a turn are dropped (there are none: ACP runs the loop
// only in session/prompt).
func (s *server) Emit(ss *session.Session, ev event.Event) {
	if w, ok := ev.(event.Warning); ok {
		if w.Stack != "" {
			s.log.Warn(w.Message, "session", ss.ID(), "stack", w.Stack)
		}
		s.Warn(ss, w.Message)
		return
	}
	st := s.state(ss)
	if st == nil {
		return
	}
	s.mu.Lock()
	compaction := s.caps.Compaction
	s.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	t := st.cur
	if t == nil {
		s.log.Debug("dropped an event outside a turn", "session", ss.ID(), "event", fmt.Sprintf("%T", ev))
		return
	}
	switch e := ev.(type) {
	case event.CompactionStart:
		if compaction {
			st.liveCompactions++
			st.update(compactionUpdate{SessionUpdate: "compaction_update", CompactionID: st.liveCompactionID(), Status: "in_progress"})
		}
	case event.CompactionEnd:
		if compaction && st.liveCompactions > 0 {
			u := compactionUpdate{SessionUpdate: "compaction_update", CompactionID: st.liveCompactionID(), Status: "completed"}
			if e.Err != "" {
				u.Status, u.Error = "failed", e.Err
			} else {
				u.Summary = []any{textBlock(e.Summary)}
				u.Meta = keptMeta(e.Kept)
			}
			st.update(u)
		}
	case event.PlanUpdate:
		st.update(planOf(e.Entries))
	case event.UsageUpdate:
		st.update(usageOf(e))
	case event.MessageUpdate:
		switch e.Delta.Kind {
		case llm.StreamTextDelta:
			if e.Delta.Delta != "" {
				st.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Delta.Delta)})
			}
		case llm.StreamThinkingDelta:
			if e.Delta.Delta != "" {
				st.update(contentChunk{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Delta.Delta)})
			}
		}
	case event.ToolStart:
		if _, seen := t.calls[e.ToolCallID]; !seen {
			t.order = append(t.order, e.ToolCallID)
		}
		t.calls[e.ToolCallID] = &callState{name: e.ToolName, args: e.Args, status: "pending"}
		st.update(s.toolCall(ss, e.ToolCallID, e.ToolName, e.Args))
	case event.ToolExecutionStart:
		if c := t.calls[e.ToolCallID]; c != nil && c.status == "pending" {
			c.status = "in_progress"
			st.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: e.ToolCallID, Status: "in_progress"})
		}
	case event.ToolUpdate:
		c := t.calls[e.ToolCallID]
		if c == nil {
			return
		}
		// Progress carries content only: the call went in_progress at its
		// ToolExecutionStart, and each status is sent once.
		u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: e.ToolCallID, Content: resultContent(e.Partial.Content)}
		if c.terminal == "" {
			c.terminal = ss.ToolView(c.name, c.args, e.Partial.Details).Terminal
		}
		if c.terminal != "" {
			// The client shows the terminal live; progress text would only repeat it.
			u.Content = []any{terminalContent{Type: "terminal", TerminalID: c.terminal}}
		}
		if c.status == "pending" {
			c.status, u.Status = "in_progress", "in_progress"
		}
		st.update(u)
	case event.ToolEnd:
		c := t.calls[e.ToolCallID]
		if c == nil {
			c = &callState{name: e.ToolName}
			t.calls[e.ToolCallID] = c
			t.order = append(t.order, e.ToolCallID)
		}
		u := s.finalUpdate(ss, e, c)
		c.status = u.Status
		st.update(u)
	}
}

// Ask implements session.Face: session/request_permission with the four kinds of option.
// No timeout: a person may take their time; ctx (the turn) ends the wait, and a response
// that comes later is dropped. An allowed call stays pending until it starts executing
// (its event.ToolExecutionStart), which in a parallel batch is after the whole prepare pass.
func (s *server) Ask(ctx context.Context, ss *session.Session, q session.Approval) (session.Answer, error) {
	call := q.Call
	tc := s.toolCall(ss, call.ID, call.Name, call.Arguments)
	title := tc.Title
	if e := q.Escalation; e != nil {
		// bash asking to leave the sandbox: the person reads why.
		title = fmt.Sprintf("%s OUTSIDE THE SANDBOX (full rights, network on): %s", tc.Title, e.Justification)
	}
	sid := ss.ID()
	if p := ss.ParentID(); p != "" {
		// A subagent's call: the client knows its parent's session only.
		sid = p
	}
	params := permissionParams{
		SessionID: sid,
		ToolCall: toolCallUpdate{
			ToolCallID: call.ID, Title: title, Name: tc.Name, Kind: tc.Kind, Status: "pending",
			RawInput: tc.RawInput, Locations: tc.Locations,
		},
		Options: permissionOptions(q.Always),
	}
	plan := q.Plan != nil
	if plan {
		// The plan is put to the person: its markdown, and a choice of the mode to go on in.
		params.ToolCall.Title = "Approve the plan and leave plan mode"
		params.ToolCall.Content = []any{toolContent{Type: "content", Content: textBlock(q.Plan.Text)}}
		params.Options = planOptions(ss)
	}
	var res permissionResponse
	if err := s.conn.call(ctx, "session/request_permission", params, &res); err != nil {
		return session.Answer{}, askError{err}
	}
	var a session.Answer
	switch res.Outcome.Outcome {
	case "cancelled":
		// The person closed the question without allowing: a denial, which the session
		// frames for the model ("The user denied this call of NAME.").
		a = session.Answer{Decision: "deny"}
	case "selected":
		if mode, ok := strings.CutPrefix(res.Outcome.OptionID, optPlanPrefix); ok && plan {
			a = session.Answer{Decision: "allow", Mode: mode}
			break
		}
		switch res.Outcome.OptionID {
		case optAllowOnce:
			a.Decision = "allow"
		case optAllowAlways:
			a.Decision = "allowAlways"
		case optRejectOnce:
			a.Decision = "deny"
		case optRejectAlways:
			a.Decision = "denyAlways"
		default:
			return session.Answer{}, badAnswer(fmt.Sprintf("the editor chose an unknown permission option %q.", res.Outcome.OptionID))
		}
	default:
		return session.Answer{}, badAnswer(fmt.Sprintf("the editor answered the permission request with an unknown outcome %q.", res.Outcome.Outcome))
	}
	return a, nil
}

// badAnswer is a permission request answered with something that is no answer of the
// person's; the sentence is what the model reads ("Tool NAME was not run: ...").
type badAnswer string

func (e badAnswer) Error() string  { return string(e) }
func (e badAnswer) Reason() string { return string(e) }

// askError is a permission request that got no answer; Reason is what the model reads.
type askError struct{ err error }

func (e askError) Error() string { return e.err.Error() }
func (e askError) Unwrap() error { return e.err }

func (e askError) Reason() string {
	if re, ok := e.err.(*rpcError); ok {
		return fmt.Sprintf("the editor answered the permission request with an error (%d: %s).", re.Code, re.Message)
	}
	return fmt.Sprintf("the editor did not answer the permission request (%v).", e.err)
}

// Warn implements session.Face: the daemon's log, and a notice to the client when it
// declared session.notices and a turn of the session is running.
func (s *server) Warn(ss *session.Session, msg string) {
	s.log.Warn(msg, "session", ss.ID())
	if st := s.state(ss); st != nil {
		s.tell(st, "warning", msg)
	}
}

// Permission options: their ids are their kinds.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

// permissionOptions are the choices of a permission request: the "always" ones only when
// such an answer can be scoped, named with what they cover.
func permissionOptions(always *session.Always) []permissionOption {
	if always == nil {
		return []permissionOption{
			{OptionID: optAllowOnce, Name: "Allow", Kind: optAllowOnce},
			{OptionID: optRejectOnce, Name: "Reject", Kind: optRejectOnce},
		}
	}
	return []permissionOption{
		{OptionID: optAllowOnce, Name: "Allow", Kind: optAllowOnce},
		{OptionID: optAllowAlways, Name: "Always allow " + always.Description, Kind: optAllowAlways},
		{OptionID: optRejectOnce, Name: "Reject", Kind: optRejectOnce},
		{OptionID: optRejectAlways, Name: "Always reject " + always.Description, Kind: optRejectAlways},
	}
}

// optPlanPrefix starts the ids of exit_plan_mode's approving options; the mode to go on in
// follows it.
const optPlanPrefix = "plan:"

// planOptions are the choices of exit_plan_mode's permission request: approve and go on in
// default mode, or in acceptEdits or auto when the session is offered them, or keep planning.
func planOptions(ss *session.Session) []permissionOption {
	out := []permissionOption{{OptionID: optPlanPrefix + session.ModeDefault, Name: "Approve; ask before each change", Kind: optAllowOnce}}
	for _, m := range ss.Modes().AvailableModes {
		switch m.ID {
		case session.ModeAcceptEdits:
			out = append(out, permissionOption{OptionID: optPlanPrefix + m.ID, Name: "Approve and accept edits", Kind: optAllowAlways})
		case session.ModeAuto:
			out = append(out, permissionOption{OptionID: optPlanPrefix + m.ID, Name: "Approve and run sandboxed (auto)", Kind: optAllowAlways})
		}
	}
	return append(out, permissionOption{OptionID: optRejectOnce, Name: "Keep planning", Kind: optRejectOnce})
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  toolCallUpdate     `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionResponse struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

type notice struct {
	SessionUpdate string `json:"sessionUpdate"`
	Severity      string `json:"severity"`
	Title         string `json:"title"`
}

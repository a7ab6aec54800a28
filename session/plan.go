// This file holds the session's plan: the checklist the model keeps with the built-in tool
// todo_write (package todo) and the person sees (planUpdate, ACP's plan), and what a
// compaction keeps word for word after its summary (compact.KeptSummary: the latest request,
// the plan, the files touched). The plan is the transcript's (todo.Of): it follows it
// wherever it goes. A todo_write run by tools/execute, whose batch is not part of the
// transcript, changes nothing.

package session

import (
	"sync"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/todo"
	"github.com/pid-agent/pid/toolexec"
)

// TodoWriteName is the built-in tool with which the model replaces the session's plan.
const TodoWriteName = todo.Name

// planState is what the session keeps of todo_write calls between their execution and their
// end: the entries each call wrote, by call id, until the sink sees the call's ToolEnd
// (and sends planUpdate when the call ended without error). Touched by the calls'
// goroutines and the sink; sync.Map synchronizes itself.
type planState struct {
	pending sync.Map // call id -> []event.PlanEntry
}

// todoWriteTool is todo_write, whose calls keep their entries in the session until their
// end (afterEvent). s may be nil for a description only (BuiltinTools).
func todoWriteTool(s *Session) toolexec.Tool {
	if s == nil {
		return todo.Tool(nil)
	}
	return todo.Tool(func(id string, entries []event.PlanEntry) { s.plan.pending.Store(id, entries) })
}

// Plan returns the session's plan: the entries of the last todo_write call of its
// transcript; ok is false when the session has none (no such call, or the session's
// todo_write is a scripted tool of its own).
func (s *Session) Plan() ([]event.PlanEntry, bool) {
	if !s.builtin[TodoWriteName] {
		return nil, false
	}
	return todo.Of(s.agent.Transcript())
}

// afterEvent follows the face's events of a run with the session's own: planUpdate after
// the end of a todo_write call that changed the plan, usageUpdate after each assistant
// message. save is the sink's (a prompt's run; a tools/execute batch is not transcript).
//
// Contract: called by the run's sink, after the face got ev (serialized as the sink is).
func (s *Session) afterEvent(ev event.Event, save bool) {
	switch e := ev.(type) {
	case event.ToolEnd:
		if save || s.sub.child != nil {
			s.changesAfterTool()
		}
		if e.ToolName != TodoWriteName || !s.builtin[TodoWriteName] {
			return
		}
		v, ok := s.plan.pending.LoadAndDelete(e.ToolCallID)
		if !ok || e.IsError || !save {
			return
		}
		s.face.Emit(s, event.PlanUpdate{Entries: v.([]event.PlanEntry)})
	case event.MessageEnd:
		if save && e.Message != nil && e.Message.Role == llm.RoleAssistant {
			s.emitUsage(e.Message)
		}
	}
}

// summaryFor returns the message the model sees in place of the messages a compaction
// summarized, and what it kept (compact.KeptSummary), with the plan when the session's
// todo_write is the built-in one.
func (s *Session) summaryFor(rec history.Compaction, transcript []llm.Message) (llm.Message, event.CompactionKept) {
	var plan func([]llm.Message) ([]event.PlanEntry, bool)
	if s.builtin[TodoWriteName] {
		plan = todo.Of
	}
	return compact.KeptSummary(rec.Summary, transcript, rec.At, rec.FirstKept, plan)
}

// summaryMessage returns the message the model sees for the transcript's last compaction
// (summaryFor), made once per compaction.
//
// Contract: called by the run holding the session (compactingState).
func (s *Session) summaryMessage(rec history.Compaction, n int, transcript []llm.Message) llm.Message {
	c := &s.compacting.summary
	if c.n != n || c.at != rec.At || c.firstKept != rec.FirstKept || c.text != rec.Summary || c.msg.Content == nil {
		c.msg, _ = s.summaryFor(rec, transcript)
		// The notes the summary replaces told the model a mode: it is told again.
		if told := s.toldBefore(rec.FirstKept); told != s.startTold() {
			c.msg = prompt.WithNote(c.msg, told)
		}
		c.n, c.at, c.firstKept, c.text = n, rec.At, rec.FirstKept, rec.Summary
		c.tokens = compact.EstimateTokens(&c.msg)
	}
	return c.msg
}

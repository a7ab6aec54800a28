// This file holds the session's plan: the checklist the model keeps with the built-in tool
// todo_write and the person sees (planUpdate, ACP's plan), and what a compaction keeps word
// for word after its summary (the latest request, the plan, the files touched).
//
// The plan is not stored apart: it is the arguments of the last todo_write call of the
// transcript that got a result without error. So it follows the transcript wherever it goes:
// it is saved with it, survives a compaction (the transcript keeps every message), is the
// same after session/load, and a fork or a rewind of the conversation has the plan of the
// point it goes back to. A todo_write run by tools/execute, whose batch is not part of the
// transcript, changes nothing.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
)

// TodoWriteName is the built-in tool with which the model replaces the session's plan.
const TodoWriteName = "todo_write"

// planResource is the resource every todo_write call declares, so that the calls of one
// batch run, and end, in source order: the last one written is the plan.
const planResource = "pid:plan"

// planState is what the session keeps of todo_write calls between their execution and their
// end: the entries each call wrote, by call id, until the sink sees the call's ToolEnd
// (and sends planUpdate when the call ended without error). Touched by the calls'
// goroutines and the sink; sync.Map synchronizes itself.
type planState struct {
	pending sync.Map // call id -> []event.PlanEntry
}

const todoDescription = "Keep the plan of your work as a checklist the user sees. Call it with the whole list each time it changes: it replaces the plan. " +
	"Use it for a task of three steps or more: write the steps when you start, mark one in_progress when you begin it (one at a time) and completed as soon as it is done, and add the steps you discover. " +
	"Skip it for a simple request. It changes nothing outside the session."

const todoSchema = `{"type":"object","properties":{"todos":{"type":"array","description":"The whole plan, in order; it replaces the previous one. An empty list clears it.",` +
	`"items":{"type":"object","properties":{"content":{"type":"string","minLength":1,"description":"The step, in a short sentence."},` +
	`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
	`"priority":{"type":"string","enum":["high","medium","low"],"description":"Default medium."}},` +
	`"required":["content","status"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`

// todoWriteTool is todo_write. s may be nil for a description only (BuiltinTools).
func todoWriteTool(s *Session) toolexec.Tool {
	return toolexec.Tool{
		Name:        TodoWriteName,
		Description: todoDescription,
		Parameters:  json.RawMessage(todoSchema),
		Resources:   func(toolexec.Call) []string { return []string{planResource} },
		View: func(json.RawMessage, any) toolexec.View {
			return toolexec.View{Kind: toolexec.KindThink, Title: "Update the plan"}
		},
		Execute: func(_ context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			entries, ok := parsePlan(call.Args)
			if !ok {
				return toolexec.Result{}, fmt.Errorf("todo_write: the arguments hold no plan")
			}
			if s != nil {
				s.plan.pending.Store(call.ID, entries)
			}
			return toolexec.Result{Content: []llm.Content{llm.Text(planSaved(entries))}}, nil
		},
	}
}

// planSaved is todo_write's result: the plan was saved, and what it holds now.
func planSaved(entries []event.PlanEntry) string {
	if len(entries) == 0 {
		return "The plan was saved: it is empty now (cleared). The user sees it."
	}
	n := map[string]int{}
	for _, e := range entries {
		n[e.Status]++
	}
	return fmt.Sprintf("The plan was saved: %d steps (%d completed, %d in progress, %d pending). The user sees it as a checklist; call todo_write again whenever a step starts or ends.",
		len(entries), n["completed"], n["in_progress"], n["pending"])
}

// parsePlan reads todo_write's arguments: the entries, with "medium" where no priority is
// given. ok is false when they are not todo_write's arguments.
func parsePlan(args json.RawMessage) ([]event.PlanEntry, bool) {
	var a struct {
		Todos *[]event.PlanEntry `json:"todos"`
	}
	if json.Unmarshal(args, &a) != nil || a.Todos == nil {
		return nil, false
	}
	out := make([]event.PlanEntry, 0, len(*a.Todos))
	for _, e := range *a.Todos {
		switch e.Status {
		case "pending", "in_progress", "completed":
		default:
			return nil, false
		}
		switch e.Priority {
		case "":
			e.Priority = "medium"
		case "high", "medium", "low":
		default:
			return nil, false
		}
		out = append(out, e)
	}
	return out, true
}

// planOf returns the plan of a transcript: the entries of its last todo_write call that got
// a result without error; ok is false when it has none.
func planOf(t []llm.Message) (entries []event.PlanEntry, ok bool) {
	for i := len(t) - 1; i >= 0; i-- {
		m := &t[i]
		if m.Role != llm.RoleToolResult || m.ToolName != TodoWriteName || m.IsError {
			continue
		}
		// Its call is in the nearest assistant message before it.
		for j := i - 1; j >= 0; j-- {
			if t[j].Role != llm.RoleAssistant {
				continue
			}
			for _, c := range t[j].Content {
				if c.Type == llm.ContentToolCall && c.ID == m.ToolCallID {
					if entries, ok := parsePlan(c.Arguments); ok {
						return entries, true
					}
				}
			}
			break
		}
	}
	return nil, false
}

// Plan returns the session's plan: the entries of the last todo_write call of its
// transcript; ok is false when the session has none (no such call, or the session's
// todo_write is a scripted tool of its own).
func (s *Session) Plan() ([]event.PlanEntry, bool) {
	if !s.builtin[TodoWriteName] {
		return nil, false
	}
	return planOf(s.agent.Transcript())
}

// afterEvent follows the face's events of a run with the session's own: planUpdate after
// the end of a todo_write call that changed the plan, usageUpdate after each assistant
// message. save is the sink's (a prompt's run; a tools/execute batch is not transcript).
//
// Contract: called by the run's sink, after the face got ev (serialized as the sink is).
func (s *Session) afterEvent(ev event.Event, save bool) {
	switch e := ev.(type) {
	case event.ToolEnd:
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
// summarized, and what it kept: the summary, then, word for word, the latest user message
// when the compaction took it away (when it is among the messages kept after the cut, the
// model sees it there), the plan as it was when the compaction was made, and the paths of
// the files read and changed in the messages compacted away. With none of the three it is
// the summary alone. It depends on the transcript and the record only, so a loaded session
// sees the same bytes as the session did.
func (s *Session) summaryFor(rec compactionRecord, transcript []llm.Message) (llm.Message, event.CompactionKept) {
	msg := compact.SummaryMessage(rec.summary)
	kept := event.CompactionKept{Files: []string{}}
	upTo := min(rec.at, len(transcript))
	cut := min(rec.firstKept, upTo)
	var request *llm.Message
	for i := upTo - 1; i >= 0; i-- {
		if transcript[i].Role == llm.RoleUser {
			if i < cut {
				request = &transcript[i]
			}
			break
		}
	}
	var plan []event.PlanEntry
	hasPlan := false
	if s.builtin[TodoWriteName] {
		plan, hasPlan = planOf(transcript[:upTo])
	}
	read, changed := compact.FilesTouched(transcript[:cut])
	if request == nil && !hasPlan && len(read)+len(changed) == 0 {
		return msg, kept
	}
	if request != nil {
		kept.UserMessage = true
		msg.Content = append(msg.Content, llm.Text("\nThe user's latest request, the one being worked on, word for word (the summary replaces it in the conversation):"))
		for _, c := range request.Content {
			if c.Type == llm.ContentText || c.Type == llm.ContentImage {
				msg.Content = append(msg.Content, c)
			}
		}
	}
	var b strings.Builder
	if hasPlan {
		kept.PlanEntries = len(plan)
		if len(plan) == 0 {
			b.WriteString("The current plan (todo_write) is empty.\n")
		} else {
			b.WriteString("The current plan (todo_write), as it stands; call todo_write to change it:\n")
			for _, e := range plan {
				fmt.Fprintf(&b, "- [%s] %s (priority %s)\n", e.Status, e.Content, e.Priority)
			}
		}
	}
	if len(read)+len(changed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Files used in the part of the conversation the summary replaces (read a file again before you rely on its content or edit it):\n")
		compact.WriteFileList(&b, "read", read)
		compact.WriteFileList(&b, "changed", changed)
		kept.Files = append(append(kept.Files, read...), changed...)
		slices.Sort(kept.Files)
		kept.Files = slices.Compact(kept.Files)
	}
	if b.Len() > 0 {
		// A block starts with a line break: a provider that joins a message's text blocks
		// joins them with one (OpenAI's chat completions), which makes a blank line.
		msg.Content = append(msg.Content, llm.Text("\n"+strings.TrimRight(b.String(), "\n")))
	}
	return msg, kept
}

// summaryText is the text of a summary message as a person reads it: its text blocks
// joined by line breaks (as a provider that takes one text joins them), an image as a
// note.
func summaryText(m llm.Message) string {
	var parts []string
	for _, c := range m.Content {
		switch c.Type {
		case llm.ContentText:
			parts = append(parts, c.Text)
		case llm.ContentImage:
			parts = append(parts, fmt.Sprintf("[image: %s]", c.MimeType))
		}
	}
	return strings.Join(parts, "\n")
}

// summaryMessage returns the message the model sees for the transcript's last compaction
// (summaryFor), made once per compaction.
//
// Contract: called by the run holding the session (compactingState).
func (s *Session) summaryMessage(rec compactionRecord, n int, transcript []llm.Message) llm.Message {
	c := &s.compacting.summary
	if c.n != n || c.at != rec.at || c.firstKept != rec.firstKept || c.text != rec.summary || c.msg.Content == nil {
		c.msg, _ = s.summaryFor(rec, transcript)
		// The notes the summary replaces told the model a mode: it is told again.
		if told := s.toldBefore(rec.firstKept); told != s.startTold() {
			c.msg = prompt.WithNote(c.msg, told)
		}
		c.n, c.at, c.firstKept, c.text = n, rec.at, rec.firstKept, rec.summary
		c.tokens = compact.EstimateTokens(&c.msg)
	}
	return c.msg
}

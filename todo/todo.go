// Package todo is the built-in tool todo_write: the model keeps the plan of its work with it,
// as a checklist the person sees. The plan is not stored apart: it is the arguments of the
// last todo_write call of a transcript that got a result without error (Of), so it follows
// the transcript wherever it goes (saved, compacted, loaded, forked, rewound).
//
// The entry point is Tool.
package todo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// Name is the tool's name.
const Name = "todo_write"

// resource is the resource every todo_write call declares, so that the calls of one batch
// run, and end, in source order: the last one written is the plan.
const resource = "pid:plan"

const todoDescription = "Keep the plan of your work as a checklist the user sees. Call it with the whole list each time it changes: it replaces the plan. " +
	"Use it for a task of three steps or more: write the steps when you start, mark one in_progress when you begin it (one at a time) and completed as soon as it is done, and add the steps you discover. " +
	"Skip it for a simple request. It changes nothing outside the session."

const todoSchema = `{"type":"object","properties":{"todos":{"type":"array","description":"The whole plan, in order; it replaces the previous one. An empty list clears it.",` +
	`"items":{"type":"object","properties":{"content":{"type":"string","minLength":1,"description":"The step, in a short sentence."},` +
	`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
	`"priority":{"type":"string","enum":["high","medium","low"],"description":"Default medium."}},` +
	`"required":["content","status"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`

// Tool returns todo_write. wrote, if not nil, is told the entries each call wrote, before
// its result (the session sends them to the face once the call has ended without error).
//
// Contract: wrote is called from the calls' goroutines, possibly concurrently for the
// calls of one batch (which run in source order).
func Tool(wrote func(callID string, entries []event.PlanEntry)) toolexec.Tool {
	return toolexec.Tool{
		Name:        Name,
		Description: todoDescription,
		Parameters:  json.RawMessage(todoSchema),
		Resources:   func(toolexec.Call) []string { return []string{resource} },
		View: func(json.RawMessage, any) toolexec.View {
			return toolexec.View{Kind: toolexec.KindThink, Title: "Update the plan"}
		},
		Execute: func(_ context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			entries, ok := Parse(call.Args)
			if !ok {
				return toolexec.Result{}, fmt.Errorf("todo_write: the arguments hold no plan")
			}
			if wrote != nil {
				wrote(call.ID, entries)
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

// Parse reads todo_write's arguments: the entries, with "medium" where no priority is
// given. ok is false when they are not todo_write's arguments.
func Parse(args json.RawMessage) ([]event.PlanEntry, bool) {
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

// Of returns the plan of a transcript: the entries of its last todo_write call that got
// a result without error; ok is false when it has none.
func Of(t []llm.Message) (entries []event.PlanEntry, ok bool) {
	for i := len(t) - 1; i >= 0; i-- {
		m := &t[i]
		if m.Role != llm.RoleToolResult || m.ToolName != Name || m.IsError {
			continue
		}
		// Its call is in the nearest assistant message before it.
		for j := i - 1; j >= 0; j-- {
			if t[j].Role != llm.RoleAssistant {
				continue
			}
			for _, c := range t[j].Content {
				if c.Type == llm.ContentToolCall && c.ID == m.ToolCallID {
					if entries, ok := Parse(c.Arguments); ok {
						return entries, true
					}
				}
			}
			break
		}
	}
	return nil, false
}

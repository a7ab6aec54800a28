package todo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// A plan's entries get "medium" where no priority is given; anything but a list of entries
// with a known status and priority is no plan.
func TestParse(t *testing.T) {
	got, ok := Parse(json.RawMessage(`{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"completed","priority":"high"}]}`))
	if !ok || len(got) != 2 || got[0].Priority != "medium" || got[1].Priority != "high" {
		t.Errorf("%+v %v", got, ok)
	}
	for _, bad := range []string{`{}`, `{"todos":[{"content":"a","status":"done"}]}`, `{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`, `x`} {
		if _, ok := Parse(json.RawMessage(bad)); ok {
			t.Errorf("%s is a plan", bad)
		}
	}
	if got, ok := Parse(json.RawMessage(`{"todos":[]}`)); !ok || len(got) != 0 {
		t.Error("an empty list is a plan (cleared)")
	}
}

// The plan of a transcript is its last todo_write call that got a result without error.
func TestOf(t *testing.T) {
	call := func(id, content string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall(id, Name, json.RawMessage(`{"todos":[{"content":"`+content+`","status":"pending"}]}`))}}
	}
	res := func(id string, isError bool) llm.Message {
		return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: Name, IsError: isError}
	}
	tr := []llm.Message{call("a", "first"), res("a", false), call("b", "second"), res("b", true)}
	if got, ok := Of(tr); !ok || got[0].Content != "first" {
		t.Errorf("plan %+v %v, want the one that succeeded", got, ok)
	}
	if _, ok := Of(tr[:0]); ok {
		t.Error("an empty transcript has a plan")
	}
}

// The tool tells the entries a call wrote, answers what the plan holds now, and is shown as
// thinking.
func TestTool(t *testing.T) {
	var wrote []event.PlanEntry
	tool := Tool(func(id string, e []event.PlanEntry) { wrote = e })
	r, err := tool.Execute(context.Background(), toolexec.Call{ID: "c", Name: Name, Args: json.RawMessage(`{"todos":[{"content":"a","status":"in_progress"}]}`)}, nil)
	if err != nil || len(wrote) != 1 || !strings.Contains(r.Content[0].Text, "1 steps (0 completed, 1 in progress, 0 pending)") {
		t.Errorf("%+v %v, wrote %+v", r, err, wrote)
	}
	if v := tool.ViewOf(nil, nil); v.Kind != toolexec.KindThink || v.Title != "Update the plan" {
		t.Errorf("view %+v", v)
	}
	if _, err := toolexec.NewToolbox(tool); err != nil {
		t.Errorf("the schema does not compile: %v", err)
	}
}

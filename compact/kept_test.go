package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// A summary keeps, word for word, the latest request when the cut took it away, the plan,
// and the files the compacted messages read and changed; the latest request kept after the
// cut is not repeated.
func TestKeptSummary(t *testing.T) {
	read := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("r", "read", json.RawMessage(`{"path":"a.go"}`))}}
	tr := []llm.Message{llm.NewUser("fix a.go"), read, {Role: llm.RoleToolResult, ToolCallID: "r", ToolName: "read"}, {Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("done")}}}
	plan := func([]llm.Message) ([]event.PlanEntry, bool) {
		return []event.PlanEntry{{Content: "fix it", Status: "in_progress", Priority: "medium"}}, true
	}
	msg, kept := KeptSummary("The summary.", tr, len(tr), 3, plan)
	text := Readable(msg)
	if !kept.UserMessage || kept.PlanEntries != 1 || strings.Join(kept.Files, ",") != "a.go" {
		t.Errorf("kept %+v", kept)
	}
	for _, want := range []string{"The summary.", "fix a.go", "- [in_progress] fix it (priority medium)", "read:\n- a.go"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
	_, kept = KeptSummary("S", tr, len(tr), 0, nil)
	if kept.UserMessage || kept.PlanEntries != 0 || len(kept.Files) != 0 {
		t.Errorf("nothing cut: %+v", kept)
	}
}

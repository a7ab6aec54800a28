package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

func call(id string) llm.Content { return llm.NewToolCall(id, "read", json.RawMessage(`{}`)) }

func result(id string) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "read", Content: []llm.Content{llm.Text("r " + id)}}
}

func assistant(stop llm.StopReason, cs ...llm.Content) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, StopReason: stop, Content: cs}
}

// shape is a message reduced to what History decides: role, and the text, call ids or
// result id.
func shape(ms []llm.Message) []string {
	var out []string
	for _, m := range ms {
		s := string(m.Role) + ":"
		switch m.Role {
		case llm.RoleToolResult:
			s += m.ToolCallID
		default:
			for _, c := range m.Content {
				switch c.Type {
				case llm.ContentToolCall:
					s += " call " + c.ID
				case llm.ContentText:
					s += " " + c.Text
				}
			}
		}
		out = append(out, s)
	}
	return out
}

func TestHistory(t *testing.T) {
	msgs := []llm.Message{
		llm.NewUser("u1"),
		assistant(llm.StopToolUse, llm.Text("t1"), call("a"), call("b")),
		result("a"),
		result("b"),
		result("b"), // a second result for b: dropped
		assistant(llm.StopAborted, llm.Text("cut"), call("c")),
		result("c"), // answers an aborted message: dropped
		assistant(llm.StopError, llm.Text("failed")),
		llm.NewUser("u2"),
		assistant(llm.StopToolUse, llm.Text("t2"), call("d"), call("e")), // e has no result
		result("d"),
		result("zz"),                          // answers nothing: dropped
		assistant(llm.StopToolUse, call("f")), // no result at all: the message goes
		llm.NewUser("u3"),
		assistant(llm.StopEnd, llm.Text("done")),
	}
	orig := append([]llm.Content(nil), msgs[9].Content...)
	got := shape(wire.History(msgs))
	want := []string{
		"user: u1",
		"assistant: t1 call a call b",
		"toolResult:a",
		"toolResult:b",
		"user: u2",
		"assistant: t2 call d",
		"toolResult:d",
		"user: u3",
		"assistant: done",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("History (-want +got):\n%s", d)
	}
	if d := cmp.Diff(orig, msgs[9].Content); d != "" {
		t.Errorf("History modified its input:\n%s", d)
	}
}

// A result that comes after a later assistant message does not count for an earlier call.
func TestHistoryResultMustFollowItsCall(t *testing.T) {
	msgs := []llm.Message{
		llm.NewUser("u"),
		assistant(llm.StopToolUse, llm.Text("x"), call("a")),
		assistant(llm.StopEnd, llm.Text("y")),
		result("a"),
	}
	want := []string{"user: u", "assistant: x", "assistant: y"}
	if d := cmp.Diff(want, shape(wire.History(msgs))); d != "" {
		t.Errorf("History (-want +got):\n%s", d)
	}
}

package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every message shape, with every content type it may hold, written to the exact JSON of
// the protocol and read back to the same value.
func TestMessageJSONRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		msg  llm.Message
		json string
	}{
		{
			name: "user text and image",
			msg: llm.Message{Role: llm.RoleUser, Timestamp: 1700000000000, Content: []llm.Content{
				llm.Text("what is this?"),
				{Type: llm.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
			}},
			json: `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1700000000000}`,
		},
		{
			name: "assistant thinking, text and tool call",
			msg: llm.Message{Role: llm.RoleAssistant, Timestamp: 2, StopReason: llm.StopToolUse,
				Usage: &llm.Usage{Input: 10, Output: 5, CacheRead: 3, Total: 18},
				Content: []llm.Content{
					llm.Thinking("let me read it"),
					llm.Text("Reading."),
					llm.NewToolCall("call_1", "read", json.RawMessage(`{"path":"a.go"}`)),
				}},
			json: `{"role":"assistant","content":[{"type":"thinking","thinking":"let me read it"},{"type":"text","text":"Reading."},` +
				`{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.go"}}],"stopReason":"toolUse",` +
				`"usage":{"input":10,"output":5,"cacheRead":3,"totalTokens":18},"timestamp":2}`,
		},
		{
			name: "assistant error",
			msg:  llm.Message{Role: llm.RoleAssistant, Timestamp: 3, StopReason: llm.StopError, ErrorMessage: "rate limited", Content: []llm.Content{}},
			json: `{"role":"assistant","content":[],"stopReason":"error","errorMessage":"rate limited","timestamp":3}`,
		},
		{
			name: "tool result, isError false still written, no addedToolNames",
			msg: llm.Message{Role: llm.RoleToolResult, Timestamp: 4, ToolCallID: "call_1", ToolName: "read",
				Content: []llm.Content{llm.Text("package a")}, Details: map[string]any{"lines": 1.0}},
			json: `{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"package a"}],"details":{"lines":1},"isError":false,"timestamp":4}`,
		},
		{
			name: "tool result with error, image and addedToolNames",
			msg: llm.Message{Role: llm.RoleToolResult, Timestamp: 5, ToolCallID: "call_2", ToolName: "load", IsError: true,
				Content:        []llm.Content{llm.Text("partly failed"), {Type: llm.ContentImage, Data: "AAAA", MimeType: "image/jpeg"}},
				AddedToolNames: []string{"edit", "write"}},
			json: `{"role":"toolResult","toolCallId":"call_2","toolName":"load","content":[{"type":"text","text":"partly failed"},{"type":"image","data":"AAAA","mimeType":"image/jpeg"}],"isError":true,"addedToolNames":["edit","write"],"timestamp":5}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.json, string(b)); d != "" {
				t.Errorf("JSON (-want +got):\n%s", d)
			}
			var back llm.Message
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.msg, back); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

// Marshalling fills in what the protocol always has: content is an array even when nil, a
// tool call without arguments has {}, and an empty addedToolNames is omitted.
func TestMessageJSONDefaults(t *testing.T) {
	cases := []struct {
		msg  llm.Message
		want string
	}{
		{llm.Message{Role: llm.RoleUser}, `{"role":"user","content":[],"timestamp":0}`},
		{llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{llm.NewToolCall("c", "ls", nil)}},
			`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{}}],"stopReason":"toolUse","timestamp":0}`},
		{llm.Message{Role: llm.RoleToolResult, ToolCallID: "c", ToolName: "ls", AddedToolNames: []string{}},
			`{"role":"toolResult","toolCallId":"c","toolName":"ls","content":[],"isError":false,"timestamp":0}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.msg)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, string(b)); d != "" {
			t.Errorf("JSON (-want +got):\n%s", d)
		}
	}
}

// Unknown roles and content types are refused, naming what was found.
func TestMessageJSONRejectsUnknown(t *testing.T) {
	reads := []struct{ in, want string }{
		{`{"role":"system","content":[]}`, `unknown role "system"`},
		{`{"content":[]}`, `unknown role ""`},
		{`{"role":"user","content":[{"type":"video","data":"x"}]}`, `unknown type "video"`},
		{`{"role":"assistant","content":[{"text":"no type"}]}`, `unknown type ""`},
		{`{"role":"user","content":42}`, `cannot unmarshal number`},
	}
	for _, r := range reads {
		var m llm.Message
		err := json.Unmarshal([]byte(r.in), &m)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("Unmarshal(%s) = %v, want an error containing %q", r.in, err, r.want)
		}
	}
	writes := []struct {
		msg  llm.Message
		want string
	}{
		{llm.Message{Role: "system"}, `unknown role "system"`},
		{llm.Message{Role: llm.RoleUser, Content: []llm.Content{{Type: "video"}}}, `unknown type "video"`},
	}
	for _, w := range writes {
		_, err := json.Marshal(w.msg)
		if err == nil || !strings.Contains(err.Error(), w.want) {
			t.Errorf("Marshal(%+v) = %v, want an error containing %q", w.msg, err, w.want)
		}
	}
}

// A user message whose content is a plain string is read as one text block, and written
// back as an array.
func TestMessageJSONPlainStringContent(t *testing.T) {
	var m llm.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"hello \"you\"","timestamp":7}`), &m); err != nil {
		t.Fatal(err)
	}
	want := llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(`hello "you"`)}, Timestamp: 7}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("message (-want +got):\n%s", d)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"role":"user","content":[{"type":"text","text":"hello \"you\""}],"timestamp":7}` {
		t.Errorf("written back as %s", got)
	}

	// No content, or null content, reads as no blocks.
	for _, in := range []string{`{"role":"user"}`, `{"role":"user","content":null}`} {
		var m llm.Message
		if err := json.Unmarshal([]byte(in), &m); err != nil || len(m.Content) != 0 {
			t.Errorf("Unmarshal(%s) = %+v, %v; want no content", in, m, err)
		}
	}
}

// A transcript of every shape round-trips as a JSON array, as it is saved.
func TestTranscriptJSONRoundTrip(t *testing.T) {
	transcript := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("hi")}, Timestamp: 1},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Timestamp: 2, Content: []llm.Content{llm.NewToolCall("c1", "unlock", json.RawMessage(`{}`))}},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "unlock", Content: []llm.Content{llm.Text("ok")}, AddedToolNames: []string{"secret"}, Timestamp: 3},
		{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Timestamp: 4, Content: []llm.Content{llm.Text("done")}},
	}
	b, err := json.Marshal(transcript)
	if err != nil {
		t.Fatal(err)
	}
	var back []llm.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(transcript, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestMessageHelpers(t *testing.T) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{
		llm.Text("a"), llm.NewToolCall("1", "x", json.RawMessage(`{"n":1}`)), llm.Thinking("hidden"), llm.Text("b"), llm.NewToolCall("2", "y", nil),
	}}
	if got := m.Text(); got != "ab" {
		t.Errorf("Text() = %q, want %q", got, "ab")
	}
	want := []llm.ToolCall{{ID: "1", Name: "x", Arguments: json.RawMessage(`{"n":1}`)}, {ID: "2", Name: "y"}}
	if d := cmp.Diff(want, m.ToolCalls()); d != "" {
		t.Errorf("ToolCalls() in source order (-want +got):\n%s", d)
	}
	u := llm.NewUser("hello")
	if u.Role != llm.RoleUser || u.Text() != "hello" || u.Timestamp == 0 {
		t.Errorf("NewUser = %+v", u)
	}
}

func TestStreamEventJSON(t *testing.T) {
	b, err := json.Marshal(llm.StreamEvent{Kind: llm.StreamTextDelta, Index: 2, Delta: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"type":"text_delta","contentIndex":2,"delta":"hi"}` {
		t.Errorf("got %s", got)
	}
}

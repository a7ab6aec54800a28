package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
)

// history has every shape a request carries: text and image user messages, an assistant
// batch of parallel calls with (unsigned) thinking, results with an image, an aborted
// message with a call, a failed message, and a call whose result never came.
func history() []llm.Message {
	img := llm.Content{Type: llm.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	return []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Read a.txt and look at this:"), img}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			llm.Thinking("Two reads."),
			llm.Text("Reading both."),
			llm.Text("  "),
			llm.NewToolCall("call_1", "read", json.RawMessage(`{"path":"a.txt"}`)),
			llm.NewToolCall("call|2.x", "read", json.RawMessage(`{"path":"b.png"}`)),
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{llm.Text("alpha"), llm.Text("beta")}},
		{Role: llm.RoleToolResult, ToolCallID: "call|2.x", ToolName: "read", Content: []llm.Content{img}},
		{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Content: []llm.Content{llm.Text("Now I"), llm.NewToolCall("call_3", "write", nil)}},
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "boom", Content: []llm.Content{}},
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Go on.")}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			llm.NewToolCall("call_4", "ls", json.RawMessage(`"not an object"`)),
			llm.NewToolCall("call_5", "ls", nil),
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_4", ToolName: "ls", IsError: true, Content: []llm.Content{}},
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Stop.")}},
	}
}

var readSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]}`)

func TestRequestBody(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{MaxTokens: 4000})
	req := &llm.Request{
		SystemPrompt: "You are pid.",
		Messages:     history(),
		Tools: []llm.ToolSpec{
			{Name: "read", Description: "Read a file", Parameters: readSchema},
			{Name: "ls", Description: "List files"},
		},
	}
	before, _ := json.Marshal(req.Messages)
	msg, _ := stream(t, p, context.Background(), req)
	if msg.StopReason != llm.StopEnd {
		t.Fatalf("message = %+v", msg)
	}
	if after, _ := json.Marshal(req.Messages); string(before) != string(after) {
		t.Errorf("Stream modified the request's messages")
	}

	const want = `{
	  "model": "claude-sonnet-4-5",
	  "max_tokens": 4000,
	  "stream": true,
	  "system": [{"type": "text", "text": "You are pid.", "cache_control": {"type": "ephemeral"}}],
	  "messages": [
	    {"role": "user", "content": [
	      {"type": "text", "text": "Read a.txt and look at this:"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "text", "text": "Two reads."},
	      {"type": "text", "text": "Reading both."},
	      {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
	      {"type": "tool_use", "id": "call_2_x", "name": "read", "input": {"path": "b.png"}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "alpha"}, {"type": "text", "text": "beta"}]},
	      {"type": "tool_result", "tool_use_id": "call_2_x", "content": [
	        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
	      ]},
	      {"type": "text", "text": "Go on."}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "tool_use", "id": "call_4", "name": "ls", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "call_4", "content": [{"type": "text", "text": "(no output)"}], "is_error": true},
	      {"type": "text", "text": "Stop.", "cache_control": {"type": "ephemeral"}}
	    ]}
	  ],
	  "tools": [
	    {"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string", "description": "File to read"}}, "required": ["path"]}},
	    {"name": "ls", "description": "List files", "input_schema": {"type": "object", "properties": {}}}
	  ]
	}`
	replay.CheckBody(t, srv.Requests()[0].Body, want)
}

package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

// history has every shape a request carries: text and image user messages, an assistant
// batch of parallel calls with thinking, results with an image, an aborted message with a
// call, a failed message, a call whose result never came, and an error result (its text
// after "Error: ", since a tool message has no error flag: issue 32).
func history() []llm.Message {
	img := llm.Content{Type: llm.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	return []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Read a.txt and look at this:"), img}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			llm.Thinking("Two reads."),
			llm.Text("Reading both."),
			llm.NewToolCall("call_1", "read", json.RawMessage(`{"path":"a.txt"}`)),
			llm.NewToolCall("call_2", "read", json.RawMessage(`{"path":"b.png"}`)),
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{llm.Text("alpha"), llm.Text("beta")}},
		{Role: llm.RoleToolResult, ToolCallID: "call_2", ToolName: "read", IsError: false, Content: []llm.Content{img}},
		{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Content: []llm.Content{llm.Text("Now I"), llm.NewToolCall("call_3", "write", nil)}},
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "boom", Content: []llm.Content{}},
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Go on.")}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			llm.NewToolCall("call_4", "ls", json.RawMessage(`{}`)),
			llm.NewToolCall("call_5", "ls", nil),
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_4", ToolName: "ls", IsError: true, Content: []llm.Content{llm.Text("denied")}},
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Stop.")}},
	}
}

var readSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]}`)

func TestRequestBody(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv)
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
	after, _ := json.Marshal(req.Messages)
	if string(before) != string(after) {
		t.Errorf("Stream modified the request's messages")
	}

	const want = `{
	  "model": "gpt-4.1",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "messages": [
	    {"role": "system", "content": "You are pid."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "Read a.txt and look at this:"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
	    ]},
	    {"role": "assistant", "content": "Reading both.", "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"b.png\"}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "alpha\nbeta"},
	    {"role": "tool", "tool_call_id": "call_2", "content": "(see attached image)"},
	    {"role": "user", "content": [
	      {"type": "text", "text": "Attached image(s) from tool result:"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
	    ]},
	    {"role": "user", "content": "Go on."},
	    {"role": "assistant", "content": null, "tool_calls": [
	      {"id": "call_4", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_4", "content": "Error: denied"},
	    {"role": "user", "content": "Stop."}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "File to read"}}, "required": ["path"]}}},
	    {"type": "function", "function": {"name": "ls", "description": "List files", "parameters": {"type": "object", "properties": {}}}}
	  ]
	}`
	replay.CheckBody(t, srv.Requests()[0].Body, want)
}

// MaxTokens goes out as max_tokens to a server other than OpenAI's; with no tools the
// field is left out.
func TestRequestMaxTokens(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, err := openai.New(openai.Options{Model: "qwen3:8b", BaseURL: srv.URL + "/v1", MaxTokens: 2048, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{llm.NewUser("Hi")}})
	var got map[string]any
	r := srv.Requests()[0]
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got["max_tokens"] != 2048.0 || got["max_completion_tokens"] != nil {
		t.Errorf("max tokens fields: %v / %v", got["max_tokens"], got["max_completion_tokens"])
	}
	if _, ok := got["tools"]; ok {
		t.Errorf("tools sent without tools: %s", r.Body)
	}
	if msgs := got["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages = %v, want no system message for an empty prompt", msgs)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

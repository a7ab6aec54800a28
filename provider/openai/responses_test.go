// This file tests the Responses API (a model entry's "api": "responses") against recorded
// streams (provider/testdata/openai/responses_*.sse, written from the API reference's event
// shapes): the request's shape, the stream read into blocks, and the reasoning item sent
// back, as it came, in the next request of the tool loop (issue 32).

package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

func newResponsesProvider(t *testing.T, srv *replay.Server, effort string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Options{
		Model: "gpt-5", BaseURL: srv.URL + "/v1", APIKey: testKey, APIKeyEnv: "OPENAI_API_KEY",
		HTTPClient: srv.Client(), API: openai.APIResponses, ReasoningEffort: effort, MaxTokens: 32000,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The item the decoder keeps for the reasoning of responses_tools.sse: as it came, but for
// its id (store is false: the server keeps nothing an id could name).
const reasoningItem = `{"encrypted_content":"gAAAAABoqZ3k9fQ1vX2m8N0rT6yH4uJ7kL1pO3sA5dF8gH2jK9lZ0xC6vB4nM1qW7eR3tY5uI8oP2aS4dF6gH9jK0lZ==","summary":[{"type":"summary_text","text":"**Reading the test**\n\nThe failing test names parse.go."},{"type":"summary_text","text":"Read both files."}],"type":"reasoning"}`

func TestResponsesToolLoop(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("responses_tools.sse")}, replay.Step{File: file("responses_text.sse")})
	p := newResponsesProvider(t, srv, "medium")
	tools := []llm.ToolSpec{{Name: "read", Description: "Read a file", Parameters: readSchema}, {Name: "ls", Description: "List files"}}
	first := &llm.Request{SystemPrompt: "You are pid.", Messages: []llm.Message{llm.NewUser("Why does TestParse fail?")}, Tools: tools, CacheKey: "sess-42"}
	msg, rec := stream(t, p, context.Background(), first)

	if got := srv.Requests()[0].Path; got != "/v1/responses" {
		t.Errorf("path %q, want /v1/responses", got)
	}
	replay.CheckBody(t, srv.Requests()[0].Body, `{
	  "model": "gpt-5",
	  "instructions": "You are pid.",
	  "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Why does TestParse fail?"}]}],
	  "tools": [
	    {"type": "function", "name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "File to read"}}, "required": ["path"]}, "strict": false},
	    {"type": "function", "name": "ls", "description": "List files", "parameters": {"type": "object", "properties": {}}, "strict": false}
	  ],
	  "tool_choice": "auto",
	  "parallel_tool_calls": true,
	  "reasoning": {"effort": "medium"},
	  "include": ["reasoning.encrypted_content"],
	  "store": false,
	  "stream": true,
	  "prompt_cache_key": "sess-42",
	  "max_output_tokens": 32000
	}`)

	want := []string{
		`start 0 ""`,
		`thinking_start 0 ""`,
		`thinking_delta 0 "**Reading the test**\n\nThe failing"`,
		`thinking_delta 0 " test names parse.go."`,
		`thinking_delta 0 "\n\n"`,
		`thinking_delta 0 "Read both files."`,
		`thinking_end 0 ""`,
		`text_start 1 ""`,
		`text_delta 1 "Reading both "`,
		`text_delta 1 "files."`,
		`text_end 1 ""`,
		`toolcall_start 2 ""`,
		`toolcall_delta 2 "{\"path\":"`,
		`toolcall_delta 2 " \"a.txt\"}"`,
		`toolcall_end 2 ""`,
		`toolcall_start 3 ""`,
		`toolcall_delta 3 "{\"path\":\"b.txt\"}"`,
		`toolcall_end 3 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantContent := []llm.Content{
		{Type: llm.ContentThinking, Thinking: "**Reading the test**\n\nThe failing test names parse.go.\n\nRead both files.", Signature: reasoningItem},
		llm.Text("Reading both files."),
		llm.NewToolCall("call_A1", "read", json.RawMessage(`{"path": "a.txt"}`)),
		llm.NewToolCall("call_B2", "read", json.RawMessage(`{"path":"b.txt"}`)),
	}
	if d := cmp.Diff(wantContent, msg.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop %q, want toolUse", msg.StopReason)
	}
	if d := cmp.Diff(&llm.Usage{Input: 176, Output: 180, CacheRead: 1024, Total: 1380}, msg.Usage); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}

	// The results go back through a provider made anew (a restart: nothing is remembered but
	// the transcript), the reasoning item first, as it came; an error result says so in its
	// text, since function_call_output has no error flag.
	again := newResponsesProvider(t, srv, "medium")
	next := &llm.Request{SystemPrompt: "You are pid.", Tools: tools, CacheKey: "sess-42", Messages: []llm.Message{first.Messages[0], msg,
		{Role: llm.RoleToolResult, ToolCallID: "call_A1", ToolName: "read", Content: []llm.Content{llm.Text("alpha")}},
		{Role: llm.RoleToolResult, ToolCallID: "call_B2", ToolName: "read", IsError: true, Content: []llm.Content{llm.Text("The user denied this call of read.")}},
	}}
	end, _ := stream(t, again, context.Background(), next)
	if end.StopReason != llm.StopEnd || end.Text() != "Both say alpha." {
		t.Errorf("answer %+v", end)
	}
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range body.Input {
		got = append(got, string(in))
	}
	wantInput := []string{
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"Why does TestParse fail?"}]}`,
		reasoningItem,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading both files."}]}`,
		`{"type":"function_call","call_id":"call_A1","name":"read","arguments":"{\"path\": \"a.txt\"}"}`,
		`{"type":"function_call","call_id":"call_B2","name":"read","arguments":"{\"path\":\"b.txt\"}"}`,
		`{"type":"function_call_output","call_id":"call_A1","output":"alpha"}`,
		`{"type":"function_call_output","call_id":"call_B2","output":"Error: The user denied this call of read."}`,
	}
	if d := cmp.Diff(wantInput, got); d != "" {
		t.Errorf("input of the next request (-want +got):\n%s", d)
	}
	if !strings.Contains(string(srv.Requests()[1].Body), `"prompt_cache_key":"sess-42"`) {
		t.Errorf("the next request has no prompt_cache_key: %s", srv.Requests()[1].Body)
	}
}

// Thinking from another provider (Anthropic's signature, reasoning_content without any)
// does not go to the Responses API; a tool result's image goes in its output; without a
// reasoning effort nothing asks for reasoning, and no tools means no tool_choice.
func TestResponsesForeignThinkingAndImages(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("responses_text.sse")})
	p := newResponsesProvider(t, srv, "")
	img := llm.Content{Type: llm.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Content{llm.Text("Look:"), img}},
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
			{Type: llm.ContentThinking, Thinking: "Anthropic's.", Signature: "ErUBCkgIBxAB"},
			llm.Thinking("A local model's."),
			llm.NewToolCall("call_1", "read", json.RawMessage(`{"path":"a.png"}`)),
		}},
		{Role: llm.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{img}},
	}})
	replay.CheckBody(t, srv.Requests()[0].Body, `{
	  "model": "gpt-5",
	  "input": [
	    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Look:"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
	    {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a.png\"}"},
	    {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "(see attached image)"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}
	  ],
	  "store": false,
	  "stream": true,
	  "max_output_tokens": 32000
	}`)
}

// An answer cut at max_output_tokens stops with length; a failed response is an error
// that says what the server said.
func TestResponsesIncompleteAndFailed(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("responses_incomplete.sse")}, replay.Step{File: file("responses_failed.sse")})
	p := newResponsesProvider(t, srv, "")
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopLength || msg.Text() != "The file starts" {
		t.Errorf("incomplete: %+v", msg)
	}
	msg, _ = stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "server_error: The server had an error") {
		t.Errorf("failed: %+v", msg)
	}
}

// A stream that ends before response.completed is incomplete, not an answer.
func TestResponsesCutShort(t *testing.T) {
	srv := replay.New(t, replay.Step{Body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hal\"}\n\n", Header: map[string]string{"Content-Type": "text/event-stream"}})
	p := newResponsesProvider(t, srv, "")
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || msg.Text() != "Hal" {
		t.Errorf("cut short: %+v", msg)
	}
}

// The chat-completions API sends the conversation's key only when the entry says so.
func TestChatPromptCacheKey(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	for _, on := range []bool{false, true} {
		p, err := openai.New(openai.Options{Model: "gpt-4.1", BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: srv.Client(), PromptCacheKey: on})
		if err != nil {
			t.Fatal(err)
		}
		stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{llm.NewUser("Hi")}, CacheKey: "sess-7"})
	}
	reqs := srv.Requests()
	if strings.Contains(string(reqs[0].Body), "prompt_cache_key") || !strings.Contains(string(reqs[1].Body), `"prompt_cache_key":"sess-7"`) {
		t.Errorf("without promptCacheKey: %s\nwith it: %s", reqs[0].Body, reqs[1].Body)
	}
	if reqs[0].Path != "/v1/chat/completions" {
		t.Errorf("path %q", reqs[0].Path)
	}
	if _, err := openai.New(openai.Options{Model: "m", API: "completions"}); err == nil || !strings.Contains(err.Error(), `"responses"`) {
		t.Errorf("an unknown API: %v", err)
	}
}

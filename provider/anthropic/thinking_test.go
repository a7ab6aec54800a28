// This file tests extended thinking in a tool loop: the thinking blocks of the answer that
// called a tool, a redacted one too, go back first in that message, with their signatures,
// also from another Provider (a model change makes one).

package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
)

func TestThinkingToolLoop(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("thinking_tools.sse")}, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: 8192})
	first := &llm.Request{Messages: []llm.Message{llm.NewUser("Why does TestParse fail?")}}
	msg, rec := stream(t, p, context.Background(), first)
	want := []string{
		`start 0 ""`,
		`thinking_start 0 ""`,
		`thinking_delta 0 "The failing test names parse.go;"`,
		`thinking_delta 0 " read it first."`,
		`thinking_end 0 ""`,
		`thinking_start 1 ""`,
		`thinking_end 1 ""`,
		`toolcall_start 2 ""`,
		`toolcall_delta 2 "{\"path\": \"parse.go\"}"`,
		`toolcall_end 2 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantContent := []llm.Content{
		{Type: llm.ContentThinking, Thinking: "The failing test names parse.go; read it first.", Signature: "ErUBCkgIBxABGAIiQL7nZ2wQ0aVY3d9tK1mPz"},
		{Type: llm.ContentThinking, Signature: "EqkCCkYIBxgCKkBk8rB5Qm0yVv3nT", Redacted: true},
		llm.NewToolCall("toolu_01Rd8Hq", "read", json.RawMessage(`{"path": "parse.go"}`)),
	}
	if d := cmp.Diff(wantContent, msg.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop %q", msg.StopReason)
	}
	var body struct {
		MaxTokens int            `json:"max_tokens"`
		Thinking  map[string]any `json:"thinking"`
	}
	json.Unmarshal(srv.Requests()[0].Body, &body)
	if d := cmp.Diff(map[string]any{"type": "enabled", "budget_tokens": 8192.0}, body.Thinking); d != "" || body.MaxTokens <= 8192 {
		t.Errorf("thinking %v, max_tokens %d: want enabled with 8192 and max_tokens above it", body.Thinking, body.MaxTokens)
	}

	// The tool's result goes back through a provider made anew (as after a model change):
	// the thinking still goes back signed, the redacted block as it came, both before the
	// tool_use.
	again, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: 8192})
	next := &llm.Request{Messages: []llm.Message{first.Messages[0], msg,
		{Role: llm.RoleToolResult, ToolCallID: "toolu_01Rd8Hq", ToolName: "read", Content: []llm.Content{llm.Text("package parse")}}}}
	stream(t, again, context.Background(), next)
	var second struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(srv.Requests()[1].Body, &second)
	if len(second.Messages) != 3 {
		t.Fatalf("%d messages sent, want 3: %s", len(second.Messages), srv.Requests()[1].Body)
	}
	wantAssistant := []map[string]any{
		{"type": "thinking", "thinking": "The failing test names parse.go; read it first.", "signature": "ErUBCkgIBxABGAIiQL7nZ2wQ0aVY3d9tK1mPz"},
		{"type": "redacted_thinking", "data": "EqkCCkYIBxgCKkBk8rB5Qm0yVv3nT"},
		{"type": "tool_use", "id": "toolu_01Rd8Hq", "name": "read", "input": map[string]any{"path": "parse.go"}},
	}
	if d := cmp.Diff(wantAssistant, second.Messages[1].Content); d != "" {
		t.Errorf("assistant message sent back (-want +got):\n%s", d)
	}
	if !strings.Contains(string(srv.Requests()[1].Body), `"thinking":{"type":"enabled","budget_tokens":8192}`) {
		t.Errorf("the tool loop's next request does not think: %s", srv.Requests()[1].Body)
	}
}

// Thinking turned on in the middle of a tool loop (a model change, ACP's thought_level):
// the loop's last answer did not think, which the API rejects with thinking on, so the
// request goes without thinking; the next prompt thinks again.
func TestThinkingTurnedOnMidLoop(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: 2048})
	loop := []llm.Message{
		llm.NewUser("Read a.txt"),
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{llm.Text("Reading."), llm.NewToolCall("toolu_1", "read", json.RawMessage(`{"path":"a.txt"}`))}},
		{Role: llm.RoleToolResult, ToolCallID: "toolu_1", ToolName: "read", Content: []llm.Content{llm.Text("alpha")}},
	}
	stream(t, p, context.Background(), &llm.Request{Messages: loop})
	after := append(append([]llm.Message{}, loop...), llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Content: []llm.Content{llm.Text("It says alpha.")}}, llm.NewUser("Thanks"))
	stream(t, p, context.Background(), &llm.Request{Messages: after})
	var in, out map[string]any
	json.Unmarshal(srv.Requests()[0].Body, &in)
	json.Unmarshal(srv.Requests()[1].Body, &out)
	if th, ok := in["thinking"]; ok {
		t.Errorf("mid-loop request thinks: %v", th)
	}
	if _, ok := out["thinking"]; !ok {
		t.Errorf("the request after the loop does not think")
	}
}

// Without a budget no thinking is asked for.
func TestNoThinkingByDefault(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	stream(t, p, context.Background(), simpleReq)
	var body map[string]any
	json.Unmarshal(srv.Requests()[0].Body, &body)
	if _, ok := body["thinking"]; ok {
		t.Errorf("a request without a budget asks for thinking: %v", body["thinking"])
	}
}

// An OpenAI Responses API reasoning item (a model change from OpenAI's Responses API) is no
// Anthropic signature: its summary goes as text, never as a signed thinking block the API
// would reject; a reasoning item without a summary goes not at all.
func TestReasoningItemIsNoSignature(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	item := `{"encrypted_content":"gAAAAABo","summary":[],"type":"reasoning"}`
	stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{
		llm.NewUser("Hi"),
		{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Content: []llm.Content{
			{Type: llm.ContentThinking, Thinking: "Greet back.", Signature: item},
			{Type: llm.ContentThinking, Signature: item},
			{Type: llm.ContentThinking, Signature: item, Redacted: true},
			llm.Text("Hello."),
		}},
		llm.NewUser("Thanks"),
	}})
	var body struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(srv.Requests()[0].Body, &body)
	want := []map[string]any{{"type": "text", "text": "Greet back."}, {"type": "text", "text": "Hello."}}
	if d := cmp.Diff(want, body.Messages[1].Content); d != "" {
		t.Errorf("assistant message (-want +got):\n%s", d)
	}
}

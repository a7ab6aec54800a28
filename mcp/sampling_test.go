package mcp

//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but pid still answers it

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/llm"
)

// A sampling request's text and images become the model's messages, the assistant's ended;
// what pid cannot send (audio, an unknown role, more than 1 MiB) is an error naming the
// server; the answer comes back as text, or an error saying why there is none.
func TestSamplingConversions(t *testing.T) {
	req := &sdk.CreateMessageParams{SystemPrompt: "Be terse.", Messages: []*sdk.SamplingMessage{
		{Role: "user", Content: &sdk.TextContent{Text: "hi"}},
		{Role: "assistant", Content: &sdk.TextContent{Text: "hello"}},
		{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: []byte("png")}},
	}}
	r, err := SamplingRequest("s", req)
	if err != nil {
		t.Fatal(err)
	}
	if r.SystemPrompt != "Be terse." || len(r.Messages) != 3 || r.Messages[1].Role != llm.RoleAssistant || r.Messages[1].StopReason != llm.StopEnd ||
		r.Messages[2].Content[0].Type != llm.ContentImage || r.Messages[2].Content[0].Data != "cG5n" {
		t.Errorf("request %+v", r)
	}
	for _, bad := range []*sdk.CreateMessageParams{
		{},
		{Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.AudioContent{}}}},
		{Messages: []*sdk.SamplingMessage{{Role: "system", Content: &sdk.TextContent{Text: "x"}}}},
		{Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: strings.Repeat("x", maxSampleBytes+1)}}}},
	} {
		if _, err := SamplingRequest("s", bad); err == nil || !strings.HasPrefix(err.Error(), "MCP server s: ") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	res, err := SamplingResult(llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("ok")}, StopReason: llm.StopLength}, "openai/x")
	if err != nil || res.Model != "openai/x" || res.StopReason != "maxTokens" || res.Content.(*sdk.TextContent).Text != "ok" {
		t.Errorf("result %+v %v", res, err)
	}
	if _, err := SamplingResult(llm.Message{StopReason: llm.StopError, ErrorMessage: "boom"}, ""); err == nil || err.Error() != "the model failed: boom" {
		t.Errorf("failed model: %v", err)
	}
}

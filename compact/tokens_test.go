// This file tests EstimateTokens and ContextTokens.

package compact_test

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

func TestEstimateTokens(t *testing.T) {
	img := llm.Content{Type: llm.ContentImage, Data: "aGVsbG8=", MimeType: "image/png"}
	tests := []struct {
		name string
		m    *llm.Message
		want int
	}{
		{"nil", nil, 0},
		{"empty", &llm.Message{Role: llm.RoleUser}, 0},
		{"4 chars", &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("abcd")}}, 1},
		{"5 chars round up", &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("abcde")}}, 2},
		{"blocks add up before rounding", &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("ab"), llm.Text("cd")}}, 1},
		{"bytes, not runes", &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("éé")}}, 1},
		{"user image", &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("abcd"), img}}, 1 + 1200},
		{"assistant text, thinking and call", &llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{
			llm.Text("12345678"), llm.Thinking("1234"), llm.NewToolCall("id-not-counted", "read", json.RawMessage(`{"path":"a.go"}`)),
		}}, (8 + 4 + 4 + 15 + 3) / 4},
		{"tool result with two images", &llm.Message{Role: llm.RoleToolResult, ToolCallID: "c", ToolName: "read", Content: []llm.Content{llm.Text(text(10)), img, img}}, 10 + 2400},
	}
	for _, tt := range tests {
		if got := compact.EstimateTokens(tt.m); got != tt.want {
			t.Errorf("%s: EstimateTokens = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestContextTokens(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		want int
	}{
		{"empty", nil, 0},
		{"no usage: the estimate of everything", msgs(u(10), a(20), u(5)), 35},
		{"usage of the last assistant, plus what follows",
			msgs(u(10), used(a(20), llm.Usage{Input: 1000, Output: 50, CacheRead: 200, CacheWrite: 30}), u(5)), 1280 + 5},
		{"only the last usage counts",
			msgs(used(a(1), llm.Usage{Input: 999}), u(10), used(a(20, "c1"), llm.Usage{Input: 3000, Output: 10}), r("c1", 7)), 3010 + 7},
		{"the total when the parts are 0",
			msgs(u(1), used(a(2), llm.Usage{Total: 4321})), 4321},
		{"a zero usage is passed over",
			msgs(used(a(2), llm.Usage{Input: 100}), u(1), used(a(3), llm.Usage{})), 100 + 1 + 3},
		{"failed and aborted messages' usage is passed over",
			msgs(used(a(2), llm.Usage{Input: 500}), u(4),
				used(dead(llm.StopError, 6), llm.Usage{Input: 90000}),
				used(dead(llm.StopAborted, 8), llm.Usage{Input: 90000})), 500 + 4 + 6 + 8},
		{"a user message's usage field is ignored",
			msgs(used(u(4), llm.Usage{Input: 777})), 4},
	}
	for _, tt := range tests {
		if got := compact.ContextTokens(tt.msgs); got != tt.want {
			t.Errorf("%s: ContextTokens = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// After a compaction the kept messages' usage measured the old context: ContextTokensSince
// estimates them and trusts only usage reported after the compaction.
func TestContextTokensSince(t *testing.T) {
	view := msgs(
		compact.SummaryMessage(text(100)),
		u(10),
		used(a(20), llm.Usage{Input: 180000, Output: 100}), // kept: stale
		u(5), // added after the compaction
	)
	sum := compact.EstimateTokens(&view[0]) + 10 + 20 + 5
	if got := compact.ContextTokensSince(view, 3); got != sum {
		t.Errorf("right after the compaction: %d, want the estimate %d", got, sum)
	}
	if got := compact.ContextTokens(view); got != 180100+5 {
		t.Errorf("ContextTokens trusts every usage: %d, want %d", got, 180100+5)
	}
	later := append(view, used(a(3), llm.Usage{Input: 4000, Output: 30}), u(2))
	if got := compact.ContextTokensSince(later, 3); got != 4030+2 {
		t.Errorf("after a new model call: %d, want %d", got, 4032)
	}
	if got := compact.ContextTokensSince(view, -4); got != compact.ContextTokens(view) {
		t.Errorf("a negative since must act as 0: %d", got)
	}
	if got := compact.ContextTokensSince(view, 99); got != sum {
		t.Errorf("since past the end: %d, want %d", got, sum)
	}
}

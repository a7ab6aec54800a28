package openai

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// OpenAI's own API gets max_completion_tokens (its reasoning models reject max_tokens).
func TestMaxCompletionTokensForOpenAI(t *testing.T) {
	p, err := New(Options{Model: "o4-mini", MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.body(&llm.Request{Messages: []llm.Message{llm.NewUser("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["max_completion_tokens"] != 100.0 || got["max_tokens"] != nil {
		t.Errorf("body = %s", b)
	}
}

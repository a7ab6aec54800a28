// This file tests ContextWindow.

package compact_test

import (
	"testing"

	"github.com/pid-agent/pid/compact"
)

func TestContextWindow(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"claude-sonnet-4-5", 200000},
		{"claude-sonnet-4-5-20250929", 200000},
		{"claude-3-5-sonnet-20241022", 200000},
		{"claude-3-haiku-20240307", 200000},
		{"claude-opus-4-1", 200000},
		{"Claude-Haiku-4-5", 200000},
		{"anthropic/claude-sonnet-4.5", 200000},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", 200000},
		{"claude-2.1", 200000},
		{"claude-2.0", 100000},
		{"claude-instant-1.2", 100000},

		{"gpt-4.1", 1047576},
		{"gpt-4.1-mini-2025-04-14", 1047576},
		{"openai/gpt-4.1-nano", 1047576},
		{"gpt-4o", 128000},
		{"gpt-4o-mini", 128000},
		{"gpt-4o-2024-08-06", 128000},
		{"gpt-4", 8192},
		{"gpt-4-0613", 8192},
		{"gpt-4-32k", 32768},
		{"gpt-4-turbo-2024-04-09", 128000},
		{"gpt-4-1106-preview", 128000},
		{"gpt-3.5-turbo", 16385},
		{"o1", 200000},
		{"o1-mini", 128000},
		{"o3", 200000},
		{"o3-mini", 200000},
		{"o4-mini", 200000},
		{"gpt-5", 400000},
		{"gpt-5-mini", 400000},
		{"gpt-5.1-codex", 400000},
		{"gpt-5-chat-latest", 128000},
		{"gpt-oss:20b", 131072},

		{"qwen2.5-coder:7b", 32768},
		{"Qwen/Qwen2.5-Coder-32B-Instruct", 32768},
		{"qwen2.5-coder-7b-instruct-q4_k_m.gguf", 32768},
		{"qwen3:8b", 40960},
		{"qwen3-coder:30b", 262144},
		{"llama3:8b", 8192},
		{"llama3.1:70b", 131072},
		{"meta-llama/llama-3.3-70b-instruct", 131072},
		{"deepseek-r1:14b", 131072},
		{"mistral:7b", 32768},
		{"mistral-nemo", 131072},
		{"gemma3:27b", 131072},
		{"phi4", 16384},

		// Unknown ids, and ids that only look like a known family.
		{"", compact.DefaultContextWindow},
		{"some-local-model", 128000},
		{"gpt-40", 128000},
		{"o10", 128000},
		{"claudette", 128000},
	}
	for _, tt := range tests {
		if got := compact.ContextWindow(tt.id); got != tt.want {
			t.Errorf("ContextWindow(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

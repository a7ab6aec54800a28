// This file measures what a session pays before each model call: ContextTokens and
// CutPoint over a long transcript.

package compact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

// longTranscript returns n messages of a coding session: a prompt, then steps of an
// assistant message calling read on two files and the two results (2 KB each), with
// usage reported on every assistant message.
func longTranscript(n int) []llm.Message {
	ms := make([]llm.Message, 0, n)
	ms = append(ms, llm.NewUser("refactor the parser and keep the tests green"))
	body := strings.Repeat("func f() { return }\n", 100)
	for i := 0; len(ms) < n; i++ {
		id1, id2 := fmt.Sprintf("c%d-1", i), fmt.Sprintf("c%d-2", i)
		ms = append(ms, llm.Message{
			Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Usage: &llm.Usage{Input: 1000 + 1000*i, Output: 80},
			Content: []llm.Content{
				llm.Text("Reading the next two files."),
				llm.NewToolCall(id1, "read", json.RawMessage(fmt.Sprintf(`{"path":"pkg/a%d.go"}`, i))),
				llm.NewToolCall(id2, "read", json.RawMessage(fmt.Sprintf(`{"path":"pkg/b%d.go"}`, i))),
			},
		})
		for _, id := range []string{id1, id2} {
			ms = append(ms, llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "read", Content: []llm.Content{llm.Text(body)}})
		}
	}
	return ms[:n]
}

func BenchmarkContextTokensCutPoint(b *testing.B) {
	ms := longTranscript(10000)
	keep := compact.Defaults().KeepRecentTokens
	b.ReportAllocs()
	for b.Loop() {
		if compact.ContextTokens(ms) <= 0 {
			b.Fatal("no tokens")
		}
		if _, ok := compact.CutPoint(ms, keep); !ok {
			b.Fatal("no cut")
		}
	}
}

// The same with no usage anywhere: every message is estimated.
func BenchmarkContextTokensEstimated(b *testing.B) {
	ms := longTranscript(10000)
	for i := range ms {
		ms[i].Usage = nil
	}
	b.ReportAllocs()
	for b.Loop() {
		if compact.ContextTokens(ms) <= 0 {
			b.Fatal("no tokens")
		}
	}
}

func BenchmarkValidCuts(b *testing.B) {
	ms := longTranscript(10000)
	b.ReportAllocs()
	for b.Loop() {
		if len(compact.ValidCuts(ms)) == 0 {
			b.Fatal("no cuts")
		}
	}
}

package session

// What a subagent costs pid: the same ten turns (one call each to a tool that does
// nothing) run in the session's own prompt, and run by a general child of a task call. The
// difference, per prompt, is pid's overhead for a child: making its session (workspace,
// tools, file), its prompt, its events and the task call around it; no model time.
// `go test -run '^$' -bench Subagent ./session/` (docs/performance.md, "Subagents").

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/pid-agent/pid/llm"
)

func subagentTurns(n int) []llm.Turn {
	var turns []llm.Turn
	for i := range n {
		turns = append(turns, llm.Turn{Content: []llm.Content{{Type: llm.ContentToolCall, ID: fmt.Sprintf("c%d", i), Name: "noop", Arguments: []byte(`{"i":1}`)}}})
	}
	return append(turns, llm.Turn{Content: []llm.Content{llm.Text("done")}})
}

func benchmarkSubagent(b *testing.B, child bool) {
	state, err := os.MkdirTemp("", "pid-bench-state-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(state)
	b.Setenv("XDG_STATE_HOME", state)
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	if os.Getenv("PID_BENCH_UNSAVED") != "" {
		h.files = nil
	}
	cfg := Config{Cwd: b.TempDir(), Permissions: []byte(`{"default":"allow"}`), ScriptedTools: []ScriptedTool{{Name: "noop",
		Parameters: []byte(`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`),
		Steps:      []ScriptStep{{Result: &ScriptedValue{}}}}}}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if child {
			cfg.Model = &ModelConfig{Provider: "script", Turns: []llm.Turn{
				{Content: []llm.Content{{Type: llm.ContentToolCall, ID: "t1", Name: TaskName, Arguments: []byte(`{"description":"work","prompt":"do it","agent":"general"}`)}}},
				{Content: []llm.Content{llm.Text("done")}}},
				Subagents: map[string]*ModelConfig{"work": {Provider: "script", Turns: subagentTurns(10)}}}
		} else {
			cfg.Model = &ModelConfig{Provider: "script", Turns: subagentTurns(10)}
		}
		s, err := h.New(cfg, Options{Face: quietFace{}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("go")})
		b.StopTimer()
		if err != nil || res.StopReason != llm.StopEnd {
			b.Fatalf("prompt: %v %v", err, res.StopReason)
		}
		if err := h.CloseSession(s.ID()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func BenchmarkSubagentInSession(b *testing.B) { benchmarkSubagent(b, false) }
func BenchmarkSubagentChild(b *testing.B)     { benchmarkSubagent(b, true) }

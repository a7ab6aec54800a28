package session

// W1's workload (T=200 model calls of K=8 calls each to a tool that does nothing, see
// docs/performance.md) run through a session, with its file and without: the per-call cost
// of saving. `go test -run '^$' -bench SessionW1 ./session/`. The session answers a first
// prompt untimed, so that its file exists (its header holds the scripted model's 201 turns,
// which no real session's does): what is timed is the steady state of a live session.

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

func w1Turns(t, k int) []llm.Turn {
	turns := make([]llm.Turn, 0, t+1)
	for n := range t {
		var calls []llm.Content
		for i := range k {
			calls = append(calls, llm.Content{Type: llm.ContentToolCall, ID: fmt.Sprintf("call_%d_%d", n, i), Name: "noop", Arguments: []byte(fmt.Sprintf(`{"i":%d}`, i))})
		}
		turns = append(turns, llm.Turn{Content: calls})
	}
	return append(turns, llm.Turn{Content: []llm.Content{llm.Text("done")}})
}

func benchmarkSessionW1(b *testing.B, saved bool) {
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
	if !saved {
		h.files = nil
	}
	const T, K = 200, 8
	turns := append([]llm.Turn{{Content: []llm.Content{llm.Text("ready")}}}, w1Turns(T, K)...)
	cfg := Config{Cwd: b.TempDir(), Permissions: []byte(`{"default":"allow"}`), ScriptedTools: []ScriptedTool{{Name: "noop",
		Parameters: []byte(`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`),
		Steps:      []ScriptStep{{Result: &ScriptedValue{}}}}}}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cfg.Model = &ModelConfig{Provider: "script", Turns: turns}
		s, err := h.New(cfg, Options{Face: quietFace{}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("ready?")}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("go")})
		if err != nil || res.StopReason != llm.StopEnd || len(res.Messages) != 1+T*(1+K)+1 {
			b.Fatalf("run: %v %s %d messages", err, res.StopReason, len(res.Messages))
		}
		b.StopTimer()
		h.CloseSession(s.ID())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*T*K), "us/call")
}

func BenchmarkSessionW1(b *testing.B) {
	// As the daemon runs (cmd/pid sets GOGC to 400 unless the environment says otherwise).
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	b.Run("saved", func(b *testing.B) { benchmarkSessionW1(b, true) })
	b.Run("unsaved", func(b *testing.B) { benchmarkSessionW1(b, false) })
}

// Loading a saved session of 10,000 messages (turns of a user message, an assistant message
// with a tool call and its result of about 1 KB, and an answer): `go test -run '^$' -bench
// SessionLoad ./session/`. Target: under 200 ms.
func BenchmarkSessionLoad10k(b *testing.B) {
	state := b.TempDir()
	b.Setenv("XDG_STATE_HOME", state)
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	cwd := b.TempDir()
	f, err := h.files.Create(Config{Model: &ModelConfig{Provider: "script"}}.Header("", cwd, []string{"read", "bash"}))
	if err != nil {
		b.Fatal(err)
	}
	id := f.ID()
	result := strings.Repeat("output line of a tool\n", 45)
	for n := 0; n < 10000/4; n++ {
		call := fmt.Sprintf("call_%d", n)
		ms := []llm.Message{
			llm.NewUser(fmt.Sprintf("step %d: look at the file and run the tests", n)),
			{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{llm.Text("Running them."), {Type: llm.ContentToolCall, ID: call, Name: "bash", Arguments: []byte(`{"command":"go test ./..."}`)}}, Usage: &llm.Usage{Input: 1000 + n, Output: 20}},
			{Role: llm.RoleToolResult, ToolCallID: call, ToolName: "bash", Content: []llm.Content{llm.Text(result)}},
			{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Content: []llm.Content{llm.Text("All tests pass.")}},
		}
		var entries []store.Entry
		for i := range ms {
			entries = append(entries, store.Entry{Kind: store.KindMessage, Message: &ms[i]})
		}
		if _, err := f.Append(entries...); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	b.ResetTimer()
	for range b.N {
		s, items, err := h.Load(id, Options{Face: quietFace{}})
		if err != nil || len(items) != 10000 {
			b.Fatalf("load: %v, %d items", err, len(items))
		}
		b.StopTimer()
		h.CloseSession(s.ID())
		b.StartTimer()
	}
}

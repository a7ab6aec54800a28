package toolexec_test

// Tests of the batches Run reuses: a batch's state is not allocated again for every batch,
// and an onUpdate a tool leaves behind never reaches a later batch that reuses the state.

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// raceEnabled reports whether the test binary was built with -race (sync.Pool then drops a
// quarter of what it is given, on purpose).
func raceEnabled() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

// A batch of 8 calls of a tool that allocates nothing costs 3 allocations per call (the
// arguments' map, onUpdate, the boxing of an event or two), not more: the calls' state, the
// batch and its list of runnable calls come from the pool. Before, 27 (sequential) and 31
// (parallel) per batch.
func TestBatchStateIsReused(t *testing.T) {
	res := toolexec.Result{Content: []llm.Content{llm.Text("ok")}}
	noop := toolexec.Tool{Name: "noop", Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return res, nil
	}}
	set := active(t, noop)
	calls := make([]llm.ToolCall, 8)
	for i := range calls {
		calls[i] = tc("c", "noop", `{}`)
	}
	room := make([]llm.Message, 0, len(calls))
	bound := 3.0 * float64(len(calls))
	if raceEnabled() {
		bound += 3
	}
	for _, mode := range []toolexec.Mode{toolexec.Sequential, toolexec.Parallel} {
		cfg := &toolexec.Config{Mode: mode}
		n := testing.AllocsPerRun(200, func() {
			toolexec.Run(context.Background(), cfg, toolexec.Batch{Calls: calls, Tools: set, Results: room})
		})
		if n > bound {
			t.Errorf("%s: %.0f allocations per batch of %d calls, want at most %.0f", mode, n, len(calls), bound)
		}
	}
}

// R9: a tool's onUpdate called after its Execute returned is dropped, also once the batch's
// state serves another batch: the left-behind goroutine's update reaches neither batch's
// observer.
func TestLeftBehindUpdateReachesNoLaterBatch(t *testing.T) {
	for range 20 { // the pool may hand the later batch another state: try until one is reused
		call := make(chan func(event.Result))
		done := make(chan struct{})
		leaky := toolexec.Tool{Name: "leaky", Execute: func(_ context.Context, _ toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			call <- onUpdate
			return toolexec.TextResult("left"), nil
		}}
		var later func(event.Result)
		g := newGate()
		gated := gatedTool("gated", map[string]*gate{"g": g}, nil)
		set := active(t, leaky, gated)

		first := &recorder{}
		go func() { later = <-call; close(done) }()
		toolexec.Run(context.Background(), &toolexec.Config{Emit: first.sink}, toolexec.Batch{Calls: []llm.ToolCall{tc("l", "leaky", `{"path":"x"}`)}, Tools: set})
		<-done

		second := &recorder{}
		out := runAsync(context.Background(), &toolexec.Config{Emit: second.sink}, toolexec.Batch{Calls: []llm.ToolCall{tc("g", "gated", `{"path":"y"}`)}, Tools: set})
		<-g.entered
		later(event.Result{Content: []llm.Content{llm.Text("late")}})
		g.open()
		<-out

		for _, rec := range []*recorder{first, second} {
			for _, line := range rec.Log() {
				if len(line) > 7 && line[:7] == "update:" {
					t.Fatalf("an update sent after its tool returned was delivered: %q", rec.Log())
				}
			}
		}
	}
}

package toolexec_test

// Slots cap how many calls of a tool execute at once (bash's processes): the rest wait, in
// source order within a batch and in the order batches were prepared across them, and get
// their ToolExecutionStart when they start.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// slotted returns a gated tool sharing slots, whose executions are recorded in started.
func slotted(name string, slots *toolexec.Slots, gates map[string]*gate, started *[]string, mu *sync.Mutex) toolexec.Tool {
	t := gatedTool(name, gates, func(id string) {
		mu.Lock()
		*started = append(*started, id)
		mu.Unlock()
	})
	t.Slots = slots
	return t
}

// R13 C3: at most two of six calls run at once; the others start in source order as slots free.
func TestSlotsCapAndSourceOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var started []string
		gates := map[string]*gate{}
		var calls []llm.ToolCall
		for i := range 6 {
			id := fmt.Sprintf("c%d", i)
			gates[id] = newGate()
			calls = append(calls, tc(id, "proc", `{"path":"x"}`))
		}
		rec := &recorder{}
		set := active(t, slotted("proc", toolexec.NewSlots(2), gates, &started, &mu))
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})
		running := func() []string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(started)
		}
		if got := running(); len(got) != 2 || !slices.Contains(got, "c0") || !slices.Contains(got, "c1") {
			t.Fatalf("started %v, want c0 and c1 only", got)
		}
		// Only the calls that started have their ToolExecutionStart.
		if runs := rec.Only("run"); !slices.Equal(runs, []string{"run:c0", "run:c1"}) {
			t.Errorf("ToolExecutionStart before any slot freed: %v", runs)
		}
		// Each freed slot goes to the next call in source order, whichever call freed it.
		for i, free := range []string{"c1", "c0", "c3", "c2"} {
			gates[free].open()
			want := fmt.Sprintf("c%d", i+2)
			if got := running(); len(got) != i+3 || got[i+2] != want {
				t.Fatalf("after %s ended, started %v; want %s next", free, got, want)
			}
		}
		gates["c4"].open()
		gates["c5"].open()
		out := <-done
		if len(out.Messages) != 6 || slices.ContainsFunc(out.Messages, func(m llm.Message) bool { return m.IsError }) {
			t.Errorf("outcome %+v", summarize(out.Messages))
		}
		if runs := rec.Only("run"); len(runs) != 6 {
			t.Errorf("ToolExecutionStart events %v, want one per call", runs)
		}
	})
}

// Across batches (and sessions sharing the pool), the batch prepared first is served first.
func TestSlotsFirstPreparedFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var started []string
		gates := map[string]*gate{"a0": newGate(), "a1": newGate(), "b0": newGate()}
		slots := toolexec.NewSlots(1)
		set := active(t, slotted("proc", slots, gates, &started, &mu))
		first := runAsync(t.Context(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{tc("a0", "proc", `{"path":"x"}`), tc("a1", "proc", `{"path":"x"}`)}, Tools: set})
		synctest.Wait()
		second := runAsync(t.Context(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{tc("b0", "proc", `{"path":"x"}`)}, Tools: set})
		synctest.Wait()
		gates["a0"].open()
		synctest.Wait()
		gates["a1"].open()
		synctest.Wait()
		gates["b0"].open()
		<-first
		<-second
		if !slices.Equal(started, []string{"a0", "a1", "b0"}) {
			t.Errorf("started %v, want a0 a1 b0 (the first batch's calls were queued first)", started)
		}
	})
}

// R17: an abort while calls wait for a slot ends them without running (no
// ToolExecutionStart), and gives every slot back.
func TestSlotsAbortWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var started []string
		gates := map[string]*gate{"c0": newGate(), "c1": newGate(), "c2": newGate()}
		slots := toolexec.NewSlots(1)
		rec := &recorder{}
		set := active(t, slotted("proc", slots, gates, &started, &mu))
		ctx, cancel := context.WithCancel(t.Context())
		done := runAsync(ctx, &toolexec.Config{Emit: rec.sink}, toolexec.Batch{Calls: []llm.ToolCall{tc("c0", "proc", `{"path":"x"}`), tc("c1", "proc", `{"path":"x"}`), tc("c2", "proc", `{"path":"x"}`)}, Tools: set})
		synctest.Wait()
		cancel()
		out := <-done
		if !slices.Equal(started, []string{"c0"}) || !slices.Equal(rec.Only("run"), []string{"run:c0"}) {
			t.Errorf("started %v, runs %v; want only c0", started, rec.Only("run"))
		}
		for _, m := range out.Messages {
			if !m.IsError {
				t.Errorf("%s: not an error after the abort", m.ToolCallID)
			}
		}
		// Every slot is free again: a new call starts at once.
		gates["d0"] = newGate()
		later := runAsync(t.Context(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{tc("d0", "proc", `{"path":"x"}`)}, Tools: set})
		synctest.Wait()
		if !gates["d0"].hasEntered() {
			t.Error("the slot of an aborted batch was not given back")
		}
		gates["d0"].open()
		<-later
	})
}

// R14: ToolResults carries a parallel batch's result messages, in source order, once before
// they are announced; a sequential batch (each result announced after its call, R15) and a
// batch of one call have none.
func TestToolResultsOnlyForParallelBatches(t *testing.T) {
	for _, c := range []struct {
		mode  toolexec.Mode
		calls []llm.ToolCall
		want  []string
	}{
		{toolexec.Parallel, []llm.ToolCall{tc("a", "echo", `{"path":"x"}`), tc("b", "echo", `{"path":"y"}`)}, []string{"results:a:b"}},
		{toolexec.Sequential, []llm.ToolCall{tc("a", "echo", `{"path":"x"}`), tc("b", "echo", `{"path":"y"}`)}, nil},
		{toolexec.Parallel, []llm.ToolCall{tc("a", "echo", `{"path":"x"}`)}, nil},
	} {
		rec := &recorder{}
		out := toolexec.Run(t.Context(), &toolexec.Config{Mode: c.mode, Emit: rec.sink}, toolexec.Batch{Calls: c.calls, Tools: active(t, echoTool("echo"))})
		if got := rec.Only("results"); !slices.Equal(got, c.want) {
			t.Errorf("%s, %d calls: %v, want %v", c.mode, len(c.calls), got, c.want)
		}
		for _, ev := range rec.Events() {
			if r, ok := ev.(event.ToolResults); ok && !slices.EqualFunc(r.Messages, out.Messages, func(a, b llm.Message) bool {
				return a.ToolCallID == b.ToolCallID && a.Content[0].Text == b.Content[0].Text
			}) {
				t.Errorf("ToolResults %v differ from the outcome %v", r.Messages, out.Messages)
			}
		}
	}
}

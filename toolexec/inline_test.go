package toolexec_test

// Tests of how a parallel batch runs the calls of quick tools: one after another on the
// batch's goroutine, with the calls behind a quick call that blocks handed to goroutines.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// R13: a tool whose calls return at once has its later batches' calls run one at a time
// (never two at once), and every call still gets its result in source order (R14).
func TestQuickCallsRunOneAtATime(t *testing.T) {
	defer toolexec.SetQuick(time.Hour, time.Hour)()
	var running, overlaps atomic.Int32
	tool := toolexec.Tool{
		Name:       "quick",
		Parameters: json.RawMessage(pathSchema),
		Execute: func(_ context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			return toolexec.TextResult("quick " + c.ID), nil
		},
	}
	set := active(t, tool)
	batch := func(n int) toolexec.Outcome {
		var calls []llm.ToolCall
		for i := range n {
			calls = append(calls, tc(fmt.Sprintf("c%d", i), "quick", `{"path":"p"}`))
		}
		return toolexec.Run(context.Background(), &toolexec.Config{}, toolexec.Batch{Calls: calls, Tools: set})
	}
	batch(2) // learns that the tool is quick
	overlaps.Store(0)
	for range 20 {
		out := batch(8)
		diff(t, "result order", []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}, ids(out.Messages))
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d calls of a quick tool ran while another was running", n)
	}
}

// R13: a tool that was quick and now blocks does not hold the calls queued behind it on
// the batch's goroutine: they get goroutines of their own and run meanwhile. Here the first
// call returns only once the last one has run, which it could not if they ran in turn (it
// would give up after 30 s with an error result).
func TestQuickCallThatBlocksDoesNotHoldTheOthers(t *testing.T) {
	defer toolexec.SetQuick(time.Hour, 50*time.Microsecond)()
	lastRan := make(chan struct{})
	var waitForLast atomic.Bool
	tool := toolexec.Tool{
		Name:       "flip",
		Parameters: json.RawMessage(pathSchema),
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			switch {
			case c.ID == "b0" && waitForLast.Load():
				select {
				case <-lastRan:
				case <-time.After(30 * time.Second): // a hang becomes a failure, not a stuck run
					return toolexec.Result{}, fmt.Errorf("the last call never ran while the first blocked")
				}
			case c.ID == "b3" && waitForLast.Load():
				close(lastRan)
			}
			return toolexec.TextResult("flip " + c.ID), nil
		},
	}
	set := active(t, tool)
	calls := []llm.ToolCall{tc("b0", "flip", `{"path":"p"}`), tc("b1", "flip", `{"path":"p"}`), tc("b2", "flip", `{"path":"p"}`), tc("b3", "flip", `{"path":"p"}`)}
	toolexec.Run(context.Background(), &toolexec.Config{}, toolexec.Batch{Calls: calls, Tools: set}) // quick
	waitForLast.Store(true)
	rec := &recorder{}
	out := toolexec.Run(context.Background(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})
	diff(t, "results", []msgSummary{
		{ID: "b0", Name: "flip", Text: "flip b0"}, {ID: "b1", Name: "flip", Text: "flip b1"},
		{ID: "b2", Name: "flip", Text: "flip b2"}, {ID: "b3", Name: "flip", Text: "flip b3"},
	}, summarize(out.Messages))
	checkLifecycle(t, rec.Log(), "b0", "b1", "b2", "b3")
}

// R13 in a synctest bubble: the rescue's timer is the bubble's, so a quick call that blocks
// is rescued on the bubble's clock (a timer from outside would leave the bubble blocked for
// good); batches outside a bubble afterwards run as usual.
func TestQuickCallsInsideASynctestBubble(t *testing.T) {
	defer toolexec.SetQuick(time.Hour, 50*time.Microsecond)()
	run := func(t *testing.T) {
		lastRan := make(chan struct{})
		var block atomic.Bool
		tool := toolexec.Tool{
			Name:       "flip",
			Parameters: json.RawMessage(pathSchema),
			Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				switch {
				case c.ID == "b0" && block.Load():
					select {
					case <-lastRan:
					case <-time.After(30 * time.Second):
						return toolexec.Result{}, fmt.Errorf("the last call never ran while the first blocked")
					}
				case c.ID == "b2" && block.Load():
					close(lastRan)
				}
				return toolexec.TextResult("flip " + c.ID), nil
			},
		}
		set := active(t, tool)
		calls := []llm.ToolCall{tc("b0", "flip", `{"path":"p"}`), tc("b1", "flip", `{"path":"p"}`), tc("b2", "flip", `{"path":"p"}`)}
		for range 3 { // the first batch learns that the tool is quick
			out := toolexec.Run(context.Background(), &toolexec.Config{}, toolexec.Batch{Calls: calls, Tools: set})
			diff(t, "result order", []string{"b0", "b1", "b2"}, ids(out.Messages))
		}
		block.Store(true)
		out := toolexec.Run(context.Background(), &toolexec.Config{}, toolexec.Batch{Calls: calls, Tools: set})
		diff(t, "results", []msgSummary{
			{ID: "b0", Name: "flip", Text: "flip b0"}, {ID: "b1", Name: "flip", Text: "flip b1"}, {ID: "b2", Name: "flip", Text: "flip b2"},
		}, summarize(out.Messages))
	}
	synctest.Test(t, run)
	t.Run("outside", run)
	synctest.Test(t, run)
}

// quickTool returns a tool that runs exec (when not nil) and answers "NAME ID", made quick
// by one batch of two calls.
func quickTool(t *testing.T, name string, exec func(ctx context.Context, id string) error) *toolexec.ActiveSet {
	t.Helper()
	var learned atomic.Bool
	tool := toolexec.Tool{
		Name:       name,
		Parameters: json.RawMessage(pathSchema),
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			if exec != nil && learned.Load() {
				if err := exec(ctx, c.ID); err != nil {
					return toolexec.Result{}, err
				}
			}
			return toolexec.TextResult(name + " " + c.ID), nil
		},
	}
	set := active(t, tool)
	toolexec.Run(context.Background(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{tc("l0", name, `{"path":"p"}`), tc("l1", name, `{"path":"p"}`)}, Tools: set})
	learned.Store(true)
	return set
}

// R17 and R10 for calls run in turn on the batch's goroutine: an abort during the second
// call leaves the first's result, and the calls after it, which had their
// ToolExecutionStart, see the cancellation (here, they return ctx's error: "Operation
// aborted"); a panic in one call is its error result and the others still run. Every call
// has exactly one start, one end and one result message, in source order.
func TestQuickCallsAbortAndPanic(t *testing.T) {
	defer toolexec.SetQuick(time.Hour, time.Hour)()
	t.Run("abort", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		set := quickTool(t, "q", func(ctx context.Context, id string) error {
			if id == "c1" {
				cancel()
			}
			return ctx.Err()
		})
		rec := &recorder{}
		calls := []llm.ToolCall{tc("c0", "q", `{"path":"p"}`), tc("c1", "q", `{"path":"p"}`), tc("c2", "q", `{"path":"p"}`), tc("c3", "q", `{"path":"p"}`)}
		out := toolexec.Run(ctx, &toolexec.Config{Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})
		diff(t, "results", []msgSummary{
			{ID: "c0", Name: "q", Text: "q c0"},
			{ID: "c1", Name: "q", IsError: true, Text: "Operation aborted"},
			{ID: "c2", Name: "q", IsError: true, Text: "Operation aborted"},
			{ID: "c3", Name: "q", IsError: true, Text: "Operation aborted"},
		}, summarize(out.Messages))
		if !out.Aborted {
			t.Error("Outcome.Aborted is false after the abort")
		}
		checkLifecycle(t, rec.Log(), "c0", "c1", "c2", "c3")
	})
	t.Run("panic", func(t *testing.T) {
		set := quickTool(t, "p", func(ctx context.Context, id string) error {
			if id == "c1" {
				panic("boom")
			}
			return nil
		})
		rec := &recorder{}
		calls := []llm.ToolCall{tc("c0", "p", `{"path":"p"}`), tc("c1", "p", `{"path":"p"}`), tc("c2", "p", `{"path":"p"}`)}
		out := toolexec.Run(context.Background(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})
		diff(t, "results", []msgSummary{
			{ID: "c0", Name: "p", Text: "p c0"},
			{ID: "c1", Name: "p", IsError: true, Text: "tool p panicked: boom"},
			{ID: "c2", Name: "p", Text: "p c2"},
		}, summarize(out.Messages))
		if w := rec.warnings("c1"); len(w) != 1 {
			t.Errorf("warnings for the panic: %v, want one", w)
		}
		checkLifecycle(t, rec.Log(), "c0", "c1", "c2")
	})
}

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

package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/toolexec"
)

// The full event sequence of a run with two turns, in sequential mode so that the order is
// fixed: each call's start, end and result message come before the next call's (R15).
func TestRunEventSequence(t *testing.T) {
	tb := box(t, echoTool("echo", nil))
	prov := llm.NewScript(
		calls(llm.Text("looking"), tc("c1", "echo", `{"x":1}`), tc("c2", "echo", `{"x":2}`)),
		text("done"),
	)
	rec := &recorder{}
	// The partial message of the first assistant message's last update, copied during the
	// call as event.MessageUpdate's contract asks.
	var lastPartial []llm.Content
	firstDone := false
	sink := func(e event.Event) {
		rec.sink(e)
		if u, ok := e.(event.MessageUpdate); ok && !firstDone {
			lastPartial = cloneContent(u.Message.Content)
		}
		if m, ok := e.(event.MessageEnd); ok && m.Message.Role == llm.RoleAssistant {
			firstDone = true
		}
	}
	cfg := &loop.Config{Provider: prov, Tools: activate(t, tb, "echo"), ToolExecution: toolexec.Sequential, Emit: sink}
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})

	want := seq(
		"AgentStart",
		"TurnStart",
		"MessageStart user hi", "MessageEnd user hi",
		"MessageStart assistant", updates("text", "toolcall", "toolcall"), "MessageEnd assistant toolUse",
		"ToolStart c1", "ToolExecutionStart c1", "ToolEnd c1", "MessageStart toolResult c1", "MessageEnd toolResult c1",
		"ToolStart c2", "ToolExecutionStart c2", "ToolEnd c2", "MessageStart toolResult c2", "MessageEnd toolResult c2",
		"TurnEnd assistant toolUse [c1 c2]",
		"TurnStart",
		"MessageStart assistant", updates("text"), "MessageEnd assistant stop",
		"TurnEnd assistant stop []",
		"AgentEnd 5",
	)
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	wantMsgs := []string{"user hi", "assistant toolUse", "toolResult c1", "toolResult c2", "assistant stop"}
	if d := cmp.Diff(wantMsgs, tags(res.Messages)); d != "" {
		t.Errorf("Result.Messages (-want +got):\n%s", d)
	}
	if res.StopReason != llm.StopEnd || res.Aborted || res.Terminated {
		t.Errorf("Result = %+v, want StopReason stop, not aborted, not terminated", res)
	}
	if got := resultTexts(res.Messages); got["c1"] != `echo: {"x":1}` || got["c2"] != `echo: {"x":2}` {
		t.Errorf("tool results = %q", got)
	}
	if got := prov.Calls(); got != 2 {
		t.Errorf("model calls = %d, want 2", got)
	}

	// AgentEnd carries what Result.Messages holds; MessageEnd carries the final assistant
	// message; the last streaming update already holds the whole content.
	evs := rec.events()
	end := evs[len(evs)-1].(event.AgentEnd)
	if d := cmp.Diff(res.Messages, end.Messages); d != "" {
		t.Errorf("AgentEnd.Messages differ from Result.Messages (-result +event):\n%s", d)
	}
	var firstEnd event.MessageEnd
	for _, e := range evs {
		if m, ok := e.(event.MessageEnd); ok && m.Message.Role == llm.RoleAssistant && firstEnd.Message == nil {
			firstEnd = m
		}
	}
	if firstEnd.Message == nil || lastPartial == nil {
		t.Fatal("no assistant MessageEnd or MessageUpdate")
	}
	if d := cmp.Diff(res.Messages[1], *firstEnd.Message); d != "" {
		t.Errorf("assistant MessageEnd (-transcript +event):\n%s", d)
	}
	if d := cmp.Diff(res.Messages[1].Content, lastPartial); d != "" {
		t.Errorf("last MessageUpdate content (-final +partial):\n%s", d)
	}
	var turnEnd event.TurnEnd
	for _, e := range evs {
		if te, ok := e.(event.TurnEnd); ok {
			turnEnd = te
			break
		}
	}
	if d := cmp.Diff(res.Messages[1:4], append([]llm.Message{turnEnd.Message}, turnEnd.ToolResults...)); d != "" {
		t.Errorf("first TurnEnd (-transcript +event):\n%s", d)
	}
}

// R13, R14 at loop level: in parallel mode ToolEnd comes in completion order, while the
// tool-result messages, TurnEnd and the transcript keep source order. c1 is held until the
// sink has seen c2's ToolEnd, so c2 finishes first, deterministically.
func TestRunParallelCompletionOrder(t *testing.T) {
	g := newGate()
	tb := box(t, g.tool("slow"), echoTool("echo", nil))
	prov := llm.NewScript(calls(tc("c1", "slow", `{}`), tc("c2", "echo", `{}`)), text("ok"))
	rec := &recorder{}
	sink := func(e event.Event) {
		rec.sink(e)
		if te, ok := e.(event.ToolEnd); ok && te.ToolCallID == "c2" {
			close(g.release)
		}
	}
	cfg := &loop.Config{Provider: prov, Tools: activate(t, tb, "slow", "echo"), Emit: sink}
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("go")})

	want := seq(
		"AgentStart", "TurnStart", "MessageStart user go", "MessageEnd user go",
		"MessageStart assistant", updates("toolcall", "toolcall"), "MessageEnd assistant toolUse",
		"ToolStart c1", "ToolStart c2",
		// R13: both start executing once both are prepared, in source order
		"ToolExecutionStart c1", "ToolExecutionStart c2",
		"ToolEnd c2", "ToolEnd c1",
		"ToolResults [c1 c2]", "MessageStart toolResult c1", "MessageEnd toolResult c1",
		"MessageStart toolResult c2", "MessageEnd toolResult c2",
		"TurnEnd assistant toolUse [c1 c2]",
		"TurnStart", "MessageStart assistant", updates("text"), "MessageEnd assistant stop", "TurnEnd assistant stop []",
		"AgentEnd 5",
	)
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"user go", "assistant toolUse", "toolResult c1", "toolResult c2", "assistant stop"}, tags(res.Messages)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

// Steering queued before the run starts is taken in the first turn, right after the prompt
// and before the first model call, with no TurnStart of its own (as in pi).
func TestRunSteeringBeforeFirstCall(t *testing.T) {
	prov := &recordingProvider{inner: llm.NewScript(text("ok"))}
	queued := []llm.Message{user("steer")}
	rec := &recorder{}
	cfg := &loop.Config{
		Provider: prov, Tools: activate(t, box(t)), Emit: rec.sink,
		Steering: func() []llm.Message { q := queued; queued = nil; return q },
	}
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
	want := seq("AgentStart", "TurnStart",
		"MessageStart user hi", "MessageEnd user hi",
		"MessageStart user steer", "MessageEnd user steer",
		"MessageStart assistant", updates("text"), "MessageEnd assistant stop",
		"TurnEnd assistant stop []", "AgentEnd 3")
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]string{{"user hi", "user steer"}}, mapTags(prov.requests())); d != "" {
		t.Errorf("model requests (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"user hi", "user steer", "assistant stop"}, tags(res.Messages)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

// msgKey identifies a message of one run: its tag plus the id of its first tool call.
func msgKey(m llm.Message) string {
	k := msgTag(m)
	if c := m.ToolCalls(); len(c) > 0 {
		k += " " + c[0].ID
	}
	return k
}

func mapTags(reqs [][]llm.Message) [][]string {
	out := [][]string{}
	for _, r := range reqs {
		out = append(out, tags(r))
	}
	return out
}

// R3 at loop level.
func TestRunLengthStopRunsNoTool(t *testing.T) {
	// R3
	var execs, before, after counter
	tb := box(t, echoTool("echo", &execs))
	prov := llm.NewScript(
		llm.Turn{Content: []llm.Content{tc("c1", "echo", `{"a":1}`), tc("c2", "echo", `{"a":`)}, StopReason: llm.StopLength},
		calls(tc("c3", "echo", `{"a":1}`)),
		text("done"),
	)
	rec := &recorder{}
	cfg := &loop.Config{
		Provider: prov, Tools: activate(t, tb, "echo"), Emit: rec.sink,
		Before: func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) { before.inc(); return nil, nil },
		After: func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) {
			after.inc()
			return nil, nil
		},
	}
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})

	want := seq("AgentStart", "TurnStart", "MessageStart user hi", "MessageEnd user hi",
		"MessageStart assistant", updates("toolcall", "toolcall"), "MessageEnd assistant length",
		"ToolStart c1", "ToolEnd c1 error", "MessageStart toolResult c1", "MessageEnd toolResult c1",
		"ToolStart c2", "ToolEnd c2 error", "MessageStart toolResult c2", "MessageEnd toolResult c2",
		"TurnEnd assistant length [c1 c2]",
		// the loop goes on so the model can re-issue the calls
		"TurnStart", "MessageStart assistant", updates("toolcall"), "MessageEnd assistant toolUse",
		"ToolStart c3", "ToolExecutionStart c3", "ToolEnd c3", "MessageStart toolResult c3", "MessageEnd toolResult c3",
		"TurnEnd assistant toolUse [c3]",
		"TurnStart", "MessageStart assistant", updates("text"), "MessageEnd assistant stop", "TurnEnd assistant stop []",
		"AgentEnd 7")
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	// Only the re-issued call ran, and only it went through the hooks.
	if execs.get() != 1 || before.get() != 1 || after.get() != 1 {
		t.Errorf("executions %d, beforeToolCall %d, afterToolCall %d; want 1 each (only c3)", execs.get(), before.get(), after.get())
	}
	for _, id := range []string{"c1", "c2"} {
		var m llm.Message
		for _, x := range res.Messages {
			if x.ToolCallID == id {
				m = x
			}
		}
		if !m.IsError || !strings.Contains(m.Text(), "output-token limit") || !strings.Contains(m.Text(), "smaller parts") {
			t.Errorf("result of %s = %+v, want an error asking for the change in smaller parts", id, m)
		}
	}
	if prov.Calls() != 3 || res.StopReason != llm.StopEnd {
		t.Errorf("model calls %d, stop %q; want 3, stop", prov.Calls(), res.StopReason)
	}
}

// R16 at loop level.
func TestRunTerminatingBatch(t *testing.T) {
	finish := resultTool("finish", toolexec.Result{Content: []llm.Content{llm.Text("finished")}, Terminate: true})

	t.Run("all terminate", func(t *testing.T) {
		// R16: every result asks to terminate: no further model call.
		prov := llm.NewScript(calls(tc("c1", "finish", `{}`), tc("c2", "finish", `{}`)), text("never asked"))
		rec := &recorder{}
		cfg := &loop.Config{Provider: prov, Tools: activate(t, box(t, finish), "finish"), ToolExecution: toolexec.Sequential, Emit: rec.sink}
		res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
		if prov.Calls() != 1 {
			t.Errorf("model calls = %d, want 1", prov.Calls())
		}
		if !res.Terminated || res.Aborted || res.StopReason != llm.StopToolUse {
			t.Errorf("Result = {Terminated:%v Aborted:%v StopReason:%q}, want terminated, not aborted, toolUse", res.Terminated, res.Aborted, res.StopReason)
		}
		got := rec.compact()
		if d := cmp.Diff([]string{"TurnEnd assistant toolUse [c1 c2]", "AgentEnd 4"}, got[len(got)-2:]); d != "" {
			t.Errorf("last events (-want +got):\n%s", d)
		}
	})

	t.Run("mixed", func(t *testing.T) {
		// R16: one result that does not terminate keeps the loop going.
		prov := llm.NewScript(calls(tc("c1", "finish", `{}`), tc("c2", "echo", `{}`)), text("next"))
		cfg := &loop.Config{Provider: prov, Tools: activate(t, box(t, finish, echoTool("echo", nil)), "finish", "echo")}
		res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
		if prov.Calls() != 2 || res.Terminated || res.StopReason != llm.StopEnd {
			t.Errorf("model calls %d, Terminated %v, StopReason %q; want 2, false, stop", prov.Calls(), res.Terminated, res.StopReason)
		}
	})

	// R16: "queued steering and follow-up messages are still taken". What the loop does, as
	// pi's runLoop does: a terminating batch only clears "more tool calls"; the inner loop
	// still runs while steering is pending, and the outer loop still takes follow-ups, so
	// either drives a further model turn. The run then ends normally, not terminated.
	t.Run("steering after terminate", func(t *testing.T) {
		// R16
		var queue []llm.Message
		steerer := toolexec.Tool{Name: "finish", Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
			queue = append(queue, user("steer")) // the loop goroutine is blocked in the batch
			return toolexec.Result{Terminate: true}, nil
		}}
		prov := &recordingProvider{inner: llm.NewScript(calls(tc("c1", "finish", `{}`)), text("answered steering"))}
		cfg := &loop.Config{
			Provider: prov, Tools: activate(t, box(t, steerer), "finish"),
			Steering: func() []llm.Message { q := queue; queue = nil; return q },
		}
		res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
		want := []string{"user hi", "assistant toolUse", "toolResult c1", "user steer", "assistant stop"}
		if d := cmp.Diff(want, tags(res.Messages)); d != "" {
			t.Errorf("transcript (-want +got):\n%s", d)
		}
		if len(prov.requests()) != 2 || res.Terminated {
			t.Errorf("model calls %d, Terminated %v; want 2 (steering drives a turn), false", len(prov.requests()), res.Terminated)
		}
	})

	t.Run("follow-up after terminate", func(t *testing.T) {
		// R16
		follow := []llm.Message{user("follow")}
		prov := llm.NewScript(calls(tc("c1", "finish", `{}`)), text("answered follow-up"))
		cfg := &loop.Config{
			Provider: prov, Tools: activate(t, box(t, finish), "finish"),
			FollowUp: func() []llm.Message { q := follow; follow = nil; return q },
		}
		res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
		want := []string{"user hi", "assistant toolUse", "toolResult c1", "user follow", "assistant stop"}
		if d := cmp.Diff(want, tags(res.Messages)); d != "" {
			t.Errorf("transcript (-want +got):\n%s", d)
		}
		if prov.Calls() != 2 || res.Terminated {
			t.Errorf("model calls %d, Terminated %v; want 2, false", prov.Calls(), res.Terminated)
		}
	})
}

// R17 at loop level: cancelling while tools run ends the run at once, every call keeps
// exactly one start, end and result, and no goroutine outlives Run (goleak in TestMain).
func TestRunCancelWhileToolRuns(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			// R17
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				var execs counter
				tb := box(t, g.tool("block"), echoTool("echo", &execs))
				prov := llm.NewScript(
					calls(tc("c1", "block", `{}`), tc("c2", "block", `{}`), tc("c3", "echo", `{}`)),
					text("never asked"),
				)
				rec := &recorder{}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cfg := &loop.Config{Provider: prov, Tools: activate(t, tb, "block", "echo"), ToolExecution: mode, Emit: rec.sink}
				done := runAsync(ctx, cfg, nil, []llm.Message{user("hi")})

				<-g.started
				synctest.Wait() // every running tool is blocked on its gate
				cancel()
				res := <-done

				if !res.Aborted || res.StopReason != llm.StopAborted || res.Terminated {
					t.Errorf("Result = {Aborted:%v StopReason:%q Terminated:%v}, want aborted", res.Aborted, res.StopReason, res.Terminated)
				}
				if prov.Calls() != 1 {
					t.Errorf("model calls = %d, want 1: after an abort the model is asked nothing more", prov.Calls())
				}
				counts := countEvents(rec.events())
				for _, id := range []string{"c1", "c2", "c3"} {
					if counts[id] != [3]int{1, 1, 1} {
						t.Errorf("%s: (ToolStart, ToolEnd, result MessageEnd) = %v, want one each", id, counts[id])
					}
				}
				want := []string{"user hi", "assistant toolUse", "toolResult c1", "toolResult c2", "toolResult c3"}
				if d := cmp.Diff(want, tags(res.Messages)); d != "" {
					t.Errorf("transcript (-want +got):\n%s", d)
				}
				// Parallel: c3 ran with the others and finished before the cancel; its result
				// is kept. Sequential: c2 and c3 never ran.
				wantTexts := map[string]string{"c1": "Operation aborted", "c2": "Operation aborted", "c3": "Operation aborted"}
				wantExecs := 0
				if mode == toolexec.Parallel {
					wantTexts["c3"], wantExecs = "echo: {}", 1
				}
				if d := cmp.Diff(wantTexts, resultTexts(res.Messages)); d != "" {
					t.Errorf("results (-want +got):\n%s", d)
				}
				for _, m := range res.Messages[2:] {
					if m.IsError != (wantTexts[m.ToolCallID] == "Operation aborted") {
						t.Errorf("result %s: isError %v", m.ToolCallID, m.IsError)
					}
				}
				if execs.get() != wantExecs {
					t.Errorf("echo ran %d times, want %d", execs.get(), wantExecs)
				}
				got := rec.compact()
				if d := cmp.Diff([]string{"TurnEnd assistant toolUse [c1 c2 c3]", "AgentEnd 5"}, got[len(got)-2:]); d != "" {
					t.Errorf("last events (-want +got):\n%s", d)
				}
			})
		})
	}
}

// A context cancelled while the model streams: the provider returns "aborted", the run ends
// aborted with no tool run.
func TestRunCancelWhileModelStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var execs counter
		streaming := make(chan struct{})
		prov := &llm.ScriptedProvider{Next: func(int) (llm.Turn, bool) {
			return calls(llm.Text("thinking about it"), tc("c1", "echo", `{}`)), true
		}}
		rec := &recorder{}
		sink := func(e event.Event) {
			rec.sink(e)
			if u, ok := e.(event.MessageUpdate); ok && u.Delta.Kind == llm.StreamTextDelta {
				cancel() // the user presses stop mid-stream
				close(streaming)
			}
		}
		cfg := &loop.Config{Provider: prov, Tools: activate(t, box(t, echoTool("echo", &execs)), "echo"), Emit: sink}
		res := loop.Run(ctx, cfg, nil, []llm.Message{user("hi")})
		<-streaming
		if !res.Aborted || res.StopReason != llm.StopAborted || prov.Calls() != 1 || execs.get() != 0 {
			t.Errorf("Result = {Aborted:%v StopReason:%q}, model calls %d, executions %d; want aborted, 1, 0", res.Aborted, res.StopReason, prov.Calls(), execs.get())
		}
		got := rec.compact()
		if d := cmp.Diff([]string{"MessageEnd assistant aborted", "TurnEnd assistant aborted []", "AgentEnd 2"}, got[len(got)-3:]); d != "" {
			t.Errorf("last events (-want +got):\n%s", d)
		}
	})
}

// A context cancelled before the run asks nothing of the model.
func TestRunCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	prov := llm.NewScript(text("never"))
	rec := &recorder{}
	res := loop.Run(ctx, &loop.Config{Provider: prov, Tools: activate(t, box(t)), Emit: rec.sink}, nil, []llm.Message{user("hi")})
	if !res.Aborted || res.StopReason != llm.StopAborted {
		t.Errorf("Result = {Aborted:%v StopReason:%q}, want aborted", res.Aborted, res.StopReason)
	}
	want := []string{"AgentStart", "TurnStart", "MessageStart user hi", "MessageEnd user hi",
		"MessageStart assistant", "MessageEnd assistant aborted", "TurnEnd assistant aborted []", "AgentEnd 2"}
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// R12 at loop level: addedToolNames activates tools from that message on. The request of
// the turn that produced it did not list the tool; the next one does; a call to it in the
// same batch as the activating call is not found (earlier turns never saw it); unknown names
// give a Warning and are ignored.
func TestRunAddedToolNames(t *testing.T) {
	// R12
	unlock := resultTool("unlock", toolexec.Result{Content: []llm.Content{llm.Text("unlocked")}, AddedToolNames: []string{"secret", "nosuch"}})
	var secretRuns counter
	tb := box(t, echoTool("secret", &secretRuns), unlock, echoTool("other", nil))
	prov := &recordingProvider{inner: llm.NewScript(
		calls(tc("c1", "unlock", `{}`), tc("c2", "secret", `{}`)),
		calls(tc("c3", "secret", `{}`)),
		text("done"),
	)}
	rec := &recorder{}
	cfg := &loop.Config{Provider: prov, Tools: activate(t, tb, "unlock"), ToolExecution: toolexec.Sequential, Emit: rec.sink}
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})

	want := [][]string{{"unlock"}, {"secret", "unlock"}, {"secret", "unlock"}} // toolbox order
	if d := cmp.Diff(want, prov.toolNames()); d != "" {
		t.Errorf("tools per model request (-want +got):\n%s", d)
	}
	got := resultTexts(res.Messages)
	if got["c2"] != "Tool secret not found" || got["c3"] != "echo: {}" || secretRuns.get() != 1 {
		t.Errorf("results %q, secret ran %d times; want c2 not found, c3 run once", got, secretRuns.get())
	}
	if d := cmp.Diff([]string{"secret", "unlock"}, res.Tools.Names()); d != "" {
		t.Errorf("Result.Tools (-want +got):\n%s", d)
	}
	if res.Messages[2].ToolCallID != "c1" || !cmp.Equal(res.Messages[2].AddedToolNames, []string{"secret", "nosuch"}) {
		t.Errorf("unlock result = %+v, want addedToolNames copied onto it", res.Messages[2])
	}
	if res.Messages[3].AddedToolNames != nil {
		t.Errorf("result without added tools has AddedToolNames %q", res.Messages[3].AddedToolNames)
	}
	if w := rec.warnings(); len(w) != 1 || !strings.Contains(w[0], `"nosuch"`) {
		t.Errorf("warnings = %q, want one naming nosuch", w)
	}
}

// A model message with stopReason "error" or "aborted" ends the run: TurnEnd with no tool
// results (its tool calls do not run), then AgentEnd.
func TestRunModelStops(t *testing.T) {
	for _, stop := range []llm.StopReason{llm.StopError, llm.StopAborted} {
		t.Run(string(stop), func(t *testing.T) {
			var execs counter
			prov := llm.NewScript(llm.Turn{Content: []llm.Content{tc("c1", "echo", `{}`)}, StopReason: stop, ErrorMessage: "upstream said no"}, text("never"))
			rec := &recorder{}
			cfg := &loop.Config{Provider: prov, Tools: activate(t, box(t, echoTool("echo", &execs)), "echo"), Emit: rec.sink}
			res := loop.Run(context.Background(), cfg, nil, []llm.Message{user("hi")})
			want := seq("AgentStart", "TurnStart", "MessageStart user hi", "MessageEnd user hi",
				"MessageStart assistant", updates("toolcall"), "MessageEnd assistant "+string(stop),
				"TurnEnd assistant "+string(stop)+" []", "AgentEnd 2")
			if d := cmp.Diff(want, rec.compact()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if res.StopReason != stop || res.Aborted != (stop == llm.StopAborted) || prov.Calls() != 1 || execs.get() != 0 {
				t.Errorf("Result = {StopReason:%q Aborted:%v}, calls %d, executions %d", res.StopReason, res.Aborted, prov.Calls(), execs.get())
			}
			if res.Messages[1].ErrorMessage != "upstream said no" {
				t.Errorf("ErrorMessage = %q", res.Messages[1].ErrorMessage)
			}
		})
	}
}

type panicProvider struct{ midStream bool }

func (p panicProvider) Stream(_ context.Context, _ *llm.Request, sink llm.StreamSink) llm.Message {
	if p.midStream {
		sink(&llm.Message{Role: llm.RoleAssistant}, llm.StreamEvent{Kind: llm.StreamStart})
	}
	panic("provider exploded")
}

// A provider that panics (breaking its contract) becomes an error message; the run ends.
func TestRunProviderPanic(t *testing.T) {
	for _, mid := range []bool{false, true} {
		rec := &recorder{}
		res := loop.Run(context.Background(), &loop.Config{Provider: panicProvider{mid}, Tools: activate(t, box(t)), Emit: rec.sink}, nil, []llm.Message{user("hi")})
		if res.StopReason != llm.StopError || len(res.Messages) != 2 {
			t.Fatalf("midStream=%v: Result = %+v, want one error message", mid, res)
		}
		m := res.Messages[1]
		if m.Role != llm.RoleAssistant || m.Timestamp == 0 || !strings.Contains(m.ErrorMessage, "model provider failed") || !strings.Contains(m.ErrorMessage, "provider exploded") {
			t.Errorf("midStream=%v: message = %+v", mid, m)
		}
		got := rec.compact()
		if d := cmp.Diff([]string{"MessageStart assistant", "MessageEnd assistant error", "TurnEnd assistant error []", "AgentEnd 2"}, got[4:]); d != "" {
			t.Errorf("midStream=%v: events (-want +got):\n%s", mid, d)
		}
	}
}

// Running out of scripted turns is a clear error message, not a hang or a panic.
func TestRunScriptExhausted(t *testing.T) {
	prov := llm.NewScript(calls(tc("c1", "echo", `{}`)))
	res := loop.Run(context.Background(), &loop.Config{Provider: prov, Tools: activate(t, box(t, echoTool("echo", nil)), "echo")}, nil, []llm.Message{user("hi")})
	last := res.Messages[len(res.Messages)-1]
	if res.StopReason != llm.StopError || last.ErrorMessage != "scripted model: no turn left for model call 2 (the script has 1 turns)" {
		t.Errorf("StopReason %q, ErrorMessage %q", res.StopReason, last.ErrorMessage)
	}
}

// TransformContext sees the transcript so far; what it returns is exactly what the
// provider receives.
func TestRunTransformContext(t *testing.T) {
	history := []llm.Message{user("old 1"), user("old 2")}
	var seen [][]string
	transform := func(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
		seen = append(seen, tags(msgs))
		// keep a summary and the last two messages
		return append([]llm.Message{user("summary")}, msgs[len(msgs)-2:]...), nil
	}
	prov := &recordingProvider{inner: llm.NewScript(calls(tc("c1", "echo", `{}`)), text("done"))}
	cfg := &loop.Config{Provider: prov, Tools: activate(t, box(t, echoTool("echo", nil)), "echo"), TransformContext: transform}
	res := loop.Run(context.Background(), cfg, history, []llm.Message{user("hi")})
	if res.StopReason != llm.StopEnd {
		t.Fatalf("StopReason %q", res.StopReason)
	}
	wantSeen := [][]string{
		{"user old 1", "user old 2", "user hi"},
		{"user old 1", "user old 2", "user hi", "assistant toolUse", "toolResult c1"},
	}
	if d := cmp.Diff(wantSeen, seen); d != "" {
		t.Errorf("transform saw (-want +got):\n%s", d)
	}
	wantSent := [][]string{
		{"user summary", "user old 2", "user hi"},
		{"user summary", "assistant toolUse", "toolResult c1"},
	}
	if d := cmp.Diff(wantSent, mapTags(prov.requests())); d != "" {
		t.Errorf("provider received (-want +got):\n%s", d)
	}
	if len(history) != 2 || history[1].Text() != "old 2" {
		t.Errorf("history modified: %+v", history)
	}
}

// ConvertToLlm runs exactly once per message over a multi-turn run (pi converts the whole
// transcript on every call), and what it returns (or drops) is what the provider sees.
func TestRunConvertToLlmOncePerMessage(t *testing.T) {
	history := []llm.Message{user("old"), user("ui-only note")}
	counts := map[string]int{}
	convert := func(m *llm.Message) (llm.Message, bool) {
		counts[msgKey(*m)]++
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "ui-only") {
			return llm.Message{}, false
		}
		c := *m
		if m.Role == llm.RoleUser {
			c.Content = []llm.Content{llm.Text(strings.ToUpper(m.Text()))}
		}
		return c, true
	}
	prov := &recordingProvider{inner: llm.NewScript(
		calls(tc("c1", "echo", `{}`)),
		calls(tc("c2", "echo", `{}`)),
		calls(tc("c3", "echo", `{}`)),
		text("done"),
	)}
	steer := []llm.Message{user("steer")}
	cfg := &loop.Config{
		Provider: prov, Tools: activate(t, box(t, echoTool("echo", nil)), "echo"), ConvertToLlm: convert,
		Steering: func() []llm.Message {
			if len(prov.requests()) == 2 {
				q := steer
				steer = nil
				return q
			}
			return nil
		},
	}
	res := loop.Run(context.Background(), cfg, history, []llm.Message{user("hi")})
	if res.StopReason != llm.StopEnd {
		t.Fatalf("StopReason %q", res.StopReason)
	}
	total := 0
	for tag, n := range counts {
		total += n
		if n != 1 {
			t.Errorf("%s converted %d times, want 1", tag, n)
		}
	}
	if want := len(history) + len(res.Messages); total != want {
		t.Errorf("ConvertToLlm called %d times, want %d (once per message)", total, want)
	}
	reqs := mapTags(prov.requests())
	want := []string{"user OLD", "user HI", "assistant toolUse", "toolResult c1", "assistant toolUse", "toolResult c2", "user STEER", "assistant toolUse", "toolResult c3"}
	if d := cmp.Diff(want, reqs[len(reqs)-1]); d != "" {
		t.Errorf("last request (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[:2], reqs[0]); d != "" {
		t.Errorf("first request (-want +got):\n%s", d)
	}
}

// A failing TransformContext (error or panic) ends the run with an error message naming it
// and asks the model nothing.
func TestRunTransformContextFails(t *testing.T) {
	transforms := map[string]func(context.Context, []llm.Message) ([]llm.Message, error){
		"error": func(context.Context, []llm.Message) ([]llm.Message, error) { return nil, errors.New("index missing") },
		"panic": func(context.Context, []llm.Message) ([]llm.Message, error) { panic("index missing") },
	}
	for name, tr := range transforms {
		t.Run(name, func(t *testing.T) {
			prov := llm.NewScript(text("never"))
			rec := &recorder{}
			res := loop.Run(context.Background(), &loop.Config{Provider: prov, Tools: activate(t, box(t)), TransformContext: tr, Emit: rec.sink}, nil, []llm.Message{user("hi")})
			last := res.Messages[len(res.Messages)-1]
			if res.StopReason != llm.StopError || res.Aborted || prov.Calls() != 0 {
				t.Errorf("StopReason %q Aborted %v calls %d; want error, false, 0", res.StopReason, res.Aborted, prov.Calls())
			}
			if !strings.Contains(last.ErrorMessage, "transformContext") || !strings.Contains(last.ErrorMessage, "index missing") {
				t.Errorf("ErrorMessage = %q, want it to name transformContext and the cause", last.ErrorMessage)
			}
			want := []string{"AgentStart", "TurnStart", "MessageStart user hi", "MessageEnd user hi",
				"Warning", "MessageStart assistant", "MessageEnd assistant error", "TurnEnd assistant error []", "AgentEnd 2"}
			if d := cmp.Diff(want, rec.compact()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// A TransformContext that returns because the run was cancelled (as its contract asks) ends
// the run as aborted, not as a failure: Result.Aborted is true whenever ctx was cancelled.
func TestRunTransformContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		transform := func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		prov := llm.NewScript(text("never"))
		done := runAsync(ctx, &loop.Config{Provider: prov, Tools: activate(t, box(t)), TransformContext: transform}, nil, []llm.Message{user("hi")})
		synctest.Wait()
		cancel()
		res := <-done
		if !res.Aborted || res.StopReason != llm.StopAborted || prov.Calls() != 0 {
			t.Errorf("Aborted %v StopReason %q calls %d; want true, aborted, 0", res.Aborted, res.StopReason, prov.Calls())
		}
	})
}

// cancelErrorProvider waits for the cancel, then reports it as a failure ("error"), as a
// careless provider might.
type cancelErrorProvider struct{}

func (cancelErrorProvider) Stream(ctx context.Context, _ *llm.Request, _ llm.StreamSink) llm.Message {
	<-ctx.Done()
	return llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "request canceled"}
}

// A model failure caused by a cancel is reported as an abort: Result.Aborted is true
// whenever ctx was cancelled during the run, and StopReason is "aborted" after a cancel.
func TestRunCancelReportedAsProviderError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := runAsync(ctx, &loop.Config{Provider: cancelErrorProvider{}, Tools: activate(t, box(t))}, nil, []llm.Message{user("hi")})
		synctest.Wait()
		cancel()
		res := <-done
		if !res.Aborted || res.StopReason != llm.StopAborted {
			t.Errorf("Aborted %v StopReason %q; want true, aborted", res.Aborted, res.StopReason)
		}
		if m := res.Messages[len(res.Messages)-1]; m.ErrorMessage != "request canceled" {
			t.Errorf("the provider's message is kept as it is: got %+v", m)
		}
	})
}

// A ConvertToLlm that keeps messages as they are (pi's role filter) lets the model see the
// transcript itself; once it drops or changes a message, every later request shows the
// converted list: what it returned, in order, and nothing it dropped.
func TestRunConvertToLlmIdentityThenFilter(t *testing.T) {
	convert := func(m *llm.Message) (llm.Message, bool) {
		switch {
		case m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "ui-only"):
			return llm.Message{}, false
		case m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "loud"):
			c := *m
			c.Content = []llm.Content{llm.Text(strings.ToUpper(m.Text()))}
			return c, true
		}
		return *m, true
	}
	prov := &recordingProvider{inner: llm.NewScript(
		calls(tc("c1", "echo", `{}`)),
		calls(tc("c2", "echo", `{}`)),
		calls(tc("c3", "echo", `{}`)),
		text("done"),
	)}
	steering := map[int][]llm.Message{2: {user("ui-only note")}, 3: {user("loud steer")}}
	cfg := &loop.Config{
		Provider: prov, Tools: activate(t, box(t, echoTool("echo", nil)), "echo"), ConvertToLlm: convert,
		Steering: func() []llm.Message { return steering[len(prov.requests())] },
	}
	res := loop.Run(context.Background(), cfg, []llm.Message{user("old")}, []llm.Message{user("hi")})
	if res.StopReason != llm.StopEnd {
		t.Fatalf("StopReason %q", res.StopReason)
	}
	want := [][]string{
		{"user old", "user hi"},
		{"user old", "user hi", "assistant toolUse", "toolResult c1"},
		{"user old", "user hi", "assistant toolUse", "toolResult c1", "assistant toolUse", "toolResult c2"},
		{"user old", "user hi", "assistant toolUse", "toolResult c1", "assistant toolUse", "toolResult c2", "assistant toolUse", "toolResult c3", "user LOUD STEER"},
	}
	if d := cmp.Diff(want, mapTags(prov.requests())); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

package toolexec_test

// Tests of ToolExecutionStart: sent exactly for the calls whose tool is executed, once, just
// before Execute, and never for calls that end during the prepare pass (R4-R8, R9, R13, R15,
// R17, C3).

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// R5 R6 R7 R8 R10: in both modes, a call gets ToolExecutionStart if and only if its tool
// executes (also when the tool then fails or panics), and exactly once; an unknown tool,
// arguments that fail prepareArguments or validation, a block by beforeToolCall and a
// panicking Resources end the call during the prepare pass without one. Every
// ToolExecutionStart follows its call's ToolStart and precedes the tool's execution, its
// updates and its ToolEnd (R9).
func TestExecutionStartOnlyForExecutedCalls(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			tool := toolexec.Tool{
				Name: "run", Parameters: json.RawMessage(pathSchema),
				PrepareArguments: func(args json.RawMessage) (json.RawMessage, error) {
					if strings.Contains(string(args), "shim") {
						return nil, errors.New("cannot rewrite")
					}
					return args, nil
				},
				Resources: func(c toolexec.Call) []string {
					if c.ID == "res" {
						panic("no resources")
					}
					return nil
				},
				Execute: func(ctx context.Context, c toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
					rec.mark("exec:" + c.ID)
					onUpdate(event.Result{Content: []llm.Content{llm.Text("working")}})
					switch c.ID {
					case "fails":
						return toolexec.Result{}, errors.New("broken")
					case "panics":
						panic("boom")
					}
					return toolexec.TextResult("ok"), nil
				},
			}
			before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
				if in.Call.ID == "blocked" {
					return &toolexec.Block{Reason: "no"}, nil
				}
				return nil, nil
			}
			calls := []llm.ToolCall{
				tc("ok1", "run", `{"path":"a"}`),
				tc("unknown", "nope", `{}`),
				tc("invalid", "run", `{"path":1}`),
				tc("shim", "run", `{"path":"shim"}`),
				tc("blocked", "run", `{"path":"b"}`),
				tc("fails", "run", `{"path":"c"}`),
				tc("panics", "run", `{"path":"d"}`),
				tc("ok2", "run", `{"path":"e"}`),
			}
			if mode == toolexec.Parallel {
				// Resources are asked in parallel mode only (C3).
				calls = append(calls, tc("res", "run", `{"path":"f"}`))
			}
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, Before: before, Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: active(t, tool)})

			executed := []string{"ok1", "fails", "panics", "ok2"}
			var runs, execs []string
			for _, s := range rec.Only("run") {
				runs = append(runs, strings.TrimPrefix(s, "run:"))
			}
			for _, s := range rec.Only("exec") {
				execs = append(execs, strings.TrimPrefix(s, "exec:"))
			}
			diff(t, "calls with a ToolExecutionStart", executed, runs)
			slices.Sort(execs)
			want := slices.Clone(executed)
			slices.Sort(want)
			diff(t, "calls executed", want, execs)

			log := rec.Log()
			for _, id := range executed {
				run, exec := indexOf(log, "run:"+id), indexOf(log, "exec:"+id)
				start, end, update := indexOf(log, "start:"+id), indexOf(log, "end:"+id), indexOf(log, "update:"+id)
				if !(start < run && run < exec && exec < update && update < end) {
					t.Errorf("%s: start %d, execution start %d, execute %d, update %d, end %d: want that order (log %v)", id, start, run, exec, update, end, log)
				}
			}
			if len(out.Messages) != len(calls) {
				t.Fatalf("%d results for %d calls", len(out.Messages), len(calls))
			}
			for _, m := range out.Messages {
				ok := m.ToolCallID == "ok1" || m.ToolCallID == "ok2"
				if m.IsError == ok || (ok && m.Text() != "ok") {
					t.Errorf("result of %s: error %v, %q", m.ToolCallID, m.IsError, m.Text())
				}
			}
		})
	}
}

// R15: in sequential mode ToolExecutionStart comes right before the call's tool runs, after
// its approval (beforeToolCall), within the call's whole pipeline, one call after the other.
func TestExecutionStartSequentialOrder(t *testing.T) {
	rec := &recorder{}
	tool := gatedTool("read", nil, func(id string) { rec.mark("exec:" + id) })
	before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		rec.mark("before:" + in.Call.ID)
		return nil, nil
	}
	toolexec.Run(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, Before: before, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`)},
		Tools: active(t, tool),
	})
	diff(t, "sequence", []string{
		"start:a", "before:a", "run:a", "exec:a", "end:a", "msgstart:a", "msgend:a",
		"start:b", "before:b", "run:b", "exec:b", "end:b", "msgstart:b", "msgend:b",
	}, rec.Log())
}

// R13 C3: in parallel mode the calls that can start at once get their ToolExecutionStart
// after the whole prepare pass, in source order, before any of them runs; a call waiting for
// a resource another call holds gets its own only once that call has ended, and no earlier.
func TestExecutionStartWaitsForResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"read": newGate(), "edit": newGate(), "other": newGate()}
		res := func(c toolexec.Call) []string { return []string{pathOf(c)} }
		tool := gatedTool("fs", gates, func(id string) { rec.mark("exec:" + id) })
		tool.Resources = res
		before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
			rec.mark("before:" + in.Call.ID)
			return nil, nil
		}
		done := runAsync(t.Context(), &toolexec.Config{Before: before, Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{
				tc("read", "fs", `{"path":"main.go"}`),
				tc("edit", "fs", `{"path":"main.go"}`),
				tc("other", "fs", `{"path":"util.go"}`),
			},
			Tools: active(t, tool),
		})
		synctest.Wait()
		log := rec.Log()
		diff(t, "prepare pass, then the calls that start at once", []string{
			"start:read", "before:read", "start:edit", "before:edit", "start:other", "before:other",
			"run:read", "run:other",
		}, log[:8])
		diff(t, "execution starts while read holds main.go", []string{"run:read", "run:other"}, rec.Only("run"))
		gates["other"].open()
		synctest.Wait()
		diff(t, "execution starts once other ended", []string{"run:read", "run:other"}, rec.Only("run"))
		gates["read"].open()
		synctest.Wait()
		got := rec.Only("run", "end")
		diff(t, "edit starts executing after read ended", []string{"run:read", "run:other", "end:other", "end:read", "run:edit"}, got)
		gates["edit"].open()
		<-done
		log = rec.Log()
		if indexOf(log, "run:edit") > indexOf(log, "exec:edit") {
			t.Errorf("edit executed before its ToolExecutionStart: %v", log)
		}
	})
}

// R17: after an abort no call starts executing: in parallel mode neither a prepared call
// that had not started nor one waiting for a resource gets a ToolExecutionStart, while the
// calls already running keep the one they had.
func TestExecutionStartNotAfterAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := &recorder{}
		gates := map[string]*gate{"holder": newGate()}
		tool := gatedTool("fs", gates, nil)
		tool.Resources = func(c toolexec.Call) []string { return []string{pathOf(c)} }
		done := runAsync(ctx, &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("holder", "fs", `{"path":"a"}`), tc("waiter", "fs", `{"path":"a"}`)},
			Tools: active(t, tool),
		})
		synctest.Wait()
		cancel()
		out := <-done
		diff(t, "execution starts", []string{"run:holder"}, rec.Only("run"))
		diff(t, "results", []msgSummary{{"holder", "fs", true, "Operation aborted"}, {"waiter", "fs", true, "Operation aborted"}}, summarize(out.Messages))
		checkLifecycle(t, rec.Log(), "holder", "waiter")
	})
	// Aborted during the prepare pass: nothing starts executing at all.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &recorder{}
	before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		if in.Call.ID == "b" {
			cancel()
		}
		return nil, nil
	}
	toolexec.Run(ctx, &toolexec.Config{Before: before, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`)},
		Tools: active(t, mustNotRun(t, "read", pathSchema)),
	})
	diff(t, "execution starts after an abort in the prepare pass", []string(nil), rec.Only("run"))
}

// R3: the calls of a message cut at the output-token limit never execute, so they get no
// ToolExecutionStart.
func TestExecutionStartNotForTruncated(t *testing.T) {
	rec := &recorder{}
	toolexec.RejectTruncated(&toolexec.Config{Emit: rec.sink}, []llm.ToolCall{tc("a", "read", `{"path":"1"}`)})
	diff(t, "events", []string{"start:a", "end:a", "msgstart:a", "msgend:a"}, rec.Log())
}

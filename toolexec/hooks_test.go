package toolexec_test

// Tests of beforeToolCall (R7), afterToolCall (R11) and their costs (C1, C2).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// R7: beforeToolCall may let a call go on (nil) or block it: the blocked call is an error
// result with the reason, or "Tool execution was blocked" without one; a block can ask to
// terminate. A blocked tool never runs and afterToolCall is not asked about it. The hook
// sees the assistant message, the call as written, the validated arguments and the context.
func TestBeforeHookBlock(t *testing.T) {
	var ran []string
	tool := toolexec.Tool{Name: "rm", Parameters: json.RawMessage(pathSchema),
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			ran = append(ran, c.ID)
			return toolexec.TextResult("removed " + pathOf(c)), nil
		}}
	history := []llm.Message{llm.NewUser("clean up")}
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{
		llm.NewToolCall("go", "rm", json.RawMessage(`{"path":"tmp"}`)),
		llm.NewToolCall("why", "rm", json.RawMessage(`{"path":"/etc"}`)),
		llm.NewToolCall("plain", "rm", json.RawMessage(`{"path":"/bin"}`)),
	}}
	before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		if in.Assistant != &asst || len(in.Context) != 1 || in.Context[0].Text() != "clean up" {
			t.Errorf("hook input: assistant %p context %v", in.Assistant, in.Context)
		}
		if in.Call.Name != "rm" || !json.Valid(in.Call.Arguments) {
			t.Errorf("hook saw call %+v", in.Call)
		}
		switch in.Args.(map[string]any)["path"] {
		case "/etc":
			return &toolexec.Block{Reason: "refusing to touch /etc"}, nil
		case "/bin":
			return &toolexec.Block{}, nil
		}
		return nil, nil
	}
	var afters []string
	after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		afters = append(afters, in.Call.ID)
		return nil, nil
	}
	rec := &recorder{}
	out := toolexec.Run(t.Context(), &toolexec.Config{Before: before, After: after, Emit: rec.sink}, toolexec.Batch{Assistant: &asst, Tools: active(t, tool), Context: history})
	diff(t, "results", []msgSummary{
		{"go", "rm", false, "removed tmp"},
		{"why", "rm", true, "refusing to touch /etc"},
		{"plain", "rm", true, "Tool execution was blocked"},
	}, summarize(out.Messages))
	diff(t, "tools run", []string{"go"}, ran)
	diff(t, "afterToolCall calls", []string{"go"}, afters)
	if out.Terminate {
		t.Error("terminate without any call asking")
	}
	if len(rec.Only("warn")) != 0 {
		t.Errorf("a block is not a failure, yet warnings %v", rec.Only("warn"))
	}

	// R7 R16: a block with terminate; every call blocked so -> terminate.
	stop := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		return &toolexec.Block{Reason: "done for today", Terminate: true}, nil
	}
	out = toolexec.Run(t.Context(), &toolexec.Config{Before: stop}, toolexec.Batch{Assistant: &asst, Tools: active(t, tool)})
	if !out.Terminate {
		t.Error("every call blocked with terminate, yet Terminate false")
	}
	diff(t, "terminating block", msgSummary{"go", "rm", true, "done for today"}, summarize(out.Messages)[0])
}

// R7 C2: a beforeToolCall that fails or panics yields an error result naming the hook, the
// tool and the cause, plus a Warning for the editor's log; the tool does not run, the batch
// goes on, and Run does not crash.
func TestBeforeHookFailure(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			tool := gatedTool("read", nil, func(id string) {
				if id != "ok" {
					t.Errorf("tool ran for %s", id)
				}
			})
			before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
				switch in.Call.ID {
				case "err":
					return &toolexec.Block{Reason: "ignored"}, errors.New("approval service unreachable")
				case "panic":
					var m map[string]int
					//lint:ignore SA5000 the hook must fail with a runtime panic, not a panic call
					m["x"] = 1 // assignment to entry in nil map
				}
				return nil, nil
			}
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, Before: before, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("err", "read", `{"path":"a"}`), tc("panic", "read", `{"path":"b"}`), tc("ok", "read", `{"path":"c"}`)},
				Tools: active(t, tool),
			})
			got := summarize(out.Messages)
			diff(t, "ok", msgSummary{"ok", "read", false, "read ok"}, got[2])
			for i, cause := range []string{"approval service unreachable", "assignment to entry in nil map"} {
				m := got[i]
				if !m.IsError {
					t.Errorf("%s: not an error result", m.ID)
				}
				for _, s := range []string{"beforeToolCall", "read", cause} {
					if !strings.Contains(m.Text, s) {
						t.Errorf("%s: result %q does not say %q", m.ID, m.Text, s)
					}
				}
				w := rec.warnings(m.ID)
				if len(w) != 1 || !strings.Contains(w[0], "beforeToolCall") || !strings.Contains(w[0], cause) {
					t.Errorf("%s: warnings %q, want one naming beforeToolCall and %q", m.ID, w, cause)
				}
			}
			checkLifecycle(t, rec.Log(), "err", "panic", "ok")
		})
	}
}

// R7: when the run is aborted while beforeToolCall waits (for a person's approval), the
// result is "Operation aborted" whatever the hook then answers, and the tool does not run.
func TestBeforeHookAbortWhileWaiting(t *testing.T) {
	answers := map[string]func() (*toolexec.Block, error){
		"go on":  func() (*toolexec.Block, error) { return nil, nil },
		"block":  func() (*toolexec.Block, error) { return &toolexec.Block{Reason: "no"}, nil },
		"error":  func() (*toolexec.Block, error) { return nil, errors.New("approval cancelled") },
		"ctxerr": func() (*toolexec.Block, error) { return nil, context.Canceled },
	}
	for name, answer := range answers {
		for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				rec := &recorder{}
				waiting := make(chan struct{})
				before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
					close(waiting)
					<-ctx.Done()
					return answer()
				}
				done := runAsync(ctx, &toolexec.Config{Mode: mode, Before: before, Emit: rec.sink}, toolexec.Batch{
					Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`)},
					Tools: active(t, mustNotRun(t, "read", pathSchema)),
				})
				<-waiting
				cancel()
				out := <-done
				diff(t, "result", []msgSummary{{"a", "read", true, "Operation aborted"}}, summarize(out.Messages))
				if !out.Aborted {
					t.Error("Aborted false")
				}
				checkLifecycle(t, rec.Log(), "a")
			})
		}
	}
}

// R11: afterToolCall's override replaces each field it sets, whole, and keeps each field it
// leaves unset; nothing is merged deeply. The ToolEnd event, the message and the outcome all
// carry the final result.
func TestAfterHookOverride(t *testing.T) {
	yes, no := true, false
	orig := []llm.Content{llm.Text("orig")}
	origDetails := map[string]any{"a": 1, "nested": map[string]any{"x": 1}}
	type final struct {
		Content   []llm.Content
		Details   any
		IsError   bool
		Terminate bool
	}
	cases := []struct {
		name     string
		toolErr  bool
		override *toolexec.Override
		want     final
	}{
		{"nil override keeps all", false, nil, final{orig, origDetails, false, false}},
		{"empty override keeps all", false, &toolexec.Override{}, final{orig, origDetails, false, false}},
		{"content only", false, &toolexec.Override{Content: []llm.Content{llm.Text("new")}}, final{[]llm.Content{llm.Text("new")}, origDetails, false, false}},
		{"empty content replaces", false, &toolexec.Override{Content: []llm.Content{}}, final{[]llm.Content{}, origDetails, false, false}},
		{"details only, no deep merge", false, &toolexec.Override{Details: map[string]any{"nested": map[string]any{"y": 2}}}, final{orig, map[string]any{"nested": map[string]any{"y": 2}}, false, false}},
		{"isError only", false, &toolexec.Override{IsError: &yes}, final{orig, origDetails, true, false}},
		{"terminate only", false, &toolexec.Override{Terminate: &yes}, final{orig, origDetails, false, true}},
		{"isError false on a failed call", true, &toolexec.Override{IsError: &no}, final{[]llm.Content{llm.Text("tool failed")}, nil, false, false}},
		{"all fields", false, &toolexec.Override{Content: []llm.Content{llm.Text("all")}, Details: "d", IsError: &yes, Terminate: &yes}, final{[]llm.Content{llm.Text("all")}, "d", true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolexec.Tool{Name: "t", Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
				if c.toolErr {
					return toolexec.Result{}, errors.New("tool failed")
				}
				return toolexec.Result{Content: []llm.Content{llm.Text("orig")}, Details: map[string]any{"a": 1, "nested": map[string]any{"x": 1}}}, nil
			}}
			var saw toolexec.AfterInput
			after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
				saw = in
				return c.override, nil
			}
			rec := &recorder{}
			out := toolexec.Run(t.Context(), &toolexec.Config{After: after, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("a", "t", `{"k":"v"}`)},
				Tools: active(t, tool),
			})
			if saw.IsError != c.toolErr || saw.Call.ID != "a" || saw.Args.(map[string]any)["k"] != "v" {
				t.Errorf("afterToolCall saw %+v", saw)
			}
			m := out.Messages[0]
			diff(t, "message", c.want, final{m.Content, m.Details, m.IsError, out.Terminate})
			end := rec.toolEnd(t, "a")
			diff(t, "ToolEnd", final{c.want.Content, c.want.Details, c.want.IsError, c.want.Terminate}, final{end.Result.Content, end.Result.Details, end.IsError, out.Terminate})
		})
	}
}

// R11 C2: an afterToolCall that fails or panics replaces the result with an error result
// naming the hook, the tool and the cause, and sends a Warning; the batch goes on.
func TestAfterHookFailure(t *testing.T) {
	tool := toolexec.Tool{Name: "t", Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return toolexec.Result{Content: []llm.Content{llm.Text("fine")}, Terminate: true}, nil
	}}
	after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		switch in.Call.ID {
		case "err":
			return &toolexec.Override{Content: []llm.Content{llm.Text("ignored")}}, errors.New("audit log full")
		case "panic":
			panic(fmt.Sprintf("bad override for %s", in.Call.ID))
		}
		return nil, nil
	}
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, After: after, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("err", "t", `{}`), tc("panic", "t", `{}`), tc("ok", "t", `{}`)},
				Tools: active(t, tool),
			})
			got := summarize(out.Messages)
			diff(t, "ok", msgSummary{"ok", "t", false, "fine"}, got[2])
			for i, cause := range []string{"audit log full", "bad override for panic"} {
				m := got[i]
				if !m.IsError {
					t.Errorf("%s: not an error result", m.ID)
				}
				for _, s := range []string{"afterToolCall", cause} {
					if !strings.Contains(m.Text, s) {
						t.Errorf("%s: result %q does not say %q", m.ID, m.Text, s)
					}
				}
				w := rec.warnings(m.ID)
				if len(w) != 1 || !strings.Contains(w[0], "afterToolCall") || !strings.Contains(w[0], cause) {
					t.Errorf("%s: warnings %q, want one naming afterToolCall and %q", m.ID, w, cause)
				}
			}
			if out.Terminate {
				t.Error("a failed hook's error result kept the tool's terminate")
			}
			checkLifecycle(t, rec.Log(), "err", "panic", "ok")
		})
	}
}

// R11: afterToolCall does not run for immediate outcomes (unknown tool, invalid arguments,
// failed prepareArguments, blocked, aborted before running); it runs for every executed
// call, failed or not.
func TestAfterHookNotForImmediateOutcomes(t *testing.T) {
	tool := toolexec.Tool{Name: "t", Parameters: json.RawMessage(pathSchema),
		PrepareArguments: func(args json.RawMessage) (json.RawMessage, error) {
			if strings.Contains(string(args), "shim") {
				return nil, errors.New("shim failed")
			}
			return args, nil
		},
		Execute: func(_ context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			if pathOf(c) == "fail" {
				return toolexec.Result{}, errors.New("failed")
			}
			return toolexec.TextResult("ok"), nil
		}}
	immediate := []llm.ToolCall{
		tc("unknown", "nope", `{}`),
		tc("invalid", "t", `{"path":1}`),
		tc("shim", "t", `{"path":"shim"}`),
		tc("blocked", "t", `{"path":"x"}`),
		tc("ran", "t", `{"path":"x"}`),
		tc("failed", "t", `{"path":"fail"}`),
	}
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
				switch in.Call.ID {
				case "blocked":
					return &toolexec.Block{}, nil
				case "stop":
					cancel()
				}
				return nil, nil
			}
			var mu sync.Mutex
			var afters []string
			after := func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
				mu.Lock()
				afters = append(afters, in.Call.ID)
				mu.Unlock()
				return nil, nil
			}
			calls := immediate
			if mode == toolexec.Sequential {
				// In sequential mode "ran" and "failed" have run before the abort.
				calls = append(slices.Clone(immediate), tc("stop", "t", `{"path":"x"}`), tc("aborted", "t", `{"path":"x"}`))
			}
			out := toolexec.Run(ctx, &toolexec.Config{Mode: mode, Before: before, After: after}, toolexec.Batch{Calls: calls, Tools: active(t, tool)})
			slices.Sort(afters)
			diff(t, "afterToolCall calls", []string{"failed", "ran"}, afters)
			if len(out.Messages) != len(calls) {
				t.Errorf("%d messages, want %d", len(out.Messages), len(calls))
			}
		})
	}
	// In parallel mode an abort during the prepare pass leaves prepared calls unrun: no
	// afterToolCall for them either.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		if in.Call.ID == "stop" {
			cancel()
		}
		return nil, nil
	}
	after := func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		t.Errorf("afterToolCall ran for %s after the abort", in.Call.ID)
		return nil, nil
	}
	toolexec.Run(ctx, &toolexec.Config{Before: before, After: after}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("prepared", "t", `{"path":"x"}`), tc("stop", "t", `{"path":"x"}`), tc("later", "t", `{"path":"x"}`)},
		Tools: active(t, tool),
	})
}

// C1: with no hook configured there is no hook cost: nil hooks are never called (calling
// one, even through the pipeline's panic guard, would turn every result into a hook
// failure and a Warning), and a batch without hooks allocates no more than the same batch
// with no-op hooks. BenchmarkBatch measures the cost with hooks.
func TestNoHooksNoCost(t *testing.T) {
	set := active(t, echoTool("read"))
	calls := []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("b", "read", `{"path":"y"}`)}
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		rec := &recorder{}
		out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})
		diff(t, "results without hooks", []msgSummary{{"a", "read", false, "read x"}, {"b", "read", false, "read y"}}, summarize(out.Messages))
		if w := rec.Only("warn"); len(w) != 0 {
			t.Errorf("%s: warnings without hooks: %v", mode, w)
		}
		// A nil Config and a nil Emit work too.
		if out := toolexec.Run(t.Context(), nil, toolexec.Batch{Calls: calls, Tools: set}); out.Messages[0].IsError {
			t.Errorf("nil config: %+v", summarize(out.Messages))
		}
	}

	before := func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) { return nil, nil }
	after := func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) { return nil, nil }
	ctx := context.Background()
	none := &toolexec.Config{Mode: toolexec.Sequential}
	hooks := &toolexec.Config{Mode: toolexec.Sequential, Before: before, After: after}
	batch := toolexec.Batch{Calls: calls, Tools: set}
	allocsNone := testing.AllocsPerRun(100, func() { toolexec.Run(ctx, none, batch) })
	allocsHooks := testing.AllocsPerRun(100, func() { toolexec.Run(ctx, hooks, batch) })
	t.Logf("allocations per 2-call batch: %v without hooks, %v with no-op hooks", allocsNone, allocsHooks)
	if allocsNone > allocsHooks {
		t.Errorf("a batch without hooks allocates more (%v) than one with no-op hooks (%v)", allocsNone, allocsHooks)
	}
}

// BenchmarkBatch measures a batch of four calls without hooks and with no-op hooks (C1), in
// both modes.
func BenchmarkBatch(b *testing.B) {
	set := active(b, echoTool("read"))
	calls := []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`), tc("c", "read", `{"path":"3"}`), tc("d", "read", `{"path":"4"}`)}
	before := func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) { return nil, nil }
	after := func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) { return nil, nil }
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		for _, h := range []struct {
			name   string
			before toolexec.BeforeHook
			after  toolexec.AfterHook
		}{{"no-hooks", nil, nil}, {"noop-hooks", before, after}} {
			b.Run(string(mode)+"/"+h.name, func(b *testing.B) {
				cfg := &toolexec.Config{Mode: mode, Before: h.before, After: h.after, Emit: func(event.Event) {}}
				batch := toolexec.Batch{Calls: calls, Tools: set}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					toolexec.Run(ctx, cfg, batch)
				}
			})
		}
	}
}

// R6 R7 R8: a tool's Check runs after validation and before beforeToolCall. A refusal is the
// call's error result in the tool's own words, and beforeToolCall is never asked about it; a
// call with invalid arguments is refused by validation before Check sees it; a panicking
// Check is an error result naming the tool; the other calls go on.
func TestCheckRefusesBeforeApproval(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			var checked, asked, ran []string
			tool := toolexec.Tool{Name: "rm", Parameters: json.RawMessage(pathSchema),
				Check: func(c toolexec.Call) error {
					checked = append(checked, c.ID)
					switch pathOf(c) {
					case "unread":
						return errors.New("unread exists but you have not read it")
					case "boom":
						panic("check exploded")
					}
					return nil
				},
				Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
					ran = append(ran, c.ID)
					return toolexec.TextResult("removed " + pathOf(c)), nil
				}}
			before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
				asked = append(asked, in.Call.ID)
				return nil, nil
			}
			asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{
				llm.NewToolCall("refused", "rm", json.RawMessage(`{"path":"unread"}`)),
				llm.NewToolCall("invalid", "rm", json.RawMessage(`{"path":"unread","extra":1}`)),
				llm.NewToolCall("panics", "rm", json.RawMessage(`{"path":"boom"}`)),
				llm.NewToolCall("ok", "rm", json.RawMessage(`{"path":"tmp"}`)),
			}}
			rec := &recorder{}
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, Before: before, Emit: rec.sink}, toolexec.Batch{Assistant: &asst, Tools: active(t, tool)})
			got := summarize(out.Messages)
			diff(t, "refused result", msgSummary{"refused", "rm", true, "unread exists but you have not read it"}, got[0])
			if !got[1].IsError || !strings.Contains(got[1].Text, "Validation failed") {
				t.Errorf("invalid call: %+v", got[1])
			}
			if !got[2].IsError || !strings.Contains(got[2].Text, "Tool rm: its check of the call failed") || !strings.Contains(got[2].Text, "check exploded") {
				t.Errorf("panicking check: %+v", got[2])
			}
			diff(t, "ok result", msgSummary{"ok", "rm", false, "removed tmp"}, got[3])
			diff(t, "checked", []string{"refused", "panics", "ok"}, checked)
			diff(t, "asked", []string{"ok"}, asked)
			diff(t, "ran", []string{"ok"}, ran)
			checkLifecycle(t, rec.Log(), "refused", "invalid", "panics", "ok")
		})
	}
}

package toolexec_test

// Tests of the batch as a whole: source order, mode, prepare pass, parallel and sequential
// execution, outcome and abort (R1, R2, R4, R5, R8, R13-R17, C3).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// editSchema requires a path and a non-empty array of {oldText,newText} edits.
const editSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "edits": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`

// mustNotRun returns a tool that fails the test if it ever executes.
func mustNotRun(t *testing.T, name, schema string) toolexec.Tool {
	return toolexec.Tool{
		Name:       name,
		Parameters: json.RawMessage(schema),
		Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
			t.Errorf("tool %s must not run", name)
			return toolexec.Result{}, nil
		},
	}
}

// TestMixedParallelBatch is the headline test: one parallel batch holding an unknown tool,
// invalid arguments, a call blocked by beforeToolCall and two runnable calls that finish in
// reverse order.
//
// R1 R4 R5 R6 R7 R8 R13 R14
func TestMixedParallelBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"r1": newGate(), "r2": newGate()}
		set := active(t,
			gatedTool("read", gates, nil),
			mustNotRun(t, "edit", editSchema),
			mustNotRun(t, "write", pathSchema),
		)
		before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
			rec.mark("before:" + in.Call.ID)
			if in.Call.Name == "write" {
				return &toolexec.Block{Reason: "writes need approval"}, nil
			}
			return nil, nil
		}
		calls := []llm.ToolCall{
			tc("u", "nope", `{"x":1}`),
			tc("v", "edit", `{"path":3}`),
			tc("w", "write", `{"path":"f"}`),
			tc("r1", "read", `{"path":"a"}`),
			tc("r2", "read", `{"path":"b"}`),
		}
		done := runAsync(t.Context(), &toolexec.Config{Before: before, Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: set})

		synctest.Wait()
		// The prepare pass is over; both runnable calls run at once, neither has ended.
		prepare := []string{
			"start:u", "end:u", // R5: unknown, ended during the prepare pass (R8)
			"start:v", "end:v", // R6: invalid arguments, no hook
			"start:w", "before:w", "end:w", // R7: blocked
			"start:r1", "before:r1",
			"start:r2", "before:r2",
			// R13: after the prepare pass, both runnable calls start executing, in source order
			"run:r1", "run:r2",
		}
		diff(t, "events of the prepare pass", prepare, rec.Log())
		if !gates["r1"].hasEntered() || !gates["r2"].hasEntered() {
			t.Fatalf("runnable calls did not both start: r1 %v r2 %v", gates["r1"].hasEntered(), gates["r2"].hasEntered())
		}

		gates["r2"].open() // the second call finishes first
		synctest.Wait()
		diff(t, "events after r2 finished", append(prepare[:len(prepare):len(prepare)], "end:r2"), rec.Log())
		gates["r1"].open()
		out := <-done

		want := append(prepare[:len(prepare):len(prepare)],
			"end:r2", "end:r1", // R13: completion order
			"results:u:v:w:r1:r2", "msgstart:u", "msgend:u", // R14: source order
			"msgstart:v", "msgend:v",
			"msgstart:w", "msgend:w",
			"msgstart:r1", "msgend:r1",
			"msgstart:r2", "msgend:r2",
		)
		diff(t, "event sequence", want, rec.Log())
		checkLifecycle(t, rec.Log(), "u", "v", "w", "r1", "r2")

		diff(t, "message ids", []string{"u", "v", "w", "r1", "r2"}, ids(out.Messages))
		got := summarize(out.Messages)
		diff(t, "unknown tool", msgSummary{"u", "nope", true, "Tool nope not found"}, got[0])
		diff(t, "blocked", msgSummary{"w", "write", true, "writes need approval"}, got[2])
		diff(t, "r1", msgSummary{"r1", "read", false, "read r1"}, got[3])
		diff(t, "r2", msgSummary{"r2", "read", false, "read r2"}, got[4])
		v := got[1]
		if !v.IsError || v.Name != "edit" {
			t.Errorf("invalid arguments: got %+v, want an error result of edit", v)
		}
		for _, s := range []string{`"edit"`, "/path", "edits", `"path": 3`} {
			if !strings.Contains(v.Text, s) {
				t.Errorf("validation message lacks %q:\n%s", s, v.Text)
			}
		}
		for _, id := range []string{"u", "v", "w"} {
			if e := rec.toolEnd(t, id); !e.IsError {
				t.Errorf("ToolEnd %s: IsError false", id)
			}
		}
		if out.Terminate || out.Aborted {
			t.Errorf("outcome: terminate %v aborted %v, want both false", out.Terminate, out.Aborted)
		}
	})
}

// R1: with Batch.Calls nil, the calls are the assistant message's toolCall blocks in source
// order, whatever blocks lie between them; hooks see that message.
func TestBatchIsAssistantCallsInSourceOrder(t *testing.T) {
	rec := &recorder{}
	asst := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Content{
		llm.Text("let me look"),
		llm.NewToolCall("z", "read", json.RawMessage(`{"path":"z"}`)),
		llm.Thinking("and also"),
		llm.NewToolCall("a", "read", json.RawMessage(`{"path":"a"}`)),
		llm.Text("and"),
		llm.NewToolCall("m", "read", json.RawMessage(`{"path":"m"}`)),
	}}
	var seen []string
	before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		if in.Assistant != &asst {
			t.Errorf("beforeToolCall saw assistant %p, want %p", in.Assistant, &asst)
		}
		seen = append(seen, in.Call.ID)
		return nil, nil
	}
	out := toolexec.Run(t.Context(), &toolexec.Config{Before: before, Emit: rec.sink},
		toolexec.Batch{Assistant: &asst, Tools: active(t, echoTool("read"))})
	order := []string{"z", "a", "m"}
	diff(t, "hook order", order, seen)
	diff(t, "start order", []string{"start:z", "start:a", "start:m"}, rec.Only("start"))
	diff(t, "message order", order, ids(out.Messages))
	diff(t, "texts", []string{"read z", "read a", "read m"}, []string{out.Messages[0].Text(), out.Messages[1].Text(), out.Messages[2].Text()})
}

// R2: the session's toolExecution "sequential" makes the batch sequential: with the first
// call held, the second has not even been started.
func TestSessionSequentialMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate(), "b": newGate()}
		set := active(t, gatedTool("read", gates, nil))
		done := runAsync(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, Emit: rec.sink},
			toolexec.Batch{Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("b", "read", `{"path":"y"}`)}, Tools: set})
		synctest.Wait()
		if gates["b"].hasEntered() {
			t.Fatal("b started while a was held")
		}
		diff(t, "events while a is held", []string{"start:a", "run:a"}, rec.Log())
		gates["a"].open()
		synctest.Wait()
		diff(t, "events while b is held", []string{"start:a", "run:a", "end:a", "msgstart:a", "msgend:a", "start:b", "run:b"}, rec.Log())
		gates["b"].open()
		out := <-done
		diff(t, "messages", []string{"a", "b"}, ids(out.Messages))
	})
}

// R2: one tool whose executionMode is "sequential" turns the whole batch sequential, even
// when it comes last and the session is parallel.
func TestOneSequentialToolMakesBatchSequential(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate(), "b": newGate(), "c": newGate()}
		bash := gatedTool("bash", gates, nil)
		bash.ExecutionMode = toolexec.Sequential
		set := active(t, gatedTool("read", gates, nil), bash)
		done := runAsync(t.Context(), &toolexec.Config{Mode: toolexec.Parallel, Emit: rec.sink},
			toolexec.Batch{Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("b", "read", `{"path":"y"}`), tc("c", "bash", `{"path":"z"}`)}, Tools: set})
		synctest.Wait()
		if gates["b"].hasEntered() || gates["c"].hasEntered() {
			t.Fatal("a later call started while a was held")
		}
		diff(t, "events while a is held", []string{"start:a", "run:a"}, rec.Log())
		gates["a"].open()
		synctest.Wait()
		if gates["c"].hasEntered() {
			t.Fatal("c started while b was held")
		}
		gates["b"].open()
		gates["c"].open()
		<-done
		diff(t, "event sequence", []string{
			"start:a", "run:a", "end:a", "msgstart:a", "msgend:a",
			"start:b", "run:b", "end:b", "msgstart:b", "msgend:b",
			"start:c", "run:c", "end:c", "msgstart:c", "msgend:c",
		}, rec.Log())
	})
}

// R2: by default (no session mode, no sequential tool called) a batch is parallel: both
// calls are running at once. A sequential tool that is known but not called changes nothing.
func TestDefaultModeIsParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate(), "b": newGate()}
		bash := echoTool("bash")
		bash.ExecutionMode = toolexec.Sequential
		set := active(t, gatedTool("read", gates, nil), bash)
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink},
			toolexec.Batch{Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("b", "read", `{"path":"y"}`)}, Tools: set})
		synctest.Wait()
		if !gates["a"].hasEntered() || !gates["b"].hasEntered() {
			t.Fatalf("parallel batch: a running %v, b running %v; want both", gates["a"].hasEntered(), gates["b"].hasEntered())
		}
		diff(t, "events while both are held", []string{"start:a", "start:b", "run:a", "run:b"}, rec.Log())
		gates["a"].open()
		gates["b"].open()
		<-done
	})
}

// R4: each call's ToolStart is sent before the call is prepared, also for a call that then
// fails validation; the prepare pass is serial and in source order.
func TestToolStartBeforePrepare(t *testing.T) {
	rec := &recorder{}
	tool := echoTool("read")
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		var a struct{ ID string }
		_ = json.Unmarshal(args, &a)
		rec.mark("prepare:" + a.ID)
		return json.RawMessage(strings.Replace(string(args), `"id":"`+a.ID+`",`, "", 1)), nil
	}
	before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		rec.mark("before:" + in.Call.ID)
		return nil, nil
	}
	calls := []llm.ToolCall{
		tc("a", "read", `{"id":"a","path":"x"}`),
		tc("b", "read", `{"id":"b","path":7}`), // fails validation after prepareArguments
		tc("c", "read", `{"id":"c","path":"z"}`),
	}
	toolexec.Run(t.Context(), &toolexec.Config{Before: before, Emit: rec.sink}, toolexec.Batch{Calls: calls, Tools: active(t, tool)})
	// The ends of a and c come after the prepare pass, in completion order: leave them out.
	var pass []string
	for _, s := range rec.Only("start", "prepare", "before", "end") {
		if s != "end:a" && s != "end:c" {
			pass = append(pass, s)
		}
	}
	diff(t, "prepare pass", []string{
		"start:a", "prepare:a", "before:a",
		"start:b", "prepare:b", "end:b",
		"start:c", "prepare:c", "before:c",
	}, pass)
}

// R5: a tool is looked up among the tools active at this point of the transcript: a tool the
// toolbox knows but that is not active is "not found", like a name nobody knows.
func TestLookupAmongActiveTools(t *testing.T) {
	box, err := toolexec.NewToolbox(echoTool("read"), mustNotRun(t, "secret", pathSchema))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := box.Activate("read")
	rec := &recorder{}
	after := func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		if in.Call.ID != "r" {
			t.Errorf("afterToolCall ran for %s, a tool that was not found", in.Call.Name)
		}
		return nil, nil
	}
	out := toolexec.Run(t.Context(), &toolexec.Config{After: after, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("s", "secret", `{"path":"x"}`), tc("g", "ghost", `{}`), tc("r", "read", `{"path":"x"}`)},
		Tools: set,
	})
	diff(t, "results", []msgSummary{
		{"s", "secret", true, "Tool secret not found"},
		{"g", "ghost", true, "Tool ghost not found"},
		{"r", "read", false, "read x"},
	}, summarize(out.Messages))
	// With no active set at all nothing is found.
	out = toolexec.Run(t.Context(), nil, toolexec.Batch{Calls: []llm.ToolCall{tc("r", "read", `{"path":"x"}`)}})
	diff(t, "no active set", []msgSummary{{"r", "read", true, "Tool read not found"}}, summarize(out.Messages))
}

// R8: an immediate outcome is finalized at once: its end event is sent during the prepare
// pass, before an earlier runnable call has ended, and it keeps its source position among
// the results.
func TestImmediateOutcomesEndDuringPrepare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate()}
		set := active(t, gatedTool("read", gates, nil), mustNotRun(t, "rm", pathSchema))
		before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
			if in.Call.Name == "rm" {
				return &toolexec.Block{}, nil
			}
			return nil, nil
		}
		done := runAsync(t.Context(), &toolexec.Config{Before: before, Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("x", "nope", `{}`), tc("y", "rm", `{"path":"/"}`), tc("z", "read", `{}`)},
			Tools: set,
		})
		synctest.Wait()
		// Only a executes: the immediate outcomes get no ToolExecutionStart.
		diff(t, "events while a is held", []string{"start:a", "start:x", "end:x", "start:y", "end:y", "start:z", "end:z", "run:a"}, rec.Log())
		gates["a"].open()
		out := <-done
		diff(t, "message order", []string{"a", "x", "y", "z"}, ids(out.Messages))
		diff(t, "blocked without reason", msgSummary{"y", "rm", true, "Tool execution was blocked"}, summarize(out.Messages)[2])
		checkLifecycle(t, rec.Log(), "a", "x", "y", "z")
	})
}

// R13: in parallel mode each call sends its end event the moment it finishes, so end events
// come in completion order, here c, a, b for calls written a, b, c.
// R14: the tool-result messages are still built and sent in source order, after every call
// has finished, and that order is the Outcome's.
func TestParallelEndsInCompletionOrderMessagesInSourceOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate(), "b": newGate(), "c": newGate()}
		set := active(t, gatedTool("read", gates, nil))
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`), tc("c", "read", `{"path":"3"}`)},
			Tools: set,
		})
		var ended []string
		for _, id := range []string{"c", "a", "b"} {
			synctest.Wait()
			if len(rec.Only("msgstart")) != 0 {
				t.Fatalf("a tool-result message was sent before every call finished: %v", rec.Log())
			}
			gates[id].open()
			synctest.Wait()
			ended = append(ended, "end:"+id)
			diff(t, "end events once "+id+" finished", ended, rec.Only("end"))
		}
		out := <-done
		diff(t, "event sequence", []string{
			"start:a", "start:b", "start:c",
			"run:a", "run:b", "run:c",
			"end:c", "end:a", "end:b",
			"results:a:b:c", "msgstart:a", "msgend:a", "msgstart:b", "msgend:b", "msgstart:c", "msgend:c",
		}, rec.Log())
		diff(t, "outcome order", []string{"a", "b", "c"}, ids(out.Messages))
		// The MessageStart/MessageEnd events carry the same messages as the outcome.
		var sent []string
		for _, ev := range rec.Events() {
			if m, ok := ev.(event.MessageEnd); ok {
				sent = append(sent, m.Message.ToolCallID+"="+m.Message.Text())
			}
		}
		diff(t, "sent messages", []string{"a=read a", "b=read b", "c=read c"}, sent)
	})
}

// R15: in sequential mode each call goes prepare, execute, finalize, end event, tool-result
// message before the next call begins.
func TestSequentialWholePipelinePerCall(t *testing.T) {
	rec := &recorder{}
	tool := gatedTool("read", nil, func(id string) { rec.mark("exec:" + id) })
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		rec.mark("prepare")
		return args, nil
	}
	before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		rec.mark("before:" + in.Call.ID)
		return nil, nil
	}
	after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		rec.mark("after:" + in.Call.ID)
		return nil, nil
	}
	out := toolexec.Run(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, Before: before, After: after, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("x", "nope", `{}`), tc("b", "read", `{"path":"2"}`)},
		Tools: active(t, tool),
	})
	diff(t, "pipeline", []string{
		"start:a", "prepare", "before:a", "run:a", "exec:a", "after:a", "end:a", "msgstart:a", "msgend:a",
		"start:x", "end:x", "msgstart:x", "msgend:x",
		"start:b", "prepare", "before:b", "run:b", "exec:b", "after:b", "end:b", "msgstart:b", "msgend:b",
	}, rec.Log())
	diff(t, "messages", []string{"a", "x", "b"}, ids(out.Messages))
}

// R15: with gates: in sequential mode the next call is not even started while the current
// one's tool runs, and starts right after the current one's tool-result message.
func TestSequentialNextCallWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"a": newGate(), "b": newGate()}
		done := runAsync(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`)},
			Tools: active(t, gatedTool("read", gates, nil)),
		})
		synctest.Wait()
		diff(t, "while a runs", []string{"start:a", "run:a"}, rec.Log())
		gates["a"].open()
		synctest.Wait()
		diff(t, "while b runs", []string{"start:a", "run:a", "end:a", "msgstart:a", "msgend:a", "start:b", "run:b"}, rec.Log())
		gates["b"].open()
		<-done
	})
}

// R16: terminate is true only when the batch is non-empty and every finalized result asked
// to terminate.
func TestTerminate(t *testing.T) {
	term := toolexec.Tool{Name: "done", Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return toolexec.Result{Content: []llm.Content{llm.Text("bye")}, Terminate: true}, nil
	}}
	set := active(t, term, echoTool("read"), mustNotRun(t, "stop", `{}`))
	blockStop := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		if in.Call.Name == "stop" {
			return &toolexec.Block{Reason: "stopping", Terminate: true}, nil
		}
		return nil, nil
	}
	cases := []struct {
		name  string
		mode  toolexec.Mode
		calls []llm.ToolCall
		want  bool
	}{
		{"empty batch", "", nil, false},
		{"one terminating", "", []llm.ToolCall{tc("1", "done", `{}`)}, true},
		{"all terminating", "", []llm.ToolCall{tc("1", "done", `{}`), tc("2", "done", `{}`)}, true},
		{"all terminating, sequential", toolexec.Sequential, []llm.ToolCall{tc("1", "done", `{}`), tc("2", "done", `{}`)}, true},
		{"blocked with terminate counts", "", []llm.ToolCall{tc("1", "done", `{}`), tc("2", "stop", `{}`)}, true},
		{"mixed", "", []llm.ToolCall{tc("1", "done", `{}`), tc("2", "read", `{"path":"x"}`)}, false},
		{"mixed, sequential", toolexec.Sequential, []llm.ToolCall{tc("1", "read", `{"path":"x"}`), tc("2", "done", `{}`)}, false},
		{"an immediate error does not terminate", "", []llm.ToolCall{tc("1", "done", `{}`), tc("2", "nope", `{}`)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: c.mode, Before: blockStop}, toolexec.Batch{Calls: c.calls, Tools: set})
			if out.Terminate != c.want {
				t.Errorf("Terminate = %v, want %v", out.Terminate, c.want)
			}
			if len(out.Messages) != len(c.calls) {
				t.Errorf("%d messages for %d calls", len(out.Messages), len(c.calls))
			}
		})
	}
	// An empty Batch with an assistant message that has no calls does not terminate either.
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("hi")}}
	if out := toolexec.Run(t.Context(), nil, toolexec.Batch{Assistant: &asst, Tools: set}); out.Terminate || len(out.Messages) != 0 {
		t.Errorf("batch without calls: %+v", out)
	}
}

// R17: abort in sequential mode: the call in progress finishes and keeps its result; the
// later calls get start, end and an "Operation aborted" message, but their tool never runs
// and no hook is asked about them.
func TestAbortSequential(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := &recorder{}
		running := newGate()
		var ran []string
		tool := toolexec.Tool{Name: "read", Parameters: json.RawMessage(pathSchema),
			PrepareArguments: func(args json.RawMessage) (json.RawMessage, error) { rec.mark("prepare"); return args, nil },
			Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				ran = append(ran, c.ID)
				running.hold() // finishes its work although the run is aborted meanwhile
				return toolexec.TextResult("read " + c.ID), nil
			}}
		var befores, afters []string
		before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
			befores = append(befores, in.Call.ID)
			return nil, nil
		}
		after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
			afters = append(afters, in.Call.ID)
			return nil, nil
		}
		done := runAsync(ctx, &toolexec.Config{Mode: toolexec.Sequential, Before: before, After: after, Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "read", `{"path":"2"}`), tc("c", "read", `{"path":"3"}`)},
			Tools: active(t, tool),
		})
		<-running.entered
		cancel()
		running.open()
		out := <-done

		if !out.Aborted {
			t.Error("Outcome.Aborted = false")
		}
		diff(t, "tools run", []string{"a"}, ran)
		diff(t, "beforeToolCall calls", []string{"a"}, befores)
		diff(t, "afterToolCall calls", []string{"a"}, afters)
		diff(t, "results", []msgSummary{
			{"a", "read", false, "read a"},
			{"b", "read", true, "Operation aborted"},
			{"c", "read", true, "Operation aborted"},
		}, summarize(out.Messages))
		diff(t, "events", []string{
			"start:a", "prepare", "run:a", "end:a", "msgstart:a", "msgend:a",
			// only a executed: b and c never get a ToolExecutionStart
			"start:b", "end:b", "msgstart:b", "msgend:b",
			"start:c", "end:c", "msgstart:c", "msgend:c",
		}, rec.Log())
		checkLifecycle(t, rec.Log(), "a", "b", "c")
	})
	goleak.VerifyNone(t)
}

// R17: abort in parallel mode during the prepare pass: call 2's beforeToolCall aborts the run.
// Call 1 was prepared but never runs; call 2 and call 3 are aborted, and call 3 is not even
// prepared. Every call still has one start, one end and one message.
func TestAbortParallelDuringPrepare(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &recorder{}
	var prepared, befores []string
	tool := mustNotRun(t, "read", pathSchema)
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		prepared = append(prepared, string(args))
		return args, nil
	}
	before := func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		befores = append(befores, in.Call.ID)
		if in.Call.ID == "2" {
			cancel() // the person pressed stop while approving call 2
		}
		return nil, nil
	}
	after := func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) {
		t.Error("afterToolCall ran for an aborted call")
		return nil, nil
	}
	out := toolexec.Run(ctx, &toolexec.Config{Before: before, After: after, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("1", "read", `{"path":"1"}`), tc("2", "read", `{"path":"2"}`), tc("3", "read", `{"path":"3"}`)},
		Tools: active(t, tool),
	})
	if !out.Aborted {
		t.Error("Outcome.Aborted = false")
	}
	diff(t, "prepared", []string{`{"path":"1"}`, `{"path":"2"}`}, prepared)
	diff(t, "beforeToolCall calls", []string{"1", "2"}, befores)
	diff(t, "results", []msgSummary{
		{"1", "read", true, "Operation aborted"},
		{"2", "read", true, "Operation aborted"},
		{"3", "read", true, "Operation aborted"},
	}, summarize(out.Messages))
	diff(t, "events", []string{
		"start:1", "start:2", "end:2", "start:3", "end:3", "end:1",
		"results:1:2:3", "msgstart:1", "msgend:1", "msgstart:2", "msgend:2", "msgstart:3", "msgend:3",
	}, rec.Log())
	checkLifecycle(t, rec.Log(), "1", "2", "3")
	goleak.VerifyNone(t)
}

// R17: abort while tools run in parallel: running tools see their cancellation signal; a
// result gathered before the abort is kept; a call waiting for a resource (C3) never runs.
func TestAbortParallelWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := &recorder{}
		gates := map[string]*gate{"slow1": newGate(), "slow2": newGate(), "fast": newGate()}
		var sawCancel atomic.Int32
		var ranLater atomic.Bool
		tool := toolexec.Tool{Name: "read", Parameters: json.RawMessage(pathSchema),
			Resources: func(c toolexec.Call) []string { return []string{pathOf(c)} },
			Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				g := gates[c.ID]
				if g == nil {
					ranLater.Store(true)
					return toolexec.TextResult("late"), nil
				}
				if err := g.wait(ctx); err != nil {
					sawCancel.Add(1)
					return toolexec.Result{}, err
				}
				return toolexec.TextResult("read " + c.ID), nil
			}}
		done := runAsync(ctx, &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{
				tc("slow1", "read", `{"path":"p"}`),
				tc("fast", "read", `{"path":"q"}`),
				tc("slow2", "read", `{"path":"r"}`),
				tc("later", "read", `{"path":"p"}`), // waits for slow1 (same path)
			},
			Tools: active(t, tool),
		})
		synctest.Wait()
		gates["fast"].open()
		synctest.Wait()
		cancel()
		out := <-done

		if !out.Aborted {
			t.Error("Outcome.Aborted = false")
		}
		if n := sawCancel.Load(); n != 2 {
			t.Errorf("%d running tools saw the cancellation, want 2", n)
		}
		if ranLater.Load() {
			t.Error("the call waiting for its resource ran after the abort")
		}
		diff(t, "results", []msgSummary{
			{"slow1", "read", true, "Operation aborted"},
			{"fast", "read", false, "read fast"},
			{"slow2", "read", true, "Operation aborted"},
			{"later", "read", true, "Operation aborted"},
		}, summarize(out.Messages))
		checkLifecycle(t, rec.Log(), "slow1", "fast", "slow2", "later")
	})
	goleak.VerifyNone(t)
}

// R17: a batch run with an already cancelled context prepares nothing and runs nothing, in
// both modes, yet every call has its start, end and message.
func TestAbortBeforeBatch(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			rec := &recorder{}
			tool := mustNotRun(t, "read", pathSchema)
			tool.PrepareArguments = func(json.RawMessage) (json.RawMessage, error) {
				t.Error("prepareArguments ran after the abort")
				return nil, errors.New("no")
			}
			before := func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) {
				t.Error("beforeToolCall ran after the abort")
				return nil, nil
			}
			out := toolexec.Run(ctx, &toolexec.Config{Mode: mode, Before: before, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("a", "read", `{"path":"1"}`), tc("b", "nope", `{}`)},
				Tools: active(t, tool),
			})
			if !out.Aborted || out.Terminate {
				t.Errorf("outcome: aborted %v terminate %v", out.Aborted, out.Terminate)
			}
			diff(t, "results", []msgSummary{{"a", "read", true, "Operation aborted"}, {"b", "nope", true, "Operation aborted"}}, summarize(out.Messages))
			checkLifecycle(t, rec.Log(), "a", "b")
		})
	}
}

// C3: calls that share a resource run in source order while the rest stay parallel. A read
// and an edit of one path: the edit does not start while the read is held, and starts only
// after the read ended; a read of another path completes while the first read is held.
func TestResourcesSerializeSamePath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"read": newGate(), "edit": newGate(), "other": newGate()}
		res := func(c toolexec.Call) []string { return []string{pathOf(c)} }
		read := gatedTool("read", gates, func(id string) { rec.mark("exec:" + id) })
		read.Resources = res
		edit := gatedTool("edit", gates, func(id string) { rec.mark("exec:" + id) })
		edit.Resources = res
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{
				tc("read", "read", `{"path":"main.go"}`),
				tc("edit", "edit", `{"path":"main.go"}`),
				tc("other", "read", `{"path":"util.go"}`),
			},
			Tools: active(t, read, edit),
		})
		synctest.Wait()
		if !gates["read"].hasEntered() || !gates["other"].hasEntered() {
			t.Fatalf("read running %v, other running %v: want both", gates["read"].hasEntered(), gates["other"].hasEntered())
		}
		if gates["edit"].hasEntered() {
			t.Fatal("the edit of main.go started while the read of main.go was held")
		}
		gates["other"].open() // the call on another path completes while the read is held
		synctest.Wait()
		if gates["edit"].hasEntered() {
			t.Fatal("the edit of main.go started while the read of main.go was held")
		}
		diff(t, "events with read held", []string{"start:read", "start:edit", "start:other", "end:other"}, rec.Only("start", "end"))
		gates["read"].open()
		synctest.Wait()
		if !gates["edit"].hasEntered() {
			t.Fatal("the edit did not start after the read ended")
		}
		gates["edit"].open()
		out := <-done
		execs := rec.Only("exec", "end")
		diff(t, "read ends before edit executes", true, indexOf(execs, "end:read") < indexOf(execs, "exec:edit"))
		diff(t, "end order", []string{"end:other", "end:read", "end:edit"}, rec.Only("end"))
		diff(t, "messages", []string{"read", "edit", "other"}, ids(out.Messages))
	})
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// C3: a chain on one resource keeps source order (read, edit, read of one path), a call
// declaring two resources waits for both, and a panicking Resources becomes an error result.
func TestResourcesChainAndPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"r1": newGate(), "e": newGate(), "r2": newGate(), "x": newGate(), "both": newGate()}
		tool := gatedTool("fs", gates, nil)
		tool.Resources = func(c toolexec.Call) []string {
			p := pathOf(c)
			if p == "boom" {
				panic("bad path")
			}
			return strings.Split(p, "+")
		}
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{
				tc("r1", "fs", `{"path":"a"}`),
				tc("e", "fs", `{"path":"a"}`),
				tc("x", "fs", `{"path":"b"}`),
				tc("r2", "fs", `{"path":"a"}`),
				tc("both", "fs", `{"path":"a+b"}`),
				tc("p", "fs", `{"path":"boom"}`),
			},
			Tools: active(t, tool),
		})
		// Each step: the set of calls running, then the call the test lets finish.
		steps := []struct {
			running []string
			release string
		}{
			{[]string{"r1", "x"}, "x"},
			{[]string{"r1"}, "r1"},
			{[]string{"e"}, "e"},
			{[]string{"r2"}, "r2"},
			{[]string{"both"}, "both"},
		}
		finished := map[string]bool{}
		for _, s := range steps {
			synctest.Wait()
			var running []string
			for _, id := range []string{"r1", "e", "x", "r2", "both"} {
				if gates[id].hasEntered() && !finished[id] {
					running = append(running, id)
				}
			}
			diff(t, "running before "+s.release+" finishes", s.running, running)
			gates[s.release].open()
			finished[s.release] = true
		}
		out := <-done
		diff(t, "end order", []string{"end:p", "end:x", "end:r1", "end:e", "end:r2", "end:both"}, rec.Only("end"))
		p := summarize(out.Messages)[5]
		if !p.IsError || !strings.Contains(p.Text, "bad path") {
			t.Errorf("panicking Resources: got %+v, want an error result with the panic", p)
		}
	})
}

// C3: without Resources declarations the behaviour is exactly R2: tools that would touch one
// path run in parallel, and a sequential session stays sequential even with declarations.
func TestNoResourcesIsR2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gates := map[string]*gate{"a": newGate(), "b": newGate()}
		done := runAsync(t.Context(), nil, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"same"}`), tc("b", "read", `{"path":"same"}`)},
			Tools: active(t, gatedTool("read", gates, nil)),
		})
		synctest.Wait()
		if !gates["a"].hasEntered() || !gates["b"].hasEntered() {
			t.Error("without Resources, calls on one path did not run in parallel")
		}
		gates["a"].open()
		gates["b"].open()
		<-done
	})
	synctest.Test(t, func(t *testing.T) {
		gates := map[string]*gate{"a": newGate(), "b": newGate()}
		tool := gatedTool("read", gates, nil)
		tool.Resources = func(c toolexec.Call) []string { return []string{c.ID} } // all different
		done := runAsync(t.Context(), &toolexec.Config{Mode: toolexec.Sequential}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "read", `{"path":"x"}`), tc("b", "read", `{"path":"y"}`)},
			Tools: active(t, tool),
		})
		synctest.Wait()
		if gates["b"].hasEntered() {
			t.Error("a sequential session ran calls with distinct resources in parallel")
		}
		gates["a"].open()
		synctest.Wait()
		gates["b"].open()
		<-done
	})
}

// C3: a call that names one resource twice (a move within one file, a tool that lists a path
// twice) does not wait for itself, and still waits for an earlier call on that resource.
func TestResourcesNamedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		gates := map[string]*gate{"first": newGate(), "twice": newGate()}
		tool := gatedTool("mv", gates, nil)
		tool.Resources = func(c toolexec.Call) []string { return strings.Split(pathOf(c), "+") }
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("first", "mv", `{"path":"a"}`), tc("twice", "mv", `{"path":"a+b+a"}`), tc("alone", "mv", `{"path":"c+c"}`)},
			Tools: active(t, tool),
		})
		synctest.Wait()
		if gates["twice"].hasEntered() {
			t.Fatal("twice started while first held a")
		}
		gates["first"].open()
		synctest.Wait()
		if !gates["twice"].hasEntered() {
			t.Fatal("twice did not start after first ended")
		}
		gates["twice"].open()
		out := <-done
		diff(t, "results", []msgSummary{{"first", "mv", false, "mv first"}, {"twice", "mv", false, "mv twice"}, {"alone", "mv", false, "mv alone"}}, summarize(out.Messages))
		diff(t, "end order", []string{"end:alone", "end:first", "end:twice"}, rec.Only("end"))
	})
}

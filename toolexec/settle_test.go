package toolexec_test

// R18: Settle, the step the calls of tools sharing it wait for together once they have all
// executed, before afterToolCall and ToolEnd.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// settleRecorder is a Settle that records its runs (the call ids of each) and adds
// "settled" to each result.
type settleRecorder struct {
	mu   sync.Mutex
	runs [][]string
	rec  *recorder
}

func (s *settleRecorder) settle() *toolexec.Settle {
	return &toolexec.Settle{Run: func(ctx context.Context, in []toolexec.SettleInput) []*toolexec.Override {
		var ids []string
		out := make([]*toolexec.Override, len(in))
		for i, c := range in {
			ids = append(ids, c.Call.ID)
			content := append(append([]llm.Content(nil), c.Result.Content...), llm.Text("settled with "+fmt.Sprint(len(in))))
			out[i] = &toolexec.Override{Content: content, Details: map[string]any{"settled": true}}
		}
		s.mu.Lock()
		s.runs = append(s.runs, ids)
		s.mu.Unlock()
		if s.rec != nil {
			s.rec.mark("settle:" + strings.Join(ids, ","))
		}
		return out
	}}
}

func (s *settleRecorder) Runs() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.runs...)
}

// R18 R13 R14: in parallel mode the calls of the tools sharing a Settle wait for each other:
// Settle runs once, after the last of them executed, with those that succeeded in source
// order; only then does each get its afterToolCall and ToolEnd. A call of another tool ends
// as soon as it finishes; a failed call of the group is waited for but not settled. The
// messages keep source order.
func TestSettleOncePerBatchAfterEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		sr := &settleRecorder{rec: rec}
		st := sr.settle()
		gates := map[string]*gate{"e1": newGate(), "w1": newGate(), "r1": newGate(), "e2": newGate()}
		edit := gatedTool("edit", gates, nil)
		edit.Settle = st
		write := gatedTool("write", gates, nil)
		write.Settle = st
		failing := toolexec.Tool{Name: "edit2", Parameters: json.RawMessage(pathSchema), Settle: st,
			Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				if err := gates[c.ID].wait(ctx); err != nil {
					return toolexec.Result{}, err
				}
				return toolexec.Result{}, fmt.Errorf("no match")
			}}
		var afterSaw sync.Map
		after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
			rec.mark("after:" + in.Call.ID)
			m := llm.Message{Content: in.Result.Content}
			afterSaw.Store(in.Call.ID, m.Text())
			return nil, nil
		}
		done := runAsync(t.Context(), &toolexec.Config{After: after, Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("e1", "edit", `{"path":"a"}`), tc("r1", "read", `{"path":"b"}`), tc("w1", "write", `{"path":"c"}`), tc("e2", "edit2", `{"path":"d"}`)},
			Tools: active(t, edit, write, failing, gatedTool("read", gates, nil)),
		})
		gates["w1"].open()
		synctest.Wait()
		gates["e1"].open()
		synctest.Wait()
		if got := rec.Only("end", "settle"); len(got) != 0 {
			t.Fatalf("a call of the group ended, or Settle ran, while e2 still executes: %v", got)
		}
		gates["r1"].open()
		synctest.Wait()
		diff(t, "the read ends alone", []string{"end:r1"}, rec.Only("end", "settle"))
		gates["e2"].open()
		out := <-done
		if runs := sr.Runs(); len(runs) != 1 || strings.Join(runs[0], ",") != "e1,w1" {
			t.Fatalf("Settle runs = %v, want one run over e1,w1 (source order, the failed e2 left out)", runs)
		}
		log := rec.Log()
		at := func(s string) int {
			for i, x := range log {
				if x == s {
					return i
				}
			}
			t.Fatalf("%s not in %v", s, log)
			return -1
		}
		for _, id := range []string{"e1", "w1", "e2"} {
			if at("settle:e1,w1") > at("after:"+id) || at("after:"+id) > at("end:"+id) {
				t.Errorf("call %s: want settle < after < end, log %v", id, log)
			}
		}
		diff(t, "messages", []msgSummary{
			{"e1", "edit", false, "edit e1settled with 2"},
			{"r1", "read", false, "read r1"},
			{"w1", "write", false, "write w1settled with 2"},
			{"e2", "edit2", true, "no match"},
		}, summarize(out.Messages))
		if v, _ := afterSaw.Load("w1"); v != "write w1settled with 2" {
			t.Errorf("afterToolCall saw %q, want the settled result", v)
		}
		if d := rec.toolEnd(t, "e1").Result.Details; fmt.Sprint(d) != "map[settled:true]" {
			t.Errorf("ToolEnd details = %v, want the settled ones", d)
		}
		checkLifecycle(t, log, "e1", "r1", "w1", "e2")
	})
}

// R18 C3: two calls of the group on one resource run in source order; the first releases
// the second as soon as it executed (not after its ToolEnd, which waits for the group):
// no deadlock, and one Settle over both.
func TestSettleWithSharedResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		sr := &settleRecorder{}
		edit := gatedTool("edit", nil, func(id string) { rec.mark("exec:" + id) })
		edit.Settle = sr.settle()
		edit.Resources = func(c toolexec.Call) []string { return []string{pathOf(c)} }
		out := toolexec.Run(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "edit", `{"path":"x"}`), tc("b", "edit", `{"path":"x"}`)},
			Tools: active(t, edit),
		})
		diff(t, "executions", []string{"exec:a", "exec:b"}, rec.Only("exec"))
		diff(t, "settle runs", [][]string{{"a", "b"}}, sr.Runs())
		diff(t, "texts", []string{"edit asettled with 2", "edit bsettled with 2"}, []string{out.Messages[0].Text(), out.Messages[1].Text()})
	})
}

// R18 R15: in sequential mode each call settles alone, right after it executed and before
// its afterToolCall.
func TestSettleSequentialPerCall(t *testing.T) {
	rec := &recorder{}
	sr := &settleRecorder{rec: rec}
	edit := gatedTool("edit", nil, nil)
	edit.Settle = sr.settle()
	after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		rec.mark("after:" + in.Call.ID)
		return nil, nil
	}
	toolexec.Run(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, After: after, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("a", "edit", `{"path":"x"}`), tc("b", "edit", `{"path":"y"}`)},
		Tools: active(t, edit),
	})
	diff(t, "log", []string{"settle:a", "after:a", "end:a", "settle:b", "after:b", "end:b"}, rec.Only("settle", "after", "end"))
}

// R18 R17: an abort while a call of the group waits for the others: Settle never runs, the
// executed call keeps its own result, the other is aborted, each ends once.
func TestSettleAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		sr := &settleRecorder{}
		gates := map[string]*gate{"b": newGate()}
		edit := gatedTool("edit", gates, nil)
		edit.Settle = sr.settle()
		ctx, cancel := context.WithCancel(t.Context())
		done := runAsync(ctx, &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "edit", `{"path":"x"}`), tc("b", "edit", `{"path":"y"}`)},
			Tools: active(t, edit),
		})
		synctest.Wait()
		if got := rec.Only("end"); len(got) != 0 {
			t.Fatalf("a ended before b executed: %v", got)
		}
		cancel()
		out := <-done
		if len(sr.Runs()) != 0 {
			t.Errorf("Settle ran after the abort: %v", sr.Runs())
		}
		diff(t, "messages", []msgSummary{{"a", "edit", false, "edit a"}, {"b", "edit", true, "Operation aborted"}}, summarize(out.Messages))
		checkLifecycle(t, rec.Log(), "a", "b")
	})
}

// R18 C2: a Settle that panics keeps the results and says so in a Warning.
func TestSettlePanics(t *testing.T) {
	rec := &recorder{}
	edit := echoTool("edit")
	edit.Settle = &toolexec.Settle{Run: func(context.Context, []toolexec.SettleInput) []*toolexec.Override { panic("boom") }}
	out := toolexec.Run(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{tc("a", "edit", `{"path":"x"}`), tc("b", "edit", `{"path":"y"}`)},
		Tools: active(t, edit),
	})
	diff(t, "messages", []msgSummary{{"a", "edit", false, "edit x"}, {"b", "edit", false, "edit y"}}, summarize(out.Messages))
	if w := rec.warnings("a"); len(w) != 1 || !strings.Contains(w[0], "boom") {
		t.Errorf("warnings = %v, want one naming the panic", w)
	}
}

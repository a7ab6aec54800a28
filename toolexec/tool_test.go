package toolexec_test

// Tests of what happens to one call: truncated messages (R3), argument preparation and
// validation (R6), progress updates (R9), failing tools (R10) and activated tools (R12).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// R3: the calls of a message cut off by the output-token limit are not run: each gets a
// start, an end and an error result asking the model to send the change in smaller parts
// (the same call would be cut again: issue 32); no hook runs, and the outcome neither terminates nor aborts (the loop goes on).
func TestRejectTruncated(t *testing.T) {
	rec := &recorder{}
	cfg := &toolexec.Config{
		Emit: rec.sink,
		Before: func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) {
			t.Error("beforeToolCall ran for a truncated call")
			return nil, nil
		},
		After: func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) {
			t.Error("afterToolCall ran for a truncated call")
			return nil, nil
		},
	}
	out := toolexec.RejectTruncated(cfg, []llm.ToolCall{tc("a", "edit", `{"path":"x","edits":[{"oldT`), tc("b", "read", ``)})
	checkLifecycle(t, rec.Log(), "a", "b")
	diff(t, "messages", []string{"a", "b"}, ids(out.Messages))
	for _, m := range out.Messages {
		text := m.Text()
		if !m.IsError || m.Role != llm.RoleToolResult {
			t.Errorf("%s: role %s isError %v, want an error tool result", m.ToolCallID, m.Role, m.IsError)
		}
		for _, s := range []string{m.ToolName, "output-token limit", "smaller parts", "edit in steps"} {
			if !strings.Contains(text, s) {
				t.Errorf("%s: result %q lacks %q", m.ToolCallID, text, s)
			}
		}
		if strings.Contains(text, "again with complete arguments") {
			t.Errorf("%s: result %q asks for the same call again, which would be cut the same way", m.ToolCallID, text)
		}
	}
	if out.Terminate || out.Aborted {
		t.Errorf("outcome: terminate %v aborted %v, want both false so the loop asks the model again", out.Terminate, out.Aborted)
	}
	// Every ToolEnd is an error too.
	for _, id := range []string{"a", "b"} {
		if !rec.toolEnd(t, id).IsError {
			t.Errorf("ToolEnd %s not an error", id)
		}
	}
	// With no config at all it works the same.
	if out := toolexec.RejectTruncated(nil, []llm.ToolCall{tc("c", "x", `{`)}); len(out.Messages) != 1 || !out.Messages[0].IsError {
		t.Errorf("nil config: %+v", out)
	}
}

// upgradeEdit is the compatibility shim of R6: an old {path,oldText,newText} edit becomes
// {path,edits:[{oldText,newText}]}; arguments already in the new shape pass unchanged.
func upgradeEdit(args json.RawMessage) (json.RawMessage, error) {
	var old struct {
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText *string `json:"newText"`
	}
	if err := json.Unmarshal(args, &old); err != nil || old.OldText == nil || old.NewText == nil {
		return args, nil
	}
	type edit struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	}
	return json.Marshal(struct {
		Path  string `json:"path"`
		Edits []edit `json:"edits"`
	}{old.Path, []edit{{*old.OldText, *old.NewText}}})
}

// R6: prepareArguments rewrites the raw arguments before validation, so an old shape that
// the schema rejects is accepted and the tool and the hooks see the new shape.
func TestPrepareArgumentsRewritesOldShape(t *testing.T) {
	rec := &recorder{}
	var got []string
	edit := toolexec.Tool{
		Name:             "edit",
		Parameters:       json.RawMessage(editSchema),
		PrepareArguments: upgradeEdit,
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path  string
				Edits []struct{ OldText, NewText string }
			}
			if err := c.Decode(&a); err != nil {
				return toolexec.Result{}, err
			}
			got = append(got, fmt.Sprintf("%s:%s:%+v", c.ID, a.Path, a.Edits))
			return toolexec.TextResult("edited"), nil
		},
	}
	var hookArgs []any
	before := func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		hookArgs = append(hookArgs, in.Args)
		return nil, nil
	}
	oldShape := `{"path":"a.go","oldText":"x","newText":"y"}`
	out := toolexec.Run(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, Before: before, Emit: rec.sink}, toolexec.Batch{
		Calls: []llm.ToolCall{
			tc("old", "edit", oldShape),
			tc("new", "edit", `{"path":"b.go","edits":[{"oldText":"p","newText":"q"}]}`),
		},
		Tools: active(t, edit),
	})
	diff(t, "results", []msgSummary{{"old", "edit", false, "edited"}, {"new", "edit", false, "edited"}}, summarize(out.Messages))
	diff(t, "tool saw", []string{"old:a.go:[{OldText:x NewText:y}]", "new:b.go:[{OldText:p NewText:q}]"}, got)
	// The hook sees the validated, rewritten arguments.
	m, ok := hookArgs[0].(map[string]any)
	if !ok || m["edits"] == nil || m["oldText"] != nil {
		t.Errorf("beforeToolCall saw %#v, want the rewritten arguments", hookArgs[0])
	}
	// The ToolStart event shows the call as the model wrote it.
	if s, ok := rec.Events()[0].(event.ToolStart); !ok || string(s.Args) != oldShape {
		t.Errorf("first event %#v, want ToolStart with the raw arguments", rec.Events()[0])
	}
	// Without the shim the old shape fails validation, naming the missing field.
	plain := edit
	plain.PrepareArguments = nil
	out = toolexec.Run(t.Context(), nil, toolexec.Batch{Calls: []llm.ToolCall{tc("old", "edit", oldShape)}, Tools: active(t, plain)})
	if r := out.Messages[0]; !r.IsError || !strings.Contains(r.Text(), "edits") {
		t.Errorf("old shape without shim: %+v", summarize(out.Messages))
	}
}

// R6: a validation failure names every failing field and shows the arguments received; the
// tool does not run. Also for arguments that are not JSON, and for a failing or panicking
// prepareArguments.
func TestValidationNamesEveryField(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"}},"required":["path","count"]}`
	tool := mustNotRun(t, "grep", schema)
	shim := mustNotRun(t, "shim", `{}`)
	shim.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		if strings.Contains(string(args), "panic") {
			panic("shim exploded")
		}
		return nil, errors.New("cannot upgrade")
	}
	after := func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) {
		t.Error("afterToolCall ran for an invalid call")
		return nil, nil
	}
	out := toolexec.Run(t.Context(), &toolexec.Config{After: after}, toolexec.Batch{
		Calls: []llm.ToolCall{
			tc("types", "grep", `{"path":1,"count":"many"}`),
			tc("missing", "grep", `{"pattern":"x"}`),
			tc("notjson", "grep", `{"path":`),
			tc("shimerr", "shim", `{}`),
			tc("shimpanic", "shim", `{"panic":true}`),
		},
		Tools: active(t, tool, shim),
	})
	want := map[string][]string{
		"types":     {`"grep"`, "/path", "/count", "string", "integer", `"path": 1`, `"count": "many"`},
		"missing":   {`"grep"`, "'path'", "'count'", `"pattern": "x"`},
		"notjson":   {"grep", "not valid JSON", `{"path":`},
		"shimerr":   {"shim", "prepareArguments", "cannot upgrade"},
		"shimpanic": {"shim", "prepareArguments", "shim exploded"},
	}
	for _, m := range out.Messages {
		if !m.IsError {
			t.Errorf("%s: not an error result", m.ToolCallID)
		}
		for _, s := range want[m.ToolCallID] {
			if !strings.Contains(m.Text(), s) {
				t.Errorf("%s: result lacks %q:\n%s", m.ToolCallID, s, m.Text())
			}
		}
	}
	diff(t, "messages", []string{"types", "missing", "notjson", "shimerr", "shimpanic"}, ids(out.Messages))
}

// R6: the arguments of a failed validation are quoted only as far as a few KB, and only the
// first failing fields are listed: 1 MB of nested arguments with 5,000 failing items made an
// error of 100 MB (each line indented by its depth), all of it sent back to the model.
func TestValidationQuotesAFewKB(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"type":"string"},"list":{"type":"array","items":{"type":"integer"}}}}`
	var b strings.Builder
	b.WriteString(`{"list":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x"`)
	}
	b.WriteString(`],"path":`)
	const depth = 300
	for range depth {
		b.WriteString(`{"a":[`)
	}
	for b.Len() < 1<<20 {
		b.WriteString(`{"k":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"},`)
	}
	b.WriteString(`1`)
	for range depth {
		b.WriteString(`]}`)
	}
	b.WriteString(`}`)
	args := b.String()
	out := toolexec.Run(t.Context(), nil, toolexec.Batch{
		Calls: []llm.ToolCall{tc("big", "grep", args)},
		Tools: active(t, mustNotRun(t, "grep", schema)),
	})
	got := out.Messages[0].Text()
	if !out.Messages[0].IsError || len(got) > 8<<10 {
		t.Fatalf("the error of %d bytes of bad arguments is %d bytes (isError %v), want at most 8 KB", len(args), len(got), out.Messages[0].IsError)
	}
	for _, want := range []string{`Validation failed for tool "grep"`, "/list/0: ", "and 4981 more", args[:100], fmt.Sprintf("(%d bytes in all; only the first 2048 are quoted here)", len(args))} {
		if !strings.Contains(got, want) {
			t.Errorf("the error lacks %q:\n%s", want, got)
		}
	}
}

// R9: every onUpdate of a running tool sends a ToolUpdate with its partial result, and every
// update of a call comes before that call's end, while updates of parallel calls interleave.
func TestUpdatesBeforeEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		ga, gb1, gb2 := newGate(), newGate(), newGate()
		tool := toolexec.Tool{Name: "run", Execute: func(ctx context.Context, c toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			up := func(s string) { onUpdate(event.Result{Content: []llm.Content{llm.Text(s)}}) }
			switch c.ID {
			case "a":
				up("a-1")
				ga.hold()
				up("a-2")
			case "b":
				gb1.hold()
				go up("b-1") // from another goroutine, before Execute returns
				gb2.hold()
			}
			return toolexec.TextResult(c.ID + " done"), nil
		}}
		done := runAsync(t.Context(), &toolexec.Config{Emit: rec.sink}, toolexec.Batch{
			Calls: []llm.ToolCall{tc("a", "run", `{}`), tc("b", "run", `{}`)},
			Tools: active(t, tool),
		})
		synctest.Wait()
		diff(t, "first", []string{"start:a", "start:b", "run:a", "run:b", "update:a"}, rec.Log())
		gb1.open()
		synctest.Wait()
		diff(t, "second", []string{"start:a", "start:b", "run:a", "run:b", "update:a", "update:b"}, rec.Log())
		ga.open()
		synctest.Wait()
		gb2.open()
		<-done
		diff(t, "event sequence", []string{
			"start:a", "start:b", "run:a", "run:b", "update:a", "update:b", "update:a", "end:a", "end:b",
			"results:a:b", "msgstart:a", "msgend:a", "msgstart:b", "msgend:b",
		}, rec.Log())
		var partials []string
		for _, ev := range rec.Events() {
			if u, ok := ev.(event.ToolUpdate); ok {
				if u.ToolName != "run" || string(u.Args) != `{}` {
					t.Errorf("update %+v: wrong tool or args", u)
				}
				partials = append(partials, u.ToolCallID+"="+u.Partial.Content[0].Text)
			}
		}
		diff(t, "partials", []string{"a=a-1", "b=b-1", "a=a-2"}, partials)
	})
}

// R9: onUpdate calls made after Execute returned are dropped (tool.go's contract), both while
// the call is being finalized and after its end, so no update ever follows the end event.
func TestLateUpdatesDropped(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			var leaked func(event.Result)
			tool := toolexec.Tool{Name: "run", Execute: func(ctx context.Context, c toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
				onUpdate(event.Result{Content: []llm.Content{llm.Text("in time")}})
				leaked = onUpdate // as a goroutine the tool forgot would
				return toolexec.TextResult("ok"), nil
			}}
			after := func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) {
				leaked(event.Result{Content: []llm.Content{llm.Text("during finalize")}})
				return nil, nil
			}
			toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, After: after, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("a", "run", `{}`)},
				Tools: active(t, tool),
			})
			leaked(event.Result{Content: []llm.Content{llm.Text("after the batch")}})
			diff(t, "events", []string{"start:a", "run:a", "update:a", "end:a", "msgstart:a", "msgend:a"}, rec.Log())
		})
	}
}

// R10: a tool that returns an error or panics yields an isError result carrying the error
// text, and the batch goes on with the other calls, in both modes.
func TestToolErrorAndPanic(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			var afterSaw []string
			tool := toolexec.Tool{Name: "sh", Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				switch c.ID {
				case "err":
					return toolexec.TextResult("ignored"), errors.New("disk full")
				case "panic":
					panic("index out of range [3]")
				}
				return toolexec.TextResult("fine"), nil
			}}
			after := func(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
				afterSaw = append(afterSaw, fmt.Sprintf("%s:%v", in.Call.ID, in.IsError))
				return nil, nil
			}
			out := toolexec.Run(t.Context(), &toolexec.Config{Mode: mode, Emit: rec.sink}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("err", "sh", `{}`), tc("panic", "sh", `{}`), tc("ok", "sh", `{}`)},
				Tools: active(t, tool),
			})
			got := summarize(out.Messages)
			diff(t, "error result", msgSummary{"err", "sh", true, "disk full"}, got[0])
			diff(t, "ok result", msgSummary{"ok", "sh", false, "fine"}, got[2])
			if p := got[1]; !p.IsError || !strings.Contains(p.Text, "index out of range [3]") || !strings.Contains(p.Text, "sh") {
				t.Errorf("panic result: %+v", p)
			}
			if !rec.toolEnd(t, "panic").IsError || !rec.toolEnd(t, "err").IsError || rec.toolEnd(t, "ok").IsError {
				t.Error("ToolEnd IsError flags wrong")
			}
			checkLifecycle(t, rec.Log(), "err", "panic", "ok")

			// afterToolCall sees the failed calls as errors (they executed).
			toolexec.Run(t.Context(), &toolexec.Config{Mode: toolexec.Sequential, After: after}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("err", "sh", `{}`), tc("panic", "sh", `{}`), tc("ok", "sh", `{}`)},
				Tools: active(t, tool),
			})
			diff(t, "afterToolCall saw", []string{"err:true", "panic:true", "ok:false"}, afterSaw)
		})
	}
}

// R12: ActiveSet.With returns a new set with the named tools added and leaves the receiver
// unchanged; unknown names are returned; adding nothing returns the receiver.
func TestActiveSetWith(t *testing.T) {
	box, err := toolexec.NewToolbox(echoTool("read"), echoTool("grep"), echoTool("edit"))
	if err != nil {
		t.Fatal(err)
	}
	base, unknown := box.Activate("edit", "read")
	if len(unknown) != 0 {
		t.Fatal(unknown)
	}
	diff(t, "base", []string{"read", "edit"}, base.Names()) // toolbox order
	more, unknown := base.With([]string{"grep", "nosuch", "read"})
	diff(t, "unknown", []string{"nosuch"}, unknown)
	diff(t, "with grep", []string{"read", "grep", "edit"}, more.Names())
	diff(t, "base unchanged", []string{"read", "edit"}, base.Names())
	if base.Has("grep") || !more.Has("grep") {
		t.Error("Has disagrees with Names")
	}
	var specs []string
	for _, s := range more.Specs() {
		specs = append(specs, s.Name)
	}
	diff(t, "specs", []string{"read", "grep", "edit"}, specs)
	if same, _ := more.With([]string{"read", "ghost"}); same != more {
		t.Error("With adding nothing did not return the receiver")
	}
	if more.Toolbox() != box {
		t.Error("Toolbox() is not the toolbox the set came from")
	}
}

// R12: a tool result's addedToolNames are copied onto its message, and only when non-empty
// (the JSON then has no addedToolNames key). From that message on the tools are active:
// the batch that added them did not see them, the next batch does, and replaying the saved
// transcript (through JSON) gives the same active sets at the same messages.
func TestAddedToolNamesAndReplay(t *testing.T) {
	load := toolexec.Tool{Name: "load", Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
		var a struct{ Names []string }
		if err := c.Decode(&a); err != nil {
			return toolexec.Result{}, err
		}
		return toolexec.Result{Content: []llm.Content{llm.Text("loaded")}, AddedToolNames: a.Names}, nil
	}}
	box, err := toolexec.NewToolbox(load, echoTool("read"), echoTool("grep"), echoTool("edit"))
	if err != nil {
		t.Fatal(err)
	}
	initial, _ := box.Activate("load", "read")

	transcript := []llm.Message{llm.NewUser("find foo")}
	turn := func(set *toolexec.ActiveSet, calls ...llm.ToolCall) []llm.Message {
		content := []llm.Content{llm.Text("ok")}
		for _, c := range calls {
			content = append(content, llm.NewToolCall(c.ID, c.Name, c.Arguments))
		}
		asst := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: content}
		transcript = append(transcript, asst)
		out := toolexec.Run(t.Context(), nil, toolexec.Batch{Assistant: &asst, Tools: set, Context: transcript})
		transcript = append(transcript, out.Messages...)
		return out.Messages
	}
	sets := func() []*toolexec.ActiveSet { return toolexec.Replay(initial, transcript) }

	// Turn 1: load grep, and call grep in the same batch: not active yet.
	res := turn(initial, tc("l1", "load", `{"names":["grep"]}`), tc("g1", "grep", `{"path":"x"}`), tc("l0", "load", `{"names":[]}`))
	diff(t, "added names on the message", []string{"grep"}, res[0].AddedToolNames)
	diff(t, "same batch", msgSummary{"g1", "grep", true, "Tool grep not found"}, summarize(res)[1])
	if res[2].AddedToolNames != nil {
		t.Errorf("empty addedToolNames copied onto the message: %#v", res[2].AddedToolNames)
	}
	b0, _ := json.Marshal(res[2])
	b1, _ := json.Marshal(res[0])
	if strings.Contains(string(b0), "addedToolNames") || !strings.Contains(string(b1), `"addedToolNames":["grep"]`) {
		t.Errorf("JSON: empty %s; non-empty %s", b0, b1)
	}

	// Turn 2: the set after the last message has grep; the turn activates edit (and names an
	// unknown tool, which is ignored).
	s := sets()
	res = turn(s[len(s)-1], tc("g2", "grep", `{"path":"x"}`), tc("l2", "load", `{"names":["edit","nosuch"]}`))
	diff(t, "grep in the next batch", msgSummary{"g2", "grep", false, "grep x"}, summarize(res)[0])
	transcript = append(transcript, llm.NewUser("thanks"))

	live := names(sets())
	// 0 user, 1 asst, 2 l1 (+grep), 3 g1, 4 l0, 5 asst, 6 g2, 7 l2 (+edit), 8 user
	want := [][]string{
		{"load", "read"}, {"load", "read"},
		{"load", "read", "grep"}, {"load", "read", "grep"}, {"load", "read", "grep"}, {"load", "read", "grep"}, {"load", "read", "grep"},
		{"load", "read", "grep", "edit"}, {"load", "read", "grep", "edit"},
	}
	diff(t, "active sets per message", want, live)

	// Save and load the transcript, replay: the same tools at the same messages.
	saved, err := json.Marshal(transcript)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []llm.Message
	if err := json.Unmarshal(saved, &loaded); err != nil {
		t.Fatal(err)
	}
	diff(t, "replayed after JSON", live, names(toolexec.Replay(initial, loaded)))
	diff(t, "replayed twice", live, names(sets()))
	// The initial set is untouched by the replay.
	diff(t, "initial", []string{"load", "read"}, initial.Names())
}

func names(sets []*toolexec.ActiveSet) [][]string {
	out := make([][]string, len(sets))
	for i, s := range sets {
		out[i] = s.Names()
	}
	return out
}

// R12: only tool-result messages activate tools.
func TestReplayOnlyToolResults(t *testing.T) {
	box, err := toolexec.NewToolbox(echoTool("read"), echoTool("grep"))
	if err != nil {
		t.Fatal(err)
	}
	initial, _ := box.Activate("read")
	user := llm.NewUser("hi")
	user.AddedToolNames = []string{"grep"} // not a tool result: ignored
	sets := toolexec.Replay(initial, []llm.Message{user, {Role: llm.RoleToolResult, ToolCallID: "1", AddedToolNames: []string{"grep"}}})
	diff(t, "sets", [][]string{{"read"}, {"read", "grep"}}, names(sets))
}

// R10 R17: a tool that fails once the run is aborted is reported as aborted: plainly when it
// returns the context's error (wrapped or not), with its own error text otherwise; the next
// call of the sequential batch does not run.
func TestToolErrorAfterAbort(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func(ctx context.Context) error
		want string
	}{
		{"wrapped ctx error", func(ctx context.Context) error { return fmt.Errorf("stopping: %w", ctx.Err()) }, "Operation aborted"},
		{"own error", func(context.Context) error { return errors.New("write failed") }, "Operation aborted: write failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var n atomic.Int32
			tool := toolexec.Tool{Name: "t", Execute: func(ctx context.Context, _ toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
				n.Add(1)
				cancel()
				return toolexec.Result{}, c.err(ctx)
			}}
			out := toolexec.Run(ctx, &toolexec.Config{Mode: toolexec.Sequential}, toolexec.Batch{
				Calls: []llm.ToolCall{tc("a", "t", `{}`), tc("b", "t", `{}`)},
				Tools: active(t, tool),
			})
			diff(t, "results", []msgSummary{{"a", "t", true, c.want}, {"b", "t", true, "Operation aborted"}}, summarize(out.Messages))
			if n.Load() != 1 {
				t.Errorf("tool ran %d times, want 1", n.Load())
			}
			if !out.Aborted {
				t.Error("Aborted false")
			}
		})
	}
}

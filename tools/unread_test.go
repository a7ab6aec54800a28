package tools_test

// An edit or a write over a file the agent has not read is refused in the prepare stage,
// before beforeToolCall: the person is never asked to approve a change that would then be
// refused. A read earlier in the same batch counts (it runs first: calls on one file run
// in source order).

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

const unreadMsg = "a.txt exists but you have not read it in this session; read it before changing it"

// runAsked runs calls as one batch (parallel unless mode says) with a beforeToolCall hook
// that allows every call, and returns the results and the ids of the calls it was asked
// about.
func runAsked(t *testing.T, ws *tools.Workspace, mode toolexec.Mode, calls ...llm.ToolCall) ([]result, []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	cfg := &toolexec.Config{Mode: mode, Before: func(_ context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
		mu.Lock()
		asked = append(asked, in.Call.ID)
		mu.Unlock()
		return nil, nil
	}}
	oc := toolexec.Run(context.Background(), cfg, toolexec.Batch{Calls: calls, Tools: activeSet(t, tools.New(ws))})
	var out []result
	for _, m := range oc.Messages {
		r := result{isError: m.IsError}
		for _, c := range m.Content {
			if c.Type == llm.ContentText {
				r.text += c.Text
			}
		}
		out = append(out, r)
	}
	return out, asked
}

func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func TestUnreadFileRefusedBeforeApproval(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"a.txt": "hello\n"})
	res, asked := runAsked(t, ws, "",
		tc("e1", "edit", `{"path":"a.txt","edits":[{"oldText":"hello","newText":"bye"}]}`),
		tc("e2", "edit", `{"path":"a.txt","oldText":"hello","newText":"bye"}`), // the older form
		tc("w1", "write", `{"path":"a.txt","content":"bye\n"}`),
		tc("w2", "write", `{"path":"new.txt","content":"new\n"}`))
	for i := range 3 {
		mustFail(t, res[i], unreadMsg)
	}
	mustOK(t, res[3])
	if len(asked) != 1 || asked[0] != "w2" {
		t.Errorf("beforeToolCall was asked about %v, want only w2 (the refused calls must not be asked about)", asked)
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "hello\n" {
		t.Errorf("a refused call changed the file: %q", got)
	}
}

// A read before the edit in the same batch lets the edit through, in either mode; an edit
// before the read is refused at once.
func TestReadEarlierInTheBatchCounts(t *testing.T) {
	for _, mode := range []toolexec.Mode{toolexec.Parallel, toolexec.Sequential} {
		ws, dir := newWorkspace(t, map[string]string{"a.txt": "hello\n", "b.txt": "hi\n"})
		res, asked := runAsked(t, ws, mode,
			tc("r1", "read", `{"path":"a.txt"}`),
			tc("e1", "edit", `{"path":"a.txt","edits":[{"oldText":"hello","newText":"bye"}]}`),
			tc("e2", "edit", `{"path":"b.txt","edits":[{"oldText":"hi","newText":"bye"}]}`),
			tc("r2", "read", `{"path":"b.txt"}`))
		mustOK(t, res[0])
		mustOK(t, res[1])
		mustFail(t, res[2], "b.txt exists but you have not read it")
		mustOK(t, res[3])
		if got := readFile(t, filepath.Join(dir, "a.txt")); got != "bye\n" {
			t.Errorf("%s: a.txt holds %q", mode, got)
		}
		if want := []string{"r1", "e1", "r2"}; !slices.Equal(asked, want) {
			t.Errorf("%s: asked about %v, want %v", mode, asked, want)
		}
	}
}

package tools_test

// The tool set as a whole: schemas compile, read-only classification, and the resources
// the file tools declare (C3), tested on a real parallel batch.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

func TestToolSet(t *testing.T) {
	ws, _ := newWorkspace(t, nil)
	ts := tools.New(ws)
	tb, err := toolexec.NewToolbox(ts...)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Names(); !slices.Equal(got, []string{"read", "write", "edit", "bash", "grep", "find", "ls", "job_output", "job_kill"}) {
		t.Errorf("names %v", got)
	}
	for _, tool := range ts {
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a model: %q", tool.Name, tool.Description)
		}
		var s struct {
			AdditionalProperties *bool `json:"additionalProperties"`
		}
		if json.Unmarshal(tool.Parameters, &s) != nil || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema must refuse unknown arguments", tool.Name)
		}
		if tool.ExecutionMode != "" {
			t.Errorf("%s: ExecutionMode %q would serialize whole batches (R2)", tool.Name, tool.ExecutionMode)
		}
		wantRes := tool.Name == "read" || tool.Name == "write" || tool.Name == "edit"
		if (tool.Resources != nil) != wantRes {
			t.Errorf("%s: declares resources: %v, want %v", tool.Name, tool.Resources != nil, wantRes)
		}
	}
	for name, want := range map[string]bool{"read": true, "grep": true, "find": true, "ls": true, "write": false, "edit": false, "bash": false, "mcp_thing": false} {
		if tools.ReadOnly(name) != want {
			t.Errorf("ReadOnly(%q) = %v", name, !want)
		}
	}
}

// C3: read, write and edit declare the real path as their resource, so every spelling of a
// file is one resource, and a path that cannot be resolved declares none.
func TestFileResources(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"sub/a.txt": "a\n"})
	symlink(t, "sub", filepath.Join(dir, "alias"))
	want := []string{filepath.Join(dir, "sub", "a.txt")}
	byName := map[string]toolexec.Tool{}
	for _, tool := range tools.New(ws) {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"read", "write", "edit"} {
		for _, p := range []string{"sub/a.txt", "./sub/../sub/a.txt", "alias/a.txt", want[0]} {
			got := byName[name].Resources(toolexec.Call{Name: name, Args: json.RawMessage(jsonArgs(t, map[string]string{"path": p}))})
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: resources %v, want %v", name, p, got, want)
			}
		}
		if got := byName[name].Resources(toolexec.Call{Name: name, Args: json.RawMessage(`{"path":"../x"}`)}); got != nil {
			t.Errorf("%s ../x: resources %v", name, got)
		}
	}
}

// wrap returns the built-in tools with hold(name, path, false) called at the start of every
// Execute, before the real tool runs, and hold(name, path, true) once it has returned.
func wrap(ws *tools.Workspace, hold func(name, path string, done bool)) []toolexec.Tool {
	ts := tools.New(ws)
	for i := range ts {
		inner, name := ts[i].Execute, ts[i].Name
		ts[i].Execute = func(ctx context.Context, c toolexec.Call, up func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path string `json:"path"`
			}
			json.Unmarshal(c.Args, &a)
			hold(name, a.Path, false)
			defer hold(name, a.Path, true)
			return inner(ctx, c, up)
		}
	}
	return ts
}

// C3: in one parallel batch, a read and an edit of the same file run in source order while
// a call on another file runs alongside. The read of a.txt is held until the read of
// b.txt has started (so they overlap) and then until the edit has finished or a grace
// period ends: were the two a.txt calls not ordered, the edit would run during that hold
// and the read would show the edited text.
func TestSameFileRunsInSourceOrder(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"a.txt": "before\n", "b.txt": "other\n"})
	readThen(t, ws, "a.txt")
	bStarted, editDone := make(chan struct{}), make(chan struct{})
	ts := wrap(ws, func(name, path string, done bool) {
		switch {
		case name == "read" && path == "a.txt" && !done:
			select {
			case <-bStarted:
			case <-time.After(10 * time.Second):
				t.Error("the read of b.txt did not run alongside the read of a.txt")
			}
			select {
			case <-editDone:
			case <-time.After(200 * time.Millisecond):
			}
		case name == "read" && path == "b.txt" && !done:
			close(bStarted)
		case name == "edit" && done:
			close(editDone)
		}
	})
	res := runBatch(t, ws, ts,
		llm.ToolCall{ID: "r", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
		llm.ToolCall{ID: "e", Name: "edit", Arguments: json.RawMessage(`{"path":"./a.txt","edits":[{"oldText":"before","newText":"after"}]}`)},
		llm.ToolCall{ID: "b", Name: "read", Arguments: json.RawMessage(`{"path":"b.txt"}`)},
	)
	if got := mustOK(t, res[0]); got != "     1\tbefore\n" {
		t.Errorf("the read that comes first saw %q", got)
	}
	mustOK(t, res[1])
	if got := mustOK(t, res[2]); got != "     1\tother\n" {
		t.Errorf("read b: %q", got)
	}
}

// The other way round: an edit first, then a read of the same file, which must see the
// edit although the edit is held for a while.
func TestEditBeforeReadIsSeen(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"a.txt": "before\n"})
	readThen(t, ws, "a.txt")
	readStarted := make(chan struct{})
	ts := wrap(ws, func(name, path string, done bool) {
		switch {
		case name == "edit" && !done:
			select {
			case <-readStarted:
			case <-time.After(200 * time.Millisecond):
			}
		case name == "read" && !done:
			close(readStarted)
		}
	})
	res := runBatch(t, ws, ts,
		llm.ToolCall{ID: "e", Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"before","newText":"after"}]}`)},
		llm.ToolCall{ID: "r", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
	)
	mustOK(t, res[0])
	if got := mustOK(t, res[1]); !strings.Contains(got, "after") {
		t.Errorf("the read after the edit saw %q", got)
	}
}

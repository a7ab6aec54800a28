// This file tests the review of a prompt's changes on the ACP face: a bash call that changes
// a file, makes one and deletes one ends with a diff block of each (so an editor's own review
// shows what bash did), and _pid/changes/list, _pid/changes/keep and _pid/changes/undo
// answer with the native methods' shapes.

package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

func TestBashCallEndsWithDiffsAndChangesMethods(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	for name, data := range map[string]string{"a.txt": "old\n", "d.txt": "gone\n"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sid := c.newSession(cwd, script(`"permissions":{"default":"allow"}`,
		toolTurn(call("b1", "bash", `{"command":"printf 'more\\n' >> a.txt && echo new > c.txt && rm d.txt"}`)),
		textTurn("done")))
	r, msgs := c.result(c.prompt(sid, "change with bash"), nil)
	if r.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	var last gjson.Result
	for _, u := range updates(t, sid, msgs) {
		if u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("toolCallId").String() == "b1" && u.Get("status").String() == "completed" {
			last = u
		}
	}
	diffs := map[string]gjson.Result{}
	for _, b := range last.Get("content").Array() {
		if b.Get("type").String() == "diff" {
			diffs[filepath.Base(b.Get("path").String())] = b
		}
	}
	if len(diffs) != 3 {
		t.Fatalf("bash's last tool_call_update has %d diff blocks, want 3 (a, c, d): %s", len(diffs), last.Raw)
	}
	if a := diffs["a.txt"]; a.Get("oldText").String() != "old\n" || a.Get("newText").String() != "old\nmore\n" || a.Get("path").String() != filepath.Join(cwd, "a.txt") {
		t.Errorf("a.txt's diff: %s", a.Raw)
	}
	if cb := diffs["c.txt"]; cb.Get("oldText").Type != gjson.Null || cb.Get("newText").String() != "new\n" {
		t.Errorf("c.txt's diff (a new file: oldText null): %s", cb.Raw)
	}
	if d := diffs["d.txt"]; d.Get("oldText").String() != "gone\n" || d.Get("newText").String() != "" {
		t.Errorf("d.txt's diff (deleted): %s", d.Raw)
	}

	list, _ := c.result(c.request("_pid/changes/list", map[string]any{"sessionId": sid}), nil)
	cp := list.Get("checkpointId").String()
	if n := len(list.Get("files").Array()); n != 3 || list.Get("files.0.by.0").String() != "bash" {
		t.Fatalf("_pid/changes/list: %s", list.Raw)
	}
	aPath := filepath.Join(cwd, "a.txt")
	k, _ := c.result(c.request("_pid/changes/keep", map[string]any{"sessionId": sid, "checkpointId": cp, "path": filepath.Join(cwd, "c.txt")}), nil)
	if len(k.Get("kept").Array()) != 1 {
		t.Errorf("_pid/changes/keep: %s", k.Raw)
	}
	u, _ := c.result(c.request("_pid/changes/undo", map[string]any{"sessionId": sid, "checkpointId": cp, "path": aPath}), nil)
	if len(u.Get("undone").Array()) != 1 || u.Get("safetyCheckpointId").String() == "" {
		t.Errorf("_pid/changes/undo: %s", u.Raw)
	}
	if data, _ := os.ReadFile(aPath); string(data) != "old\n" {
		t.Errorf("a.txt after the undo: %q", data)
	}
	c.wantError(c.request("_pid/changes/undo", map[string]any{"sessionId": sid, "checkpointId": "nope", "path": aPath}), codeInvalidParams)
}

func TestTaskCallEndsWithItsSubagentsBashDiffs(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	child := `{"provider":"script","turns":[` + toolTurn(call("b1", "bash", `{"command":"printf 'child\\n' >> a.txt"}`)) + `,` + textTurn("changed") + `]}`
	sid := c.newSession(cwd, `{"model":{"provider":"script","subagents":{"one":`+child+`},"turns":[`+
		toolTurn(call("t1", "task", `{"description":"one","prompt":"change a.txt","agent":"general"}`))+`,`+textTurn("done")+`]},"permissions":{"default":"allow"}}`)
	r, msgs := c.result(c.prompt(sid, "delegate"), nil)
	if r.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	var last gjson.Result
	for _, u := range updates(t, sid, msgs) {
		if u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("toolCallId").String() == "t1" && u.Get("status").String() == "completed" {
			last = u
		}
	}
	found := false
	for _, b := range last.Get("content").Array() {
		if b.Get("type").String() == "diff" && b.Get("path").String() == filepath.Join(cwd, "a.txt") && b.Get("oldText").String() == "old\n" && b.Get("newText").String() == "old\nchild\n" {
			found = true
		}
	}
	if !found {
		t.Errorf("the task call's last tool_call_update has no diff of what its subagent's bash changed: %s", last.Raw)
	}
}

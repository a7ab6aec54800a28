// This file tests the review of a prompt's changes through the real daemon (issue 35): a
// scripted prompt edits one file in two places, writes a new one, and runs bash that
// changes a third and deletes a fourth; changesUpdate follows each changing tool;
// changes/list lists the four with their hunks and by; undo of one hunk leaves the other,
// of the added file removes it, of the deleted one brings back its bytes and mode; a
// person's edit inside a hunk is skipped unless force; keep survives session/load; the next
// prompt's request tells the model what was undone; the undo's safety checkpoint takes it back.

package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// numbered returns n lines "line 01\n"...
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	return b.String()
}

// changedFiles returns changes/list's files by base name.
func changedFiles(res gjson.Result) map[string]gjson.Result {
	out := map[string]gjson.Result{}
	for _, f := range res.Get("files").Array() {
		out[filepath.Base(f.Get("path").String())] = f
	}
	return out
}

func TestReviewChangesHunkByHunk(t *testing.T) {
	srv := newFakeOpenAI(t, sseAnswer(sseChunk(obj{"role": "assistant", "content": "noted"}, nil), sseChunk(obj{}, "stop"), sseDone))
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": numbered(20), "c.txt": "one\n", "d.txt": "delete me\n"})
	if err := os.Chmod(filepath.Join(ws, "d.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(sessionEnv(t), e2eEnv...)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "a.txt"})),
		turn(toolCall("e1", "edit", obj{"path": "a.txt", "edits": []obj{
			{"oldText": "line 02", "newText": "LINE 02"}, {"oldText": "line 18", "newText": "LINE 18"}}})),
		turn(toolCall("w1", "write", obj{"path": "b.txt", "content": "new file\n"})),
		turn(toolCall("b1", "bash", obj{"command": "printf 'two\\n' >> c.txt && rm d.txt"})),
		turn(text("done")),
	)})
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "change four files"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s\n%s", r.Raw, d.dump())
	}

	// changesUpdate after each changing tool's toolEnd, before the next tool's end, with
	// the whole list so far.
	var order []string
	for _, m := range d.notes(sid) {
		switch m.method() {
		case "toolEnd":
			order = append(order, "end:"+m.get("params.toolCallId").String())
		case "changesUpdate":
			var files []string
			for _, f := range m.get("params.files").Array() {
				files = append(files, filepath.Base(f.Get("path").String()))
			}
			slices.Sort(files)
			order = append(order, "changes:"+strings.Join(files, ","))
		}
	}
	want := []string{"end:r1", "end:e1", "changes:a.txt", "end:w1", "changes:a.txt,b.txt", "end:b1", "changes:a.txt,b.txt,c.txt,d.txt"}
	if !slices.Equal(order, want) {
		t.Errorf("toolEnd and changesUpdate order:\n got %q\nwant %q", order, want)
	}

	list := d.call("changes/list", obj{"sessionId": sid})
	cp := list.Get("checkpointId").String()
	files := changedFiles(list)
	if len(files) != 4 {
		t.Fatalf("changes/list: %d files, want 4: %s", len(files), list.Raw)
	}
	checks := []struct {
		name, change, by string
		hunks            int
	}{
		{"a.txt", "modified", `["edit"]`, 2}, {"b.txt", "added", `["write"]`, 1},
		{"c.txt", "modified", `["bash"]`, 1}, {"d.txt", "deleted", `["bash"]`, 1},
	}
	for _, c := range checks {
		f := files[c.name]
		if f.Get("change").String() != c.change || compactJSON(f.Get("by").Raw) != c.by || len(f.Get("hunks").Array()) != c.hunks || f.Get("reviewed").Bool() {
			t.Errorf("%s: %s, want change %s, by %s, %d hunks, not reviewed", c.name, f.Raw, c.change, c.by, c.hunks)
		}
		if !filepath.IsAbs(f.Get("path").String()) {
			t.Errorf("%s: path %q is not absolute", c.name, f.Get("path").String())
		}
	}
	aHunks := files["a.txt"].Get("hunks").Array()
	if aHunks[0].Get("oldStart").Int() != 1 || aHunks[0].Get("state").String() != "pending" || aHunks[1].Get("newStart").Int() != 15 {
		t.Errorf("a.txt's hunks: %s", files["a.txt"].Get("hunks").Raw)
	}
	aPath := files["a.txt"].Get("path").String()

	// Undo of one hunk leaves the other; the other keeps its id.
	u := d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": aPath, "hunkIds": []string{aHunks[0].Get("id").String()}})
	safetyA := u.Get("safetyCheckpointId").String()
	if compactJSON(u.Get("undone").Raw) != `["`+aHunks[0].Get("id").String()+`"]` || safetyA == "" || len(u.Get("skipped").Array()) != 0 {
		t.Errorf("undo of a.txt's first hunk: %s", u.Raw)
	}
	wantA := strings.Replace(numbered(20), "line 18", "LINE 18", 1)
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != wantA {
		t.Errorf("a.txt after undoing its first hunk:\n%s", got)
	}
	files = changedFiles(d.call("changes/list", obj{"sessionId": sid}))
	if h := files["a.txt"].Get("hunks").Array(); len(h) != 1 || h[0].Get("id").String() != aHunks[1].Get("id").String() {
		t.Errorf("a.txt's hunks after the undo: %s, want only %s", files["a.txt"].Get("hunks").Raw, aHunks[1].Get("id").String())
	}

	// Keep the other: nothing on disk changes, the hunk is kept and the file reviewed.
	k := d.call("changes/keep", obj{"sessionId": sid, "checkpointId": cp, "path": aPath})
	if compactJSON(k.Get("kept").Raw) != `["`+aHunks[1].Get("id").String()+`"]` {
		t.Errorf("keep: %s", k.Raw)
	}
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != wantA {
		t.Errorf("a keep changed a.txt")
	}

	// Undo of the added file removes it; of the deleted file brings back bytes and mode.
	d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": files["b.txt"].Get("path").String()})
	if !readState(t, filepath.Join(ws, "b.txt")).absent {
		t.Errorf("b.txt (added) is still there after its undo")
	}
	d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": files["d.txt"].Get("path").String()})
	if got := readState(t, filepath.Join(ws, "d.txt")); got != (fileState{data: "delete me\n", mode: 0o600}) {
		t.Errorf("d.txt (deleted) after its undo: %+v, want its bytes and mode 0600", got)
	}

	// A person's edit inside c.txt's hunk after the list: skipped, unless force.
	cHunk := files["c.txt"].Get("hunks.0.id").String()
	if err := os.WriteFile(filepath.Join(ws, "c.txt"), []byte("one\ntwo, edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u = d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": files["c.txt"].Get("path").String(), "hunkIds": []string{cHunk}})
	if sk := u.Get("skipped").Array(); len(sk) != 1 || sk[0].Get("hunkId").String() != cHunk || !strings.Contains(sk[0].Get("reason").String(), "changed since") || len(u.Get("undone").Array()) != 0 || u.Get("safetyCheckpointId").String() != "" {
		t.Errorf("undo of an edited hunk: %s, want it skipped as changed, nothing done", u.Raw)
	}
	if got := readState(t, filepath.Join(ws, "c.txt")).data; got != "one\ntwo, edited\n" {
		t.Errorf("the skipped undo changed c.txt: %q", got)
	}
	u = d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": files["c.txt"].Get("path").String(), "hunkIds": []string{cHunk}, "force": true})
	if len(u.Get("undone").Array()) != 1 {
		t.Errorf("forced undo: %s", u.Raw)
	}
	if got := readState(t, filepath.Join(ws, "c.txt")).data; got != "one\n" {
		t.Errorf("c.txt after the forced undo: %q", got)
	}

	// The last changesUpdate (after the last undo) lists what is left: a.txt, kept.
	var last *wireMsg
	for _, m := range d.notes(sid) {
		if m.method() == "changesUpdate" {
			last = m
		}
	}
	if got := compactJSON(last.get("params.files").Raw); got != compactJSON(`[{"path":`+quote(aPath)+`,"change":"modified","added":1,"removed":1,"pending":0}]`) || last.get("params.checkpointId").String() != cp {
		t.Errorf("the last changesUpdate: %s", last)
	}

	// Errors: an unknown checkpoint, a path the prompt did not change.
	if code, _ := d.callErr("changes/undo", obj{"sessionId": sid, "checkpointId": "nope", "path": aPath}); code != -32602 {
		t.Errorf("undo in an unknown checkpoint: code %d, want -32602", code)
	}
	if code, _ := d.callErr("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": filepath.Join(ws, "elsewhere.txt")}); code != -32602 {
		t.Errorf("undo of a path not changed: code %d, want -32602", code)
	}

	// Another pid loads the session: the review is as it was, and the next prompt's request
	// tells the model what the person undid.
	d.kill()
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	d2.call("session/load", obj{"sessionId": sid})
	files = changedFiles(d2.call("changes/list", obj{"sessionId": sid, "checkpointId": cp}))
	if f := files["a.txt"]; len(files) != 1 || !f.Get("reviewed").Bool() || f.Get("hunks.0.state").String() != "kept" {
		t.Errorf("after session/load: %v, want a.txt alone, its hunk kept", files)
	}
	d2.call("session/setModel", obj{"sessionId": sid, "model": e2eModel(srv)})
	d2.call("session/prompt", obj{"sessionId": sid, "text": "next"})
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	body := string(reqs[0].body)
	for _, want := range []string{"The person undid these changes of yours: ", "a.txt line", "b.txt", "c.txt", "d.txt"} {
		if !strings.Contains(body, want) {
			t.Errorf("the next prompt's request does not carry %q:\n%s", want, body)
		}
	}

	// The undo's safety checkpoint takes the undo back.
	d2.call("session/rewind", obj{"sessionId": sid, "checkpointId": safetyA, "restore": "files"})
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != strings.Replace(wantA, "line 02", "LINE 02", 1) {
		t.Errorf("a.txt after rewinding to the undo's safety checkpoint:\n%s", got)
	}
	// That checkpoint is never changes/list's default.
	if got := d2.call("changes/list", obj{"sessionId": sid}).Get("checkpointId").String(); got == safetyA {
		t.Errorf("changes/list defaults to the undo's safety checkpoint")
	}
}

// quote returns s as a JSON string.
func quote(s string) string { return fmt.Sprintf("%q", s) }

func TestUndoRefusedWhileBashRuns(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"keep.txt": "same\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("w1", "write", obj{"path": "a.txt", "content": "written\n"})),
		turn(toolCall("b1", "bash", obj{"command": "echo waiting; while [ ! -e go ]; do sleep 0.05; done"})),
		turn(text("done")),
	)})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "write, then wait"})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return strings.Contains(m.String(), "waiting") })

	// While the command runs: the list and a keep work, an undo is refused.
	list := d.call("changes/list", obj{"sessionId": sid})
	files := changedFiles(list)
	if len(files) != 1 || files["a.txt"].Get("change").String() != "added" {
		t.Fatalf("changes/list during the prompt: %s", list.Raw)
	}
	aPath := files["a.txt"].Get("path").String()
	cp := list.Get("checkpointId").String()
	if k := d.call("changes/keep", obj{"sessionId": sid, "checkpointId": cp, "path": aPath}); len(k.Get("kept").Array()) != 1 {
		t.Errorf("changes/keep during the prompt: %s", k.Raw)
	}
	if code, msg := d.callErr("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": aPath}); code != -32803 {
		t.Errorf("undo while bash runs: code %d (%s), want -32803", code, msg)
	}
	if got := readState(t, filepath.Join(ws, "a.txt")).data; got != "written\n" {
		t.Errorf("the refused undo changed a.txt: %q", got)
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := d.result(id); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	u := d.call("changes/undo", obj{"sessionId": sid, "checkpointId": cp, "path": aPath})
	if len(u.Get("undone").Array()) != 1 || !readState(t, filepath.Join(ws, "a.txt")).absent {
		t.Errorf("undo once the prompt ended: %s", u.Raw)
	}
}

func TestReviewNamesTaskForASubagentsChanges(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"b.txt": "one\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(turn(toolCall("t1", "task", obj{"description": "one", "prompt": "change two files", "agent": "general"})), turn(text("done")))
	model["subagents"] = obj{"one": scriptModel(
		turn(toolCall("w", "write", obj{"path": "w.txt", "content": "by the child\n"})),
		turn(toolCall("b", "bash", obj{"command": "printf 'two\\n' >> b.txt"})),
		turn(text("changed")))}
	sid := d.newSession(obj{"cwd": ws, "model": model, "permissions": obj{"default": "allow"}})
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "delegate"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	// The child's changes reach the parent's changesUpdate before the task call ends.
	var order []string
	for _, m := range d.notes(sid) {
		switch {
		case m.method() == "toolEnd" && m.get("params.toolCallId").String() == "t1":
			order = append(order, "end:t1")
		case m.method() == "changesUpdate":
			order = append(order, fmt.Sprintf("changes:%d", len(m.get("params.files").Array())))
		}
	}
	if want := []string{"changes:1", "changes:2", "end:t1"}; !slices.Equal(order, want) {
		t.Errorf("the parent's changesUpdate and the task's end: %q, want %q", order, want)
	}
	files := changedFiles(d.call("changes/list", obj{"sessionId": sid}))
	for _, name := range []string{"w.txt", "b.txt"} {
		if got := compactJSON(files[name].Get("by").Raw); got != `["task"]` {
			t.Errorf("%s's by: %s, want [\"task\"] (a subagent's change, whatever its tool)", name, got)
		}
	}
}

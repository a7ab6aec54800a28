// This file tests what issue 14 added for editors, where a fixture cannot show it: input
// queued with content blocks while a run waits, a model change in the middle of a run, the
// disk left alone when the editor writes a file, and a cancelled run that was waiting for
// the editor's buffer.

package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gatedSession starts a daemon whose editor answers beforeToolCall, with a session whose
// model first calls the gated tool "gate" and then answers with the next turns; it sends
// the prompt and returns when pid asks about the call, so that the test acts while the run
// waits.
func gatedSession(t *testing.T, after ...obj) (d *daemon, sid, promptID string, req *wireMsg) {
	t.Helper()
	d = startInProcess(t)
	d.initialize(obj{"beforeToolCall": true})
	turns := append([]obj{turn(toolCall("c1", "gate", nil))}, after...)
	sid = d.newSession(obj{"model": scriptModel(turns...),
		"scriptedTools": []obj{needsApproval(tool("gate", resultStep("gated")))}})
	promptID = d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	return d, sid, promptID, d.serverRequest("beforeToolCall", "c1")
}

// A steer sent with content blocks while the run waits is the user message the model gets
// after the tool's result: the selection as text naming its lines, the link as a note.
func TestSteerWithContentWhileRunning(t *testing.T) {
	d, sid, promptID, req := gatedSession(t, turn(text("steered")))
	sel := "x := 1\n"
	d.call("session/steer", obj{"sessionId": sid, "content": []obj{
		{"type": "resource", "resource": obj{"uri": "file:///elsewhere/a.go#L3-L4", "text": sel}},
		{"type": "resource_link", "uri": "file:///elsewhere/b.go", "name": "b.go"},
	}})
	d.answer(req, obj{"decision": "allow"})
	msgs := d.result(promptID).Get("messages").Array()
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Get("role").String())
	}
	if got, want := strings.Join(roles, ","), "user,assistant,toolResult,user,assistant"; got != want {
		t.Fatalf("roles = %s; want %s (the steer after the tool result, before the next model call)\n%s", got, want, d.dump())
	}
	steer := msgs[3].Get("content").Array()
	if len(steer) != 2 {
		t.Fatalf("the steer message has %d blocks; want 2: %s", len(steer), msgs[3].Raw)
	}
	if got := steer[0].Get("text").String(); !strings.HasPrefix(got, "/elsewhere/a.go (lines 3-4), as the editor has it:\n```\nx := 1\n```") {
		t.Errorf("the selection reached the model as %q", got)
	}
	if got := steer[1].Get("text").String(); !strings.Contains(got, "/elsewhere/b.go") {
		t.Errorf("the link reached the model as %q", got)
	}
	// An invalid block in a steer is refused, naming it, and queues nothing.
	if code, msg := d.callErr("session/steer", obj{"sessionId": sid, "content": []obj{{"type": "image", "mimeType": "image/png"}}}); code != -32602 || !strings.Contains(msg, "content[0]") {
		t.Errorf("a steer with a bad block: %d %q; want -32602 naming content[0]", code, msg)
	}
}

// session/setModel during a run: the model call after the change uses the new model; the
// call that was made before it is untouched.
func TestSetModelWhileRunning(t *testing.T) {
	d, sid, promptID, req := gatedSession(t, turn(text("from the first model")))
	d.call("session/setModel", obj{"sessionId": sid, "model": scriptModel(turn(text("from the second model")))})
	d.answer(req, obj{"decision": "allow"})
	msgs := d.result(promptID).Get("messages").Array()
	last := msgs[len(msgs)-1]
	if got := last.Get("content.0.text").String(); got != "from the second model" {
		t.Fatalf("the model call after setModel answered %q; want the second model's answer\n%s", got, d.dump())
	}
	if got := d.call("models/list", obj{"sessionId": sid}).Get("current.provider").String(); got != "script" {
		t.Errorf("models/list current provider = %q; want script", got)
	}
}

// editorSession starts a daemon whose editor declared the fs capabilities given, with a
// session in a folder holding a.txt ("on disk\n") whose model reads a.txt, edits "buffer" to
// "agent" in it, and says done.
func editorSession(t *testing.T, fs obj) (d *daemon, dir, sid string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = startInProcess(t)
	d.initialize(obj{"fs": fs})
	sid = d.newSession(obj{"cwd": dir, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "a.txt"})),
		turn(toolCall("e1", "edit", obj{"path": "a.txt", "edits": []obj{{"oldText": "buffer", "newText": "agent"}}})),
		turn(text("done")))})
	return d, dir, sid
}

// nextRead waits for an fs/read_text_file request whose id is not in seen, and adds it.
func nextRead(d *daemon, seen map[string]bool) *wireMsg {
	d.t.Helper()
	r := d.await("an fs/read_text_file request", func(m *wireMsg) bool {
		return m.isRequest() && m.method() == "fs/read_text_file" && !seen[m.id()]
	})
	seen[r.id()] = true
	return r
}

// readFile returns a file's content, failing the test when it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With both capabilities the edit goes to the editor only: the disk keeps what it held
// (the editor saves its buffer itself), and the editor gets the whole new text.
func TestEditorWriteLeavesDisk(t *testing.T) {
	d, dir, sid := editorSession(t, obj{"readTextFile": true, "writeTextFile": true})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "edit"})
	path := filepath.Join(dir, "a.txt")
	seen := map[string]bool{}
	for range 2 { // the read, then the edit's fresh look at the buffer
		r := nextRead(d, seen)
		if got := r.get("params.path").String(); got != path {
			t.Fatalf("fs/read_text_file path = %q; want the absolute %q", got, path)
		}
		d.answer(r, obj{"content": "unsaved buffer\n"})
	}
	w := d.serverRequest("fs/write_text_file", "")
	if got := w.get("params.content").String(); got != "unsaved agent\n" {
		t.Errorf("fs/write_text_file content = %q; want the buffer's text with the edit", got)
	}
	d.answer(w, nil)
	if got := d.result(id).Get("stopReason").String(); got != "stop" {
		t.Fatalf("stopReason = %q\n%s", got, d.dump())
	}
	if got := readFile(t, path); got != "on disk\n" {
		t.Errorf("the disk holds %q after an edit through the editor; want it untouched", got)
	}
}

// With readTextFile alone, the tools read the buffer and write the disk: the file then holds
// the buffer's text with the edit.
func TestEditorReadOnlyWritesDisk(t *testing.T) {
	d, dir, sid := editorSession(t, obj{"readTextFile": true})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "edit"})
	seen := map[string]bool{}
	for range 2 {
		d.answer(nextRead(d, seen), obj{"content": "unsaved buffer\n"})
	}
	if got := d.result(id).Get("stopReason").String(); got != "stop" {
		t.Fatalf("stopReason = %q\n%s", got, d.dump())
	}
	for _, m := range d.snapshot() {
		if m.method() == "fs/write_text_file" {
			t.Errorf("pid sent fs/write_text_file to an editor that did not declare it: %s", m)
		}
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "unsaved agent\n" {
		t.Errorf("the disk holds %q; want the buffer's text with the edit", got)
	}
}

// A run cancelled while pid waits for the editor's buffer cancels that request too, and
// ends aborted with nothing written.
func TestCancelWhileReadingThroughEditor(t *testing.T) {
	d, dir, sid := editorSession(t, obj{"readTextFile": true, "writeTextFile": true})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "edit"})
	r := d.serverRequest("fs/read_text_file", "")
	d.cancel(id)
	d.notification("$/cancelRequest", func(m *wireMsg) bool { return m.get("params.id").Raw == r.get("id").Raw })
	if got := d.result(id).Get("stopReason").String(); got != "aborted" {
		t.Fatalf("stopReason = %q; want aborted\n%s", got, d.dump())
	}
	// The editor's late answer is dropped without harm, and the daemon serves on.
	d.answer(r, obj{"content": "late\n"})
	if got := d.call("models/list", obj{}).Get("models").Raw; got != "[]" {
		t.Errorf("models/list after the cancel = %s; want []", got)
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "on disk\n" {
		t.Errorf("a.txt holds %q after a cancelled run; want it untouched", got)
	}
}

package acp

// The file tools go through the client's fs/* methods when the client declared them: read
// sees the editor's unsaved buffer, edit applies to it and lands in the editor, and the file
// on disk is never touched.

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileToolsThroughTheClient(t *testing.T) {
	c := start(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte("saved on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	buffer := "unsaved: one\nunsaved: two\n"
	sid := c.newSession(dir, script("",
		toolTurn(call("r1", "read", `{"path":"main.go"}`)),
		toolTurn(call("e1", "edit", `{"path":"main.go","edits":[{"oldText":"two","newText":"2"}]}`)),
		textTurn("done")))
	id := c.prompt(sid, "go")
	var reads, writes int
	var written string
	res, _ := c.result(id, func(m *msg) {
		switch m.Method {
		case "fs/read_text_file":
			reads++
			if m.get("params.path").String() != path || m.get("params.sessionId").String() != sid {
				t.Errorf("fs/read_text_file %s", m.raw)
			}
			c.respond(m, map[string]any{"content": buffer})
		case "fs/write_text_file":
			writes++
			written = m.get("params.content").String()
			c.respond(m, map[string]any{})
		case "session/request_permission":
			c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		default:
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt answered %s", res.Raw)
	}
	// read once for the read tool, once for the edit's current text.
	if reads != 2 || writes != 1 {
		t.Fatalf("fs/read_text_file %d times, fs/write_text_file %d times; want 2 and 1", reads, writes)
	}
	if written != "unsaved: one\nunsaved: 2\n" {
		t.Fatalf("the edit wrote %q; it must apply to the unsaved buffer", written)
	}
	if disk, _ := os.ReadFile(path); string(disk) != "saved on disk\n" {
		t.Fatalf("the file on disk changed: %q", disk)
	}
}

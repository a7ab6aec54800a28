// This file tests pid's checkpoint extension methods on the ACP face: a prompt's write is
// listed by _pid/checkpoints/list, diffed by _pid/checkpoints/diff and taken back by
// _pid/session/rewind, with the native methods' shapes and errors.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckpointExtensionMethods(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := `{"model": {"provider": "script", "turns": [
		{"content": [{"type": "toolCall", "id": "w1", "name": "write", "arguments": {"path": "b.txt", "content": "new\n"}}]},
		{"content": [{"type": "text", "text": "done"}]}]},
		"permissions": {"default": "allow"}}`
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(meta)}}), nil)
	sid := res.Get("sessionId").String()
	if r, _ := c.result(c.prompt(sid, "make b"), nil); r.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); err != nil {
		t.Fatalf("the prompt did not write b.txt: %v", err)
	}

	list, _ := c.result(c.request("_pid/checkpoints/list", map[string]any{"sessionId": sid}), nil)
	cps := list.Get("checkpoints").Array()
	if len(cps) != 1 || cps[0].Get("prompt").String() != "make b" || cps[0].Get("files.0.change").String() != "added" ||
		cps[0].Get("files.0.path").String() != filepath.Join(cwd, "b.txt") {
		t.Fatalf("_pid/checkpoints/list: %s", list.Raw)
	}
	id := cps[0].Get("id").String()
	diff, _ := c.result(c.request("_pid/checkpoints/diff", map[string]any{"sessionId": sid, "checkpointId": id}), nil)
	if d := diff.Get("files.0.diff").String(); !strings.Contains(d, "+new\n") {
		t.Errorf("_pid/checkpoints/diff: %s", diff.Raw)
	}
	rw, _ := c.result(c.request("_pid/session/rewind", map[string]any{"sessionId": sid, "checkpointId": id, "restore": "both"}), nil)
	if rw.Get("removed.0").String() != filepath.Join(cwd, "b.txt") || rw.Get("safetyCheckpointId").String() == "" {
		t.Errorf("_pid/session/rewind: %s", rw.Raw)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt is still there after the rewind: %v", err)
	}
	c.wantError(c.request("_pid/session/rewind", map[string]any{"sessionId": sid, "checkpointId": "nope", "restore": "files"}), codeInvalidParams)
	c.wantError(c.request("_pid/checkpoints/list", map[string]any{"sessionId": "nope"}), codeNotFound)
	c.wantError(c.request("_pid/nothing", map[string]any{}), codeMethodNotFound)
}

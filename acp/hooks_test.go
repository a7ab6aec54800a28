// This file tests the person's hooks on the ACP face: session/new's _meta.pid.hooks (the
// settings' shape) block a bash call with exit 2, and the model reads the hook's reason.

package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestHooksOnTheACPFace(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	meta := `{"model": {"provider": "script", "turns": [
		{"content": [{"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]},
		{"content": [{"type": "text", "text": "done"}]}]},
		"permissions": {"default": "allow"},
		"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "echo 'no shell here' >&2; exit 2"}]}]}}`
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(meta)}}), nil)
	sid := res.Get("sessionId").String()
	_, before := c.result(c.prompt(sid, "run it"), nil)
	found := false
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("status").String() == "failed" &&
			strings.Contains(u.Raw, "no shell here") {
			found = true
		}
	}
	if !found {
		t.Errorf("no failed tool_call_update carrying the hook's reason")
	}
}

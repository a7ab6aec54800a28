// Notices (ACP 1.25), only to a client that declared session.notices: the trust decision
// for an untrusted cwd whose settings pid left out (after session/new's answer), and a hook
// that failed during a prompt.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustNoticeAfterSessionNew(t *testing.T) {
	for _, declared := range []bool{false, true} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".pid"), 0o755)
		os.WriteFile(filepath.Join(dir, ".pid", "settings.json"), []byte(`{"permissions":{"default":"allow"}}`), 0o644)
		c := start(t)
		caps := map[string]any{}
		if declared {
			caps["session"] = map[string]any{"notices": map[string]any{}}
		}
		c.initialize(caps)
		sid := c.newSession(dir, script("", textTurn("ok")))
		// The prompt's answer comes after anything session/new left for after its own.
		_, before := c.result(c.prompt(sid, "hi"), nil)
		var notices []string
		for _, u := range updates(t, sid, before) {
			if u.Get("sessionUpdate").String() == "notice" {
				notices = append(notices, u.Get("severity").String()+" "+u.Get("title").String())
			}
		}
		if !declared {
			if len(notices) != 0 {
				t.Errorf("notices to a client that did not declare them: %q", notices)
			}
			continue
		}
		if len(notices) != 1 || !strings.HasPrefix(notices[0], "info ") || !strings.Contains(notices[0], dir) || !strings.Contains(notices[0], "trustedFolders") {
			t.Errorf("want one info notice naming %s and how to trust it, got %q", dir, notices)
		}
	}
}

func TestFailedHookNotice(t *testing.T) {
	c := start(t)
	c.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	meta := `{"model": {"provider": "script", "turns": [
		{"content": [{"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]},
		{"content": [{"type": "text", "text": "done"}]}]},
		"permissions": {"default": "allow"},
		"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "exit 1"}]}]}}`
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(meta)}}), nil)
	sid := res.Get("sessionId").String()
	_, before := c.result(c.prompt(sid, "run it"), nil)
	found := false
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "notice" && u.Get("severity").String() == "warning" &&
			strings.Contains(u.Get("title").String(), "PreToolUse hook") && strings.Contains(u.Get("title").String(), "failed") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning notice for the failed hook")
	}
}

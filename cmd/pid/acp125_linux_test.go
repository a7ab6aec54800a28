// ACP 1.25 through the real binary (pid --acp over pipes): the capabilities, a session with
// an additional directory whose file the model reads (the tool call named "read"), the
// trust notice for its untrusted cwd, and session/fork going on from the conversation.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/pidtest"
)

func TestACP125OnTheWire(t *testing.T) {
	root := t.TempDir()
	cwd, other := filepath.Join(root, "ws"), filepath.Join(root, "other")
	os.MkdirAll(filepath.Join(cwd, ".pid"), 0o755)
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(cwd, ".pid", "settings.json"), []byte(`{"permissions":{"default":"allow"}}`), 0o644)
	file := filepath.Join(other, "notes.txt")
	os.WriteFile(file, []byte("beside the cwd\n"), 0o644)
	p, err := pidtest.Start(pidBin, pidtest.Options{Args: []string{"--acp"}, Home: filepath.Join(root, "home"),
		Conn: pidtest.ConnOptions{Framing: pidtest.Lines, HangGuard: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("pid's stderr:\n%s", p.Stderr())
		}
	})
	init, err := p.Call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}}}})
	if err != nil {
		t.Fatal(err)
	}
	caps := init.Get("agentCapabilities.sessionCapabilities")
	if !caps.Get("fork").IsObject() || !caps.Get("additionalDirectories").IsObject() {
		t.Errorf("sessionCapabilities %s", caps.Raw)
	}
	turns := []any{
		map[string]any{"content": []any{map[string]any{"type": "toolCall", "id": "r1", "name": "read", "arguments": map[string]any{"path": file}}}},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "read it"}}},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "in the fork"}}},
	}
	res, err := p.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []any{other},
		"_meta": map[string]any{"pid": map[string]any{"model": map[string]any{"provider": "script", "turns": turns}}}})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.Get("sessionId").String()
	if _, err := p.Call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "read"}}}); err != nil {
		t.Fatal(err)
	}
	var name, status, text string
	var notices []string
	for _, m := range p.Messages() {
		u := m.Get("params.update")
		if m.Method() != "session/update" || m.Get("params.sessionId").String() != sid {
			continue
		}
		switch u.Get("sessionUpdate").String() {
		case "tool_call":
			name = u.Get("name").String()
		case "tool_call_update":
			if s := u.Get("status").String(); s == "completed" || s == "failed" {
				status, text = s, u.Get("content.0.content.text").String()
			}
		case "notice":
			notices = append(notices, u.Get("title").String())
		}
	}
	if name != "read" || status != "completed" || !strings.Contains(text, "beside the cwd") {
		t.Errorf("the read in the additional directory: name %q, %s %q", name, status, text)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], cwd) || !strings.Contains(notices[0], "trustedFolders") {
		t.Errorf("trust notices %q", notices)
	}
	fork, err := p.Call("session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	fid := fork.Get("sessionId").String()
	if fid == "" || fid == sid {
		t.Fatalf("session/fork: %s", fork.Raw)
	}
	if _, err := p.Call("session/prompt", map[string]any{"sessionId": fid, "prompt": []any{map[string]any{"type": "text", "text": "go on"}}}); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	for _, m := range p.Messages() {
		if m.Method() == "session/update" && m.Get("params.sessionId").String() == fid && m.Get("params.update.sessionUpdate").String() == "agent_message_chunk" {
			said.WriteString(m.Get("params.update.content.text").String())
		}
	}
	if said.String() != "in the fork" {
		t.Errorf("the fork said %q, want the script's next turn", said.String())
	}
}

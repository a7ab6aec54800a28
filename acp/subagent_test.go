// This file tests subagents on the ACP face: a task call is a tool_call of kind think,
// updated with the child's steps, whose result is the child's answer; the child's own
// calls are not updates of the parent's session.

package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTaskIsAThinkToolCall(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	cwd := t.TempDir()
	meta := `{"model": {"provider": "script", "turns": [
		{"content": [{"type": "toolCall", "id": "t1", "name": "task", "arguments": {"description": "look", "prompt": "look around"}}]},
		{"content": [{"type": "text", "text": "done"}]}],
		"subagents": {"look": {"provider": "script", "turns": [
			{"content": [{"type": "toolCall", "id": "l1", "name": "ls", "arguments": {"path": "."}}]},
			{"content": [{"type": "text", "text": "nothing here"}]}]}}}}`
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"pid": json.RawMessage(meta)}}), nil)
	sid := res.Get("sessionId").String()
	_, before := c.result(c.prompt(sid, "explore"), nil)
	var kind, final string
	steps := 0
	for _, u := range updates(t, sid, before) {
		switch u.Get("sessionUpdate").String() {
		case "tool_call":
			if u.Get("toolCallId").String() == "l1" {
				t.Errorf("the child's own call reached the parent's session: %s", u.Raw)
			}
			if u.Get("toolCallId").String() == "t1" {
				kind = u.Get("kind").String()
			}
		case "tool_call_update":
			if u.Get("toolCallId").String() == "l1" {
				t.Errorf("the child's own call reached the parent's session: %s", u.Raw)
			}
			if u.Get("toolCallId").String() == "t1" && strings.Contains(u.Raw, "ls ") {
				steps++
			}
			if u.Get("toolCallId").String() == "t1" && u.Get("status").String() == "completed" {
				final = u.Raw
			}
		}
	}
	if kind != "think" {
		t.Errorf("the task call's kind %q, want think", kind)
	}
	if steps == 0 {
		t.Errorf("no update of the task call carried the child's step")
	}
	if !strings.Contains(final, "nothing here") {
		t.Errorf("the task call's completion lacks the child's answer: %s", final)
	}
}

// This file tests the person's hooks through the real daemon, with small shell scripts as
// hooks: PreToolUse blocking (exit 2), allowing (no approval, but never over a deny rule)
// and replacing arguments with invalid ones; PostToolUse rewriting a file and adding
// context; Stop keeping the run going, and its limit; a hook past its timeout; an untrusted
// workspace's hooks never running; UserPromptSubmit; hooks/list.

package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookCmd is one hook of the settings' shape.
func hookCmd(matcher, command string, timeout float64) obj {
	h := obj{"type": "command", "command": command}
	if timeout > 0 {
		h["timeout"] = timeout
	}
	g := obj{"hooks": []obj{h}}
	if matcher != "" {
		g["matcher"] = matcher
	}
	return g
}

// resultText returns the text of the toolEnd result of call id.
func resultText(d *daemon, sid, id string) (string, bool) {
	e, ok := toolEnds(d, sid)[id]
	if !ok {
		d.t.Fatalf("no toolEnd for %s:\n%s", id, d.dump())
	}
	return e.Get("result.content.0.text").String() + e.Get("result.content.1.text").String(), e.Get("isError").Bool()
}

func TestPreToolUseHooks(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "a\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{"cwd": ws,
		"permissions": obj{"tools": obj{"grep": "deny"}},
		"hooks": obj{"PreToolUse": []obj{
			hookCmd("bash", `echo "no shell today" >&2; exit 2`, 0),
			hookCmd("write", `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, 0),
			hookCmd("grep", `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, 0),
			hookCmd("ls", `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"path":7}}}'`, 0),
		}},
		"model": scriptModel(
			turn(toolCall("b1", "bash", obj{"command": "echo hi"}), toolCall("w1", "write", obj{"path": "b.txt", "content": "x\n"}),
				toolCall("g1", "grep", obj{"pattern": "a"}), toolCall("l1", "ls", obj{"path": "."})),
			turn(text("done")),
		)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	if txt, isErr := resultText(d, sid, "b1"); !isErr || !strings.Contains(txt, "no shell today") || !strings.Contains(txt, "PreToolUse hook") {
		t.Errorf("bash blocked by exit 2: %q (error %v)", txt, isErr)
	}
	if txt, isErr := resultText(d, sid, "w1"); isErr {
		t.Errorf("write allowed by the hook failed: %q", txt)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Errorf("the allowed write did not run: %v", err)
	}
	if txt, isErr := resultText(d, sid, "g1"); !isErr || !strings.Contains(txt, "denied by the permissions") {
		t.Errorf("grep: a hook's allow must not beat a deny rule: %q", txt)
	}
	if txt, isErr := resultText(d, sid, "l1"); !isErr || !strings.Contains(txt, "replaced the arguments") || !strings.Contains(txt, "PreToolUse hook") {
		t.Errorf("ls with invalid updatedInput: %q", txt)
	}
	for _, m := range d.snapshot() {
		if m.method() == "beforeToolCall" {
			t.Errorf("an approval was asked although the hooks decided every call: %s", m)
		}
	}
	list := d.call("hooks/list", obj{"sessionId": sid}).Get("hooks").Array()
	if len(list) != 4 || list[0].Get("event").String() != "PreToolUse" || list[0].Get("matcher").String() != "bash" || list[0].Get("source").String() != "session" {
		t.Errorf("hooks/list: %v", list)
	}
}

func TestPostToolUseHookFormatsAndAddsContext(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	// A "formatter": it upper-cases the written file, and tells the model so.
	format := `f=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p'); tr a-z A-Z < "$f" > "$f.tmp" && mv "$f.tmp" "$f"; printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted %s"}}' "$f"`
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"},
		"hooks": obj{"PostToolUse": []obj{hookCmd("write|edit", format, 0)}},
		"model": scriptModel(turn(toolCall("w1", "write", obj{"path": "b.txt", "content": "lower\n"})), turn(text("done")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	data, _ := os.ReadFile(filepath.Join(ws, "b.txt"))
	if string(data) != "LOWER\n" {
		t.Errorf("the formatter did not run on the written file: %q", data)
	}
	if txt, isErr := resultText(d, sid, "w1"); isErr || !strings.Contains(txt, "formatted b.txt") {
		t.Errorf("the result the model reads lacks the hook's context: %q (error %v)", txt, isErr)
	}
}

func TestStopHookKeepsTheRunGoing(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	stop := `test -f marker || printf '{"decision":"block","reason":"create the marker first"}'`
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"},
		"hooks": obj{"Stop": []obj{hookCmd("", stop, 0)}},
		"model": scriptModel(turn(text("done?")), turn(toolCall("b1", "bash", obj{"command": "touch marker"})), turn(text("done now")))})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	if res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", res.Raw)
	}
	var users []string
	for _, m := range endedMessages(d, sid) {
		if strings.Contains(m, `"role":"user"`) {
			users = append(users, m)
		}
	}
	if len(users) != 2 || !strings.Contains(users[1], "create the marker first") {
		t.Errorf("user messages: %v, want the prompt and the Stop hook's reason", users)
	}

	// A hook that always blocks keeps it going 5 times in a row, then the run ends.
	d2 := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d2, obj{}, ws)
	turns := []obj{}
	for range 8 {
		turns = append(turns, turn(text("again")))
	}
	sid2 := d2.newSession(obj{"cwd": ws, "hooks": obj{"Stop": []obj{hookCmd("", `echo "never enough" >&2; exit 2`, 0)}}, "model": scriptModel(turns...)})
	d2.call("session/prompt", obj{"sessionId": sid2, "text": "go"})
	n := 0
	for _, m := range endedMessages(d2, sid2) {
		if strings.Contains(m, `"role":"assistant"`) {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d model answers, want 6: the first and one after each of the 5 blocks", n)
	}
}

func TestHookTimeoutAndUntrustedWorkspace(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	marker := filepath.Join(t.TempDir(), "ran")
	// The workspace's own settings configure a hook; the folder is not trusted.
	wsWriteFile(t, filepath.Join(ws, ".pid", "settings.json"), `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch `+marker+`"}]}]}}`)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"},
		"hooks": obj{"PreToolUse": []obj{hookCmd("ls", "sleep 30", 0.3)}},
		"model": scriptModel(turn(toolCall("l1", "ls", obj{"path": "."}), toolCall("r1", "find", obj{"pattern": "*"})), turn(text("done")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	if txt, isErr := resultText(d, sid, "l1"); isErr {
		t.Errorf("a hook past its timeout counts as failed and the call goes on: %q", txt)
	}
	if _, isErr := resultText(d, sid, "r1"); isErr {
		t.Errorf("the other call of the batch failed")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("an untrusted workspace's hook ran")
	}
	warned := false
	for _, m := range d.snapshot() {
		if strings.Contains(m.String(), "sleep 30") && strings.Contains(m.String(), "timed out") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("the timed-out hook was not reported to the editor naming it:\n%s", d.dump())
	}
	for _, h := range d.call("hooks/list", obj{"sessionId": sid}).Get("hooks").Array() {
		if h.Get("source").String() == "workspace" {
			t.Errorf("hooks/list shows an untrusted workspace's hook: %s", h.Raw)
		}
	}
}

func TestUserPromptSubmitHook(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	submit := `grep -q forbidden && { echo "not that word" >&2; exit 2; }; echo "the build is green"`
	sid := d.newSession(obj{"cwd": ws, "hooks": obj{"UserPromptSubmit": []obj{hookCmd("", submit, 0)}},
		"model": scriptModel(turn(text("ok")))})
	code, msg := d.callErr("session/prompt", obj{"sessionId": sid, "text": "say the forbidden word"})
	if code != -32803 || !strings.Contains(msg, "not that word") {
		t.Errorf("a blocked prompt: %d %q", code, msg)
	}
	if n := len(endedMessages(d, sid)); n != 0 {
		t.Errorf("a blocked prompt left %d messages", n)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "hello"})
	ended := endedMessages(d, sid)
	if len(ended) == 0 || !strings.Contains(ended[0], "the build is green") {
		t.Errorf("the hook's output is not in the user message: %v", ended)
	}
}

func TestSessionStartAndPreCompactHooks(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	env := sessionEnv(t)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	usage := func(n int) obj { return obj{"input": n, "output": 10} }
	sid := d.newSession(obj{"cwd": ws,
		"hooks": obj{
			"SessionStart": []obj{hookCmd("", `echo "branch: main, 3 failing tests"`, 0)},
			"PreCompact":   []obj{hookCmd("", `echo "keep everything" >&2; exit 2`, 0)},
		},
		"model": obj{"provider": "script", "contextWindow": 20000, "compaction": obj{"reserveTokens": 2000, "keepRecentTokens": 1500},
			"turns":     []obj{{"content": []obj{text("one")}, "usage": usage(19000)}, {"content": []obj{text("two")}}},
			"summaries": []obj{{"content": []obj{text("## Goal\nsummary")}}}}})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	ended := endedMessages(d, sid)
	if len(ended) == 0 || !strings.Contains(ended[0], "branch: main, 3 failing tests") {
		t.Errorf("the SessionStart hook's output is not in the first prompt: %v", ended)
	}
	// The threshold is passed: the next prompt would compact first; the hook cancels it.
	d.call("session/prompt", obj{"sessionId": sid, "text": "second"})
	var ends []string
	for _, m := range d.notes(sid) {
		if m.method() == "compactionEnd" {
			ends = append(ends, m.get("params.error").String())
		}
	}
	if len(ends) != 1 || !strings.Contains(ends[0], "keep everything") {
		t.Errorf("compactionEnd errors %q, want one naming the PreCompact hook's reason", ends)
	}
	for _, m := range endedMessages(d, sid) {
		if strings.Contains(m, "summary") {
			t.Errorf("the compaction happened although the hook cancelled it: %s", m)
		}
	}
	// Every hook decision is in the audit log.
	state := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	log, _ := os.ReadFile(filepath.Join(state, "pid", "audit.log"))
	if !strings.Contains(string(log), `"decision":"hook block"`) || !strings.Contains(string(log), "PreCompact hook") {
		t.Errorf("the audit log lacks the PreCompact hook's decision:\n%s", log)
	}
}

// This file drives the real daemon through issue 31's routes by which an unasked write or a
// hook could get code run outside the sandbox later: writes through symbolic links (dangling
// ones included) into the paths other programs load commands from, in acceptEdits and auto;
// a hooks configuration written that way in a trusted folder; and a PreToolUse hook's
// updatedInput taking a command out of the sandbox.

package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// promptRequests runs session/prompt, answers every request pid sends meanwhile with
// answer (promptAnswering), and returns those requests.
func promptRequests(t *testing.T, d *daemon, sid, text string, answer wsAnswerer) []*wireMsg {
	t.Helper()
	var reqs []*wireMsg
	promptAnswering(t, d, sid, text, func(m *wireMsg) any {
		reqs = append(reqs, m)
		return answer(m)
	})
	return reqs
}

// The writes of issue 31 H4 and M7, each through the daemon in acceptEdits and auto: a
// dangling link to each protected name, a link to a link, a link to a folder and a file
// under it, and protected paths named directly. Each asks (denied here), and nothing is
// created; a plain new file runs unasked.
func TestE2EEditModesAskForLinksIntoProtectedPaths(t *testing.T) {
	for _, mode := range []string{"acceptEdits", "auto"} {
		t.Run(mode, func(t *testing.T) {
			_, ws := newWorkspaceDir(t, map[string]string{"docs/readme.md": "r\n", ".git/HEAD": "ref: refs/heads/main\n"})
			if err := os.Mkdir(filepath.Join(ws, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			links := map[string]string{
				"docs/settings.md": "../.pid/settings.json",
				"docs/tasks.md":    "../.vscode/tasks.json",
				"docs/envrc.md":    "../.envrc",
				"docs/mcp.md":      "../.mcp.json",
				"docs/hook.md":     "../.git/hooks/post-checkout",
				"docs/command.md":  "../.pid/commands/x.md",
				"docs/chain.md":    "chain2.md",
				"docs/chain2.md":   "../.envrc",
				"docs/agent":       "../.claude",
			}
			for name, target := range links {
				if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
					t.Fatal(err)
				}
			}
			d := startProcess(t, processOptions{Env: sessionEnv(t)})
			initWorkspace(d, obj{"beforeToolCall": true}, ws)
			sid := d.newSession(obj{"cwd": ws, "mode": mode})
			write := func(id, path string) obj {
				return wsCall(id, "write", obj{"path": path, "content": "echo owned > /tmp/pid-owned\n"})
			}
			calls := []obj{write("plain", "docs/new.md"),
				write("settings", "docs/settings.md"), write("tasks", "docs/tasks.md"), write("envrc", "docs/envrc.md"),
				write("mcp", "docs/mcp.md"), write("hook", "docs/hook.md"), write("command", "docs/command.md"),
				write("chain", "docs/chain.md"), write("agent", "docs/agent/settings.json"),
				write("commondir", ".git/commondir"), write("module", ".git/modules/sub/config"),
				write("attributes", ".git/info/attributes"), write("claude", ".claude/settings.local.json"), write("GIT", ".GIT/config")}
			b := wsExecute(t, d, sid, "sequential", wsDecide("deny"), calls...)
			var want []string
			for _, c := range calls[1:] {
				want = append(want, c["id"].(string))
			}
			if got := b.asked(); !slices.Equal(got, want) {
				t.Errorf("asked about %v,\nwant %v", got, want)
			}
			wsWantOK(t, b.msg(t, "plain"))
			for _, p := range []string{".pid", ".vscode", ".envrc", ".mcp.json", ".git/hooks", ".claude/settings.json", ".claude/settings.local.json",
				".git/commondir", ".git/modules", ".git/info", ".GIT"} {
				if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

// Issue 31 H4 end to end: in a trusted folder, in auto mode, the model writes a hooks
// configuration through docs/notes.md -> ../.pid/settings.json (dangling). The write asks;
// denied, no settings file exists and the hook never runs on the next tool call.
func TestE2EHooksThroughADanglingLinkAsk(t *testing.T) {
	config, _ := xdgDirs(t)
	_, ws := newWorkspaceDir(t, map[string]string{"docs/readme.md": "r\n"})
	if err := os.Symlink("../.pid/settings.json", filepath.Join(ws, "docs", "notes.md")); err != nil {
		t.Fatal(err)
	}
	trustInUserSettings(t, config, ws)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hooksConfig := mustJSON(obj{"hooks": obj{"PreToolUse": []obj{hookCmd("", "touch "+marker, 0)}}})
	d := startProcess(t, processOptions{})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{"cwd": ws, "mode": "auto", "model": scriptModel(
		turn(toolCall("w1", "write", obj{"path": "docs/notes.md", "content": hooksConfig})),
		turn(toolCall("l1", "ls", obj{"path": "."})),
		turn(text("done")))})
	reqs := promptRequests(t, d, sid, "go", wsDecide("deny"))
	var asked []string
	for _, r := range reqs {
		if r.method() == "beforeToolCall" {
			asked = append(asked, r.get("params.toolCallId").String())
		}
	}
	if !slices.Equal(asked, []string{"w1"}) {
		t.Errorf("asked about %v, want [w1]: the write through the link must ask in auto", asked)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".pid")); err == nil {
		t.Error(".pid was created through the link")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the hook written through the link ran")
	}
}

// Issue 31 M8: a PreToolUse hook whose updatedInput takes a bash command out of the sandbox
// (and says allow) makes pid ask the editor, with sandbox: {escalation: true, justification}
// and the arguments that would run, in auto mode and where an allow rule matches the
// command; denied, nothing runs outside.
func TestE2EHookEscalationAsks(t *testing.T) {
	outside := t.TempDir()
	marker := filepath.Join(outside, "ran-outside")
	updated := mustJSON(obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse", "permissionDecision": "allow",
		"updatedInput": obj{"command": "touch " + marker, "unsandboxed": true, "justification": "the hook wants it"}}})
	for _, tc := range []struct {
		name string
		cfg  obj
	}{
		{"auto", obj{"mode": "auto"}},
		{"allow rule", obj{"permissions": obj{"tools": obj{"bash": []obj{{"pattern": "touch", "decision": "allow"}, {"pattern": "echo", "decision": "allow"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ws := newWorkspaceDir(t, nil)
			d := startProcess(t, processOptions{Env: sessionEnv(t)})
			initWorkspace(d, obj{"beforeToolCall": true}, ws)
			cfg := obj{"cwd": ws, "hooks": obj{"PreToolUse": []obj{hookCmd("bash", "printf '%s' '"+updated+"'", 0)}},
				"model": scriptModel(turn(toolCall("b1", "bash", obj{"command": "echo hi"})), turn(text("done")))}
			for k, v := range tc.cfg {
				cfg[k] = v
			}
			sid := d.newSession(cfg)
			reqs := promptRequests(t, d, sid, "go", wsDecide("deny"))
			if len(reqs) != 1 || reqs[0].method() != "beforeToolCall" {
				t.Fatalf("requests %v, want one beforeToolCall", reqs)
			}
			p := reqs[0].get("params")
			if !p.Get("sandbox.escalation").Bool() || p.Get("sandbox.justification").String() != "the hook wants it" {
				t.Errorf("beforeToolCall params %s lack sandbox: {escalation: true, justification}", p.Raw)
			}
			if !p.Get("args.unsandboxed").Bool() || !strings.Contains(p.Get("args.command").String(), marker) {
				t.Errorf("beforeToolCall shows %s, not the arguments that would run", p.Get("args").Raw)
			}
			if p.Get("always").Exists() {
				t.Errorf("an escalation a hook made offers \"always\": %s", p.Get("always").Raw)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran outside the sandbox")
			}
		})
	}
}

// Issue 31 L19: plan mode does not run an MCP tool its server does not mark read-only
// (readOnlyHint), even when an allow rule matches it (an MCP server runs outside the
// sandbox): the model gets an error result saying plan mode, and nothing is asked. A tool
// marked read-only runs as the rules say.
func TestMCPPlanModeHoldsToolsNotMarkedReadOnly(t *testing.T) {
	d, sid, _ := eagerSession(t, obj{"beforeToolCall": true}, obj{"mode": "plan", "mcpServers": testServers(obj{"load": "eager"}),
		"permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	b := wsExecute(t, d, sid, "", nil, wsCall("e1", "mcp__t__echo", obj{"text": "changed"}), wsCall("p1", "mcp__t__peek", obj{"text": "k"}))
	e := b.msg(t, "e1")
	if !e.Get("isError").Bool() || !strings.Contains(wsText(e), "plan mode") || !strings.Contains(wsText(e), "readOnlyHint") {
		t.Errorf("echo in plan mode: %s, want an error result saying plan mode holds it", e.Raw)
	}
	if p := b.msg(t, "p1"); p.Get("isError").Bool() || wsText(p) != "k" {
		t.Errorf("peek (readOnlyHint) in plan mode: %s", p.Raw)
	}
	stopDaemon(t, d)
}

// Issue 31 L20: of one message's task calls, the first 16 run; the others end at once with
// an error result the model can act on, and start no child.
func TestSubagentsAtMost16TaskCallsPerMessage(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	var calls []obj
	children := obj{}
	for i := 1; i <= 20; i++ {
		desc := fmt.Sprintf("look %02d", i)
		calls = append(calls, toolCall(fmt.Sprintf("t%02d", i), "task", obj{"description": desc, "prompt": "look"}))
		children[desc] = scriptModel(turn(text(fmt.Sprintf("answer %02d", i))))
	}
	model := scriptModel(turn(calls...), turn(text("done")))
	model["subagents"] = children
	sid := d.newSession(obj{"cwd": ws, "model": model})
	if reqs := promptRequests(t, d, sid, "look everywhere", wsDecide("deny")); len(reqs) != 0 {
		t.Errorf("%d requests to the editor, want none (explore children run read-only tools)", len(reqs))
	}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("t%02d", i)
		txt, isErr := resultText(d, sid, id)
		switch {
		case i <= 16 && (isErr || txt != fmt.Sprintf("answer %02d", i)):
			t.Errorf("%s: %q (error %v), want its child's answer", id, txt, isErr)
		case i > 16 && (!isErr || !strings.Contains(txt, "at most 16 task calls")):
			t.Errorf("%s: %q (error %v), want an error result naming the limit", id, txt, isErr)
		}
	}
	if n := len(subagentNotes(d, sid, "subagentStart")); n != 16 {
		t.Errorf("%d children started, want 16", n)
	}
}

// Issue 31 L12 through the daemon: a PreToolUse hook that prints its decision and then 3 MB
// of white space is still obeyed, and the editor is told how much the hook wrote and that
// only the first MiB was kept.
func TestHookOutputCapIsSaid(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	loud := `printf '{"decision":"block","reason":"too loud"}'; head -c 3000000 /dev/zero | tr '\0' ' '`
	sid := d.newSession(obj{"cwd": ws, "hooks": obj{"PreToolUse": []obj{hookCmd("ls", loud, 0)}},
		"model": scriptModel(turn(toolCall("l1", "ls", obj{"path": "."})), turn(text("done")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	if txt, isErr := resultText(d, sid, "l1"); !isErr || !strings.Contains(txt, "too loud") {
		t.Errorf("the hook's decision before 3 MB of output: %q (error %v), want it denied", txt, isErr)
	}
	said := false
	for _, m := range d.logMessages() {
		if s := m.get("params.message").String(); strings.Contains(s, "wrote 3000040 bytes to stdout") && strings.Contains(s, "1048576") {
			said = true
		}
	}
	if !said {
		t.Errorf("no window/logMessage says how much the hook wrote:\n%s", d.dump())
	}
}

// Issue 31: an "always" answer to a request to leave the sandbox covers exactly that command
// in this session: the same command runs outside again unasked; a longer one starting with
// the same words (which a bash rule's pattern would cover) is asked about again; the
// question's always scope says "exactly".
func TestE2EEscalationAlwaysCoversExactlyTheCommand(t *testing.T) {
	outside := t.TempDir()
	a, b := filepath.Join(outside, "a"), filepath.Join(outside, "b")
	esc := func(id, cmd string) obj {
		return toolCall(id, "bash", obj{"command": cmd, "unsandboxed": true, "justification": "next to the workspace"})
	}
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{"cwd": ws, "mode": "auto", "model": scriptModel(
		turn(esc("e1", "touch "+a)), turn(esc("e2", "rm "+a+" && touch "+a)), turn(esc("e3", "touch "+a)),
		turn(esc("e4", "touch "+a+" "+b)), turn(text("done")))})
	answers := map[string]string{"e1": "allowAlways", "e2": "allowAlways", "e4": "deny"}
	reqs := promptRequests(t, d, sid, "go", func(m *wireMsg) any {
		if m.method() != "beforeToolCall" {
			return nil
		}
		return obj{"decision": answers[m.get("params.toolCallId").String()]}
	})
	var asked []string
	for _, r := range reqs {
		if r.method() == "beforeToolCall" {
			asked = append(asked, r.get("params.toolCallId").String())
		}
	}
	if strings.Join(asked, ",") != "e1,e2,e4" {
		t.Fatalf("asked about %v, want e1, e2 and e4 (e3 is e1's command exactly)", asked)
	}
	if desc := reqs[0].get("params.always.description").String(); !strings.HasPrefix(desc, "exactly the bash command `touch "+a+"`") || !strings.Contains(desc, "outside the sandbox") {
		t.Errorf("the escalation's always scope says %q", desc)
	}
	if _, err := os.Stat(b); err == nil {
		t.Error("the longer command ran outside the sandbox unasked")
	}
	stopDaemon(t, d)
}

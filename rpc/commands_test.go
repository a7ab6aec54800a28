// This file tests the commands through the real daemon: commands/list (built-in, the user's
// prompt templates, a trusted workspace's, bad files left out, a file added later), /NAME
// prompts that answer by themselves (commandOutput, the result's command, nothing sent to
// the model), prompt templates sent to the model with $ARGUMENTS filled in, text that only
// looks like a command, an untrusted workspace's command that never runs, and /rewind and
// /compact on a session with checkpoints.

package rpc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// commandNames returns the names commands/list answers for sid.
func commandNames(d *daemon, sid string) []string {
	var out []string
	for _, c := range d.call("commands/list", obj{"sessionId": sid}).Get("commands").Array() {
		out = append(out, c.Get("name").String())
	}
	return out
}

// lastUserText returns the text of the last user message of a chat-completions request.
func lastUserText(body []byte) string {
	msgs := gjson.GetBytes(body, "messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "user" {
			c := msgs[i].Get("content")
			if c.IsArray() {
				return c.Get("0.text").String()
			}
			return c.String()
		}
	}
	return ""
}

var builtinNames = []string{"compact", "init", "review", "plan", "mode", "model", "mcp", "rewind", "jobs", "help"}

func TestCommandsNative(t *testing.T) {
	srv := newFakeOpenAI(t,
		sseAnswer(textAnswer("hello world")...),
		sseAnswer(textAnswer("noted")...),
		sseAnswer(textAnswer("plain text")...),
		sseAnswer(textAnswer("a path")...),
	)
	env := append(sessionEnv(t), e2eEnv...)
	config := strings.TrimPrefix(env[0], "XDG_CONFIG_HOME=")
	userDir := filepath.Join(config, "pid", "commands")
	wsWriteFile(t, filepath.Join(userDir, "greet.md"), "---\ndescription: Greets someone\n---\nSay hello to $ARGUMENTS.\n")
	wsWriteFile(t, filepath.Join(userDir, "compact.md"), "a file named like a built-in command is left out\n")
	wsWriteFile(t, filepath.Join(userDir, "big.md"), strings.Repeat("x", 65<<10))
	wsWriteFile(t, filepath.Join(userDir, "bad name.md"), "a name with a space\n")
	base, ws := newWorkspaceDir(t, map[string]string{
		".pid/commands/wsonly.md": "The workspace's own command.\n",
		".pid/settings.json":      `{"permissions": {"tools": {"bash": "allow"}}}`,
	})
	// A workspace's command that is a link to a file outside it is never read.
	wsWriteFile(t, filepath.Join(base, "secret.txt"), "outside the workspace\n")
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(ws, ".pid", "commands", "link.md")); err != nil {
		t.Fatal(err)
	}
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "model": e2eModel(srv)})

	want := append(slices.Clone(builtinNames), "greet")
	if got := commandNames(d, sid); !slices.Equal(got, want) {
		t.Fatalf("commands/list names %v, want %v (the untrusted workspace's, the built-in's namesake, the big and the badly named files left out)", got, want)
	}
	reported := ""
	for _, m := range d.logMessages() {
		reported += m.get("params.message").String() + "\n"
	}
	if !strings.Contains(reported, "big.md is left out: it is longer than 64 KiB") {
		t.Errorf("the big command file was not reported:\n%s", reported)
	}
	list := d.call("commands/list", obj{"sessionId": sid}).Get("commands")
	greet := list.Get(`#(name=="greet")`)
	if greet.Get("description").String() != "Greets someone" || greet.Get("input.hint").String() == "" {
		t.Errorf("greet: %s", greet.Raw)
	}
	if list.Get(`#(name=="compact").input.hint`).String() == "" || list.Get(`#(name=="plan").input`).Exists() {
		t.Errorf("compact takes input and plan none: %s", list.Raw)
	}
	if code, _ := d.callErr("commands/list", obj{"sessionId": "nope"}); code != -32602 {
		t.Errorf("commands/list of an unknown session: code %d", code)
	}

	// A command that answers by itself: commandOutput before the result, no messages, no
	// model call.
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "/help"})
	resp := d.response(id)
	res := resp.get("result")
	out := d.notification("commandOutput", func(m *wireMsg) bool { return m.get("params.name").String() == "help" })
	if out.seq > resp.seq || out.get("params.sessionId").String() != sid {
		t.Errorf("commandOutput %s must come before the result", out)
	}
	text := out.get("params.text").String()
	if !strings.Contains(text, "/greet") || !strings.Contains(text, "Greets someone") || strings.Contains(text, "wsonly") {
		t.Errorf("/help's text:\n%s", text)
	}
	if res.Get("command.name").String() != "help" || res.Get("command.output").String() != text || res.Get("messages").Raw != "[]" || res.Get("stopReason").String() != "stop" {
		t.Errorf("/help's result: %s", res.Raw)
	}
	if got := d.call("session/prompt", obj{"sessionId": sid, "text": "/plan"}).Get("command.output").String(); got != "No plan yet." {
		t.Errorf("/plan: %q", got)
	}
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/mode plan"})
	if !strings.HasPrefix(res.Get("command.output").String(), "Mode: plan.") || res.Get("command.isError").Bool() {
		t.Errorf("/mode plan: %s", res.Raw)
	}
	d.notification("modeUpdate", func(m *wireMsg) bool { return m.get("params.currentModeId").String() == "plan" })
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/mode yolo"})
	if !res.Get("command.isError").Bool() || !strings.Contains(res.Get("command.output").String(), "acceptEdits") {
		t.Errorf("/mode yolo: %s", res.Raw)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "/mode default"})
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/model openai/nope"})
	if !res.Get("command.isError").Bool() {
		t.Errorf("/model of a model not listed: %s", res.Raw)
	}
	if got := d.call("session/prompt", obj{"sessionId": sid, "text": "/mcp"}).Get("command.output").String(); got != "The session has no MCP servers." {
		t.Errorf("/mcp: %q", got)
	}
	if n := len(srv.requests()); n != 0 {
		t.Fatalf("commands that answer by themselves made %d model calls", n)
	}

	// A prompt template: the model gets it with $ARGUMENTS filled in.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/greet world"})
	if res.Get("command.name").String() != "greet" || res.Get("command.output").Exists() || res.Get("messages.1.content.0.text").String() != "hello world" {
		t.Errorf("/greet world: %s", res.Raw)
	}
	reqs := srv.requests()
	if len(reqs) != 1 || lastUserText(reqs[0].body) != "Say hello to world." {
		t.Fatalf("/greet world sent the model %d requests, the last user text %q", len(reqs), lastUserText(reqs[len(reqs)-1].body))
	}
	// Not a command: the text goes to the model as it is.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/usr/bin is empty"})
	if res.Get("command").Exists() {
		t.Errorf("/usr/bin is empty ran a command: %s", res.Raw)
	}
	// An untrusted workspace's command is no command.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/wsonly now"})
	if res.Get("command").Exists() {
		t.Errorf("/wsonly of an untrusted workspace ran: %s", res.Raw)
	}
	reqs = srv.requests()
	if len(reqs) != 3 || lastUserText(reqs[1].body) != "/usr/bin is empty" || lastUserText(reqs[2].body) != "/wsonly now" {
		t.Fatalf("requests %d; user texts %q, %q", len(reqs), lastUserText(reqs[1].body), lastUserText(reqs[2].body))
	}
	// None of what the commands showed entered the model's context.
	body := string(reqs[2].body)
	for _, s := range []string{"/help", "Commands:", "No plan yet", "Mode: plan", "/mode", "/mcp", "MCP servers"} {
		if strings.Contains(body, s) {
			t.Errorf("the model was sent %q: %s", s, body)
		}
	}
	if n := len(gjson.Get(body, `messages.#(role=="user")#`).Array()); n != 3 {
		t.Errorf("the model saw %d user messages, want 3 (greet, /usr/bin, /wsonly)", n)
	}

	// Trusting the folder brings its commands; a file added is listed at once.
	d.call("trust/grant", obj{"folder": ws})
	wsWriteFile(t, filepath.Join(userDir, "later.md"), "Added later.\n")
	want = append(slices.Clone(builtinNames), "greet", "later", "wsonly")
	if got := commandNames(d, sid); !slices.Equal(got, want) {
		t.Errorf("after trust/grant and a new file: %v, want %v (a link is no command)", got, want)
	}
	// A name that is no command name is an ordinary prompt, even when it ends in one.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/../wsonly"})
	reqs = srv.requests()
	if res.Get("command").Exists() || len(reqs) != 4 || lastUserText(reqs[3].body) != "/../wsonly" {
		t.Errorf("/../wsonly: %s", res.Raw)
	}
}

func TestCommandPlanShowsTheLastTodoWrite(t *testing.T) {
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	d.initialize(nil)
	todos := []obj{{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "in_progress", "priority": "high"}}
	sid := d.newSession(obj{"model": scriptModel(
		turn(toolCall("t1", "todo_write", obj{"todos": todos[:1]})),
		turn(toolCall("t2", "todo_write", obj{"todos": todos})),
		turn(text("planned")),
	)})
	if got := d.call("session/prompt", obj{"sessionId": sid, "text": "/plan"}).Get("command.output").String(); got != "No plan yet." {
		t.Errorf("/plan before any: %q", got)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "plan it"})
	want := "Plan:\n- [x] Read the code\n- [~] Fix the bug (high priority)"
	if got := d.call("session/prompt", obj{"sessionId": sid, "text": "/plan"}).Get("command.output").String(); got != want {
		t.Errorf("/plan: %q, want %q", got, want)
	}
}

func TestCommandsRewindAndCompact(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(
		turn(text("first")),
		turn(toolCall("r1", "read", obj{"path": "a.txt"})),
		turn(toolCall("w1", "write", obj{"path": "b.txt", "content": "new\n"}), toolCall("e1", "edit", obj{"path": "a.txt", "edits": []obj{{"oldText": "alpha", "newText": "ALPHA"}}})),
		turn(text("wrote b.txt")),
		turn(text("second")),
		turn(text("third")),
	)
	model["compaction"] = obj{"keepRecentTokens": 1}
	model["summaries"] = []obj{turn(text("the summary"))}
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": model})

	res := d.call("session/prompt", obj{"sessionId": sid, "text": "/rewind"})
	if res.Get("command.output").String() != "Nothing to rewind: no prompt has run in this conversation yet." {
		t.Errorf("/rewind of a new session: %s", res.Raw)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "read a.txt first"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "write b.txt"})
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Fatalf("the run did not write b.txt: %v\n%s", err, d.dump())
	}
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/rewind"})
	out := res.Get("command.output").String()
	if res.Get("command.isError").Bool() || !strings.Contains(out, `"write b.txt"`) || !strings.Contains(out, "removed "+filepath.Join(ws, "b.txt")) || !strings.Contains(out, "restored "+filepath.Join(ws, "a.txt")) {
		t.Errorf("/rewind: %s", res.Raw)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt is still there after /rewind: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != "alpha\n" {
		t.Errorf("a.txt after /rewind: %q", got)
	}
	// The conversation went back too: the loaded session ends with the first prompt.
	var texts []string
	for _, m := range d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array() {
		texts = append(texts, m.Get("prompt").String())
	}
	if len(texts) != 3 || !strings.HasPrefix(texts[2], "Before rewinding to:") {
		t.Errorf("checkpoints after /rewind: %v (no /command opens one)", texts)
	}
	// A second /rewind goes to the prompt before.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/rewind"})
	if !strings.Contains(res.Get("command.output").String(), `"read a.txt first"`) {
		t.Errorf("second /rewind: %s", res.Raw)
	}
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "/compact"})
	if !res.Get("command.isError").Bool() || !strings.Contains(res.Get("command.output").String(), "nothing to compact") {
		t.Errorf("/compact of an empty conversation: %s", res.Raw)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "one"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "two"})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "/compact the file names"})
	resp := d.response(id)
	res = resp.get("result")
	if res.Get("command.isError").Bool() || !strings.HasPrefix(res.Get("command.output").String(), "Compacted the conversation") {
		t.Errorf("/compact: %s\n%s", res.Raw, d.dump())
	}
	end := d.notification("compactionEnd", func(m *wireMsg) bool {
		return m.get("params.sessionId").String() == sid && !m.get("params.error").Exists()
	})
	if end.seq > resp.seq || !strings.Contains(end.get("params.summary").String(), "the summary") || end.get("params.reason").String() != "manual" {
		t.Errorf("compactionEnd %s", end)
	}
	items := d.call("session/load", obj{"sessionId": sid}).Get("messages").Array()
	for _, it := range items {
		if strings.Contains(it.Raw, "/compact") || strings.Contains(it.Raw, "/rewind") || strings.Contains(it.Raw, "Compacted the") {
			t.Errorf("a command entered the transcript: %s", it.Raw)
		}
	}
}

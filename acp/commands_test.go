// This file tests the commands on the ACP face: available_commands_update right after
// session/new's answer, with session/load and session/resume, and at a prompt once the list
// changed; a command that answers by itself (an agent_message_chunk, _meta.pid.command, no
// model call, nothing in the replayed conversation); a prompt template sent to the model;
// /model's config_option_update.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// commandsOf returns the names of an available_commands_update.
func commandsOf(u gjson.Result) []string {
	var out []string
	for _, c := range u.Get("availableCommands").Array() {
		out = append(out, c.Get("name").String())
	}
	return out
}

// commandUpdates returns the available_commands_update updates among ms.
func commandUpdates(t *testing.T, sid string, ms []*msg) []gjson.Result {
	var out []gjson.Result
	for _, u := range updates(t, sid, ms) {
		if u.Get("sessionUpdate").String() == "available_commands_update" {
			out = append(out, u)
		}
	}
	return out
}

// chunks returns the text of the agent_message_chunk updates among ms.
func chunks(t *testing.T, sid string, ms []*msg) string {
	var b strings.Builder
	for _, u := range updates(t, sid, ms) {
		if u.Get("sessionUpdate").String() == "agent_message_chunk" {
			b.WriteString(u.Get("content.text").String())
		}
	}
	return b.String()
}

// addCommand writes the command file dir/name.md whole, then renames it into place, so that
// a watcher sees it once, complete.
func addCommand(t *testing.T, dir, name, text string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".md")); err != nil {
		t.Fatal(err)
	}
}

var builtinCommandNames = []string{"compact", "init", "review", "plan", "mode", "model", "mcp", "rewind", "jobs", "help"}

func TestCommandsACP(t *testing.T) {
	userSettings(t, `{"models": [{"provider": "openai", "id": "other", "name": "Other", "apiKeyEnv": "HOME", "baseUrl": "http://127.0.0.1:9/v1"}]}`)
	userDir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pid", "commands")
	if err := os.MkdirAll(userDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "fix.md"), []byte("---\ndescription: Fix an issue\nargument-hint: issue number\n---\nFix issue #$ARGUMENTS and run the tests.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t)
	c.commands = true
	c.initialize(nil)
	cwd := t.TempDir()
	id := c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{},
		"_meta": map[string]any{"pid": json.RawMessage(script("", textTurn("fixed")))}})
	res, before := c.result(id, nil)
	sid := res.Get("sessionId").String()
	if n := len(commandUpdates(t, sid, before)); n != 0 {
		t.Errorf("%d available_commands_update before session/new's answer", n)
	}
	// Right after the answer: the commands.
	m := c.next()
	kind, u := m.update()
	if kind != "available_commands_update" || m.get("params.sessionId").String() != sid {
		t.Fatalf("after session/new's answer came %s, want available_commands_update", m.raw)
	}
	want := append(slices.Clone(builtinCommandNames), "fix")
	if got := commandsOf(u); !slices.Equal(got, want) {
		t.Errorf("available commands %v, want %v", got, want)
	}
	fix := u.Get(`availableCommands.#(name=="fix")`)
	if fix.Get("description").String() != "Fix an issue" || fix.Get("input.hint").String() != "issue number" {
		t.Errorf("fix: %s", fix.Raw)
	}
	// A command file added (written whole, then renamed into place): the client hears of it
	// without a prompt.
	addCommand(t, userDir, "watched", "Watched.\n")
	m = c.next()
	if kind, u := m.update(); kind != "available_commands_update" || !slices.Contains(commandsOf(u), "watched") {
		t.Fatalf("after a command file was added came %s, want available_commands_update with it", m.raw)
	}

	// A command that answers by itself: its text as a message chunk, the answer's
	// _meta.pid.command; the list did not change, so no update.
	res, before = c.result(c.prompt(sid, "/plan"), nil)
	if got := chunks(t, sid, before); got != "No plan yet." {
		t.Errorf("/plan showed %q", got)
	}
	if res.Get("stopReason").String() != "end_turn" || res.Get("_meta.pid.command.name").String() != "plan" || res.Get("_meta.pid.command.output").String() != "No plan yet." {
		t.Errorf("/plan answered %s", res.Raw)
	}
	if n := len(commandUpdates(t, sid, before)); n != 0 {
		t.Errorf("an unchanged list was sent again (%d)", n)
	}
	// A command file added: the next prompt first tells the new list, then runs the
	// template, which the model gets with $ARGUMENTS filled in.
	addCommand(t, userDir, "later", "Added later.\n")
	res, before = c.result(c.prompt(sid, "/fix 42"), nil)
	ups := commandUpdates(t, sid, before)
	if len(ups) != 1 || !slices.Contains(commandsOf(ups[0]), "later") {
		t.Errorf("after a file was added, the prompt's updates %v", ups)
	}
	if res.Get("_meta.pid.command.name").String() != "fix" || res.Get("_meta.pid.command.output").Exists() || chunks(t, sid, before) != "fixed" {
		t.Errorf("/fix 42 answered %s, showed %q", res.Raw, chunks(t, sid, before))
	}

	// /model: the options follow.
	res, before = c.result(c.prompt(sid, "/model openai/other"), nil)
	if res.Get("_meta.pid.command.isError").Bool() || !strings.Contains(chunks(t, sid, before), "openai/other") {
		t.Errorf("/model openai/other: %s", res.Raw)
	}
	var opts []string
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "config_option_update" {
			opts = append(opts, u.Get(`configOptions.#(id=="model").currentValue`).String())
		}
	}
	if !slices.Equal(opts, []string{"openai/other"}) {
		t.Errorf("config_option_update after /model: %v", opts)
	}
	// session/load: the replay has the template's text, none of /plan or /model, and the
	// commands come before the answer.
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	_, before = c.result(c.request("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), nil)
	if ups := commandUpdates(t, sid, before); len(ups) != 1 || !slices.Contains(commandsOf(ups[0]), "later") {
		t.Errorf("session/load's available_commands_update: %v", ups)
	}
	var users []string
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "user_message_chunk" {
			users = append(users, u.Get("content.text").String())
		}
	}
	if !slices.Equal(users, []string{"Fix issue #42 and run the tests."}) {
		t.Errorf("replayed user messages %q: only the template's prompt entered the conversation", users)
	}
	_, before = c.result(c.request("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), nil)
	if n := len(commandUpdates(t, sid, before)); n != 1 {
		t.Errorf("session/resume sent %d available_commands_update", n)
	}
}

func TestCommandsACPCompactAndTrust(t *testing.T) {
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".pid", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".pid", "commands", "deploy.md"), []byte("Deploy it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Untrusted: the cwd's command is neither listed nor run.
	userSettings(t, `{}`)
	c := start(t)
	c.commands = true
	c.initialize(map[string]any{"session": map[string]any{"compaction": map[string]any{}}})
	cfg := `{"model":{"provider":"script","compaction":{"keepRecentTokens":1},"summaries":[` + textTurn("the summary") + `],"turns":[` +
		textTurn("one") + "," + textTurn("two") + "," + textTurn("not deployed") + `]}}`
	sid := c.newSession(cwd, cfg)
	if m := c.next(); !slices.Equal(commandsOf(m.get("params.update")), builtinCommandNames) {
		t.Errorf("commands of an untrusted cwd: %s", m.raw)
	}
	c.result(c.prompt(sid, "first"), nil)
	c.result(c.prompt(sid, "second"), nil)
	res, before := c.result(c.prompt(sid, "/compact keep the names"), nil)
	var kinds []string
	for _, u := range updates(t, sid, before) {
		kinds = append(kinds, u.Get("sessionUpdate").String()+" "+u.Get("status").String())
	}
	if !slices.Equal(kinds, []string{"compaction_update in_progress", "compaction_update completed", "agent_message_chunk "}) ||
		!strings.HasPrefix(chunks(t, sid, before), "Compacted the conversation") || res.Get("_meta.pid.command.name").String() != "compact" {
		t.Errorf("/compact: updates %v, answer %s", kinds, res.Raw)
	}
	res, before = c.result(c.prompt(sid, "/deploy now"), nil)
	if res.Get("_meta.pid.command").Exists() || chunks(t, sid, before) != "not deployed" {
		t.Errorf("/deploy of an untrusted cwd ran: %s", res.Raw)
	}
	c.stop()

	// Trusted through the user settings: listed, for a new session.
	userSettings(t, `{"trustedFolders": [`+strconvQuote(cwd)+`]}`)
	c2 := start(t)
	c2.commands = true
	c2.initialize(nil)
	sid2 := c2.newSession(cwd, script("", textTurn("x")))
	if m := c2.next(); !slices.Contains(commandsOf(m.get("params.update")), "deploy") || m.get("params.sessionId").String() != sid2 {
		t.Errorf("commands of a trusted cwd: %s", m.raw)
	}
}

// strconvQuote is s as a JSON string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

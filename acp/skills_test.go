// This file tests skills on the ACP face (issue 39): each skill in use is one of the
// available commands (its description, an input), one added later is told without a
// prompt, and /NAME runs it.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSkillCommandsACP(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pid", "skills")
	for name, text := range map[string]string{
		"deploy/SKILL.md": "---\ndescription: Deploys the service\n---\nDeploy with make deploy.\n",
		"plan/SKILL.md":   "---\ndescription: Named like a built-in command\n---\nbody\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t)
	c.commands = true
	c.initialize(nil)
	id := c.request("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{},
		"_meta": map[string]any{"pid": json.RawMessage(script("", textTurn("deployed")))}})
	res, _ := c.result(id, nil)
	sid := res.Get("sessionId").String()
	m := c.next()
	kind, u := m.update()
	if kind != "available_commands_update" {
		t.Fatalf("after session/new's answer came %s", m.raw)
	}
	if got, want := commandsOf(u), append(slices.Clone(builtinCommandNames), "deploy"); !slices.Equal(got, want) {
		t.Errorf("available commands %v, want %v (a skill named like a built-in command is not one)", got, want)
	}
	if d := u.Get(`availableCommands.#(name=="deploy")`); d.Get("description").String() != "Deploys the service" || d.Get("input.hint").String() == "" {
		t.Errorf("deploy: %s", d.Raw)
	}
	// A skill added (its folder made elsewhere, then moved in whole): told without a prompt.
	tmp := filepath.Join(t.TempDir(), "later")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "SKILL.md"), []byte("---\ndescription: Added later\n---\nLater.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "later")); err != nil {
		t.Fatal(err)
	}
	for {
		m = c.next()
		kind, u := m.update()
		if kind != "available_commands_update" {
			t.Fatalf("after a skill was added came %s", m.raw)
		}
		if slices.Contains(commandsOf(u), "later") {
			break
		}
	}
	res, _ = c.result(c.prompt(sid, "/deploy now"), nil)
	if res.Get("_meta.pid.command.name").String() != "deploy" || res.Get("stopReason").String() != "end_turn" {
		t.Errorf("/deploy answered %s", res.Raw)
	}
}

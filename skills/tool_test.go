// This file tests the skill tool (Tool) over real skill files, and the skills' commands
// (Commands).

package skills

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/commands"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestTool(t *testing.T) {
	home, _ := env(t)
	writeSkill(t, filepath.Join(home, ".claude/skills/pdf"), "name: pdf\ndescription: fill PDF forms", "Run scripts/fill.py.\n")
	list, _ := Find(nil, UserDirs())
	var loaded []string
	tool := Tool(func() []Skill { return list }, func(s Skill) { loaded = append(loaded, s.Name) })
	if tool.Name != ToolName || tool.Execute == nil || !json.Valid(tool.Parameters) {
		t.Fatalf("tool = %+v", tool)
	}
	call := func(args string) (toolexec.Result, error) {
		return tool.Execute(context.Background(), toolexec.Call{ID: "c1", Name: ToolName, Args: json.RawMessage(args)}, nil)
	}
	res, err := call(`{"name": " /pdf "}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Text != ToolText(list[0]) || res.Content[0].Type != llm.Text("").Type {
		t.Errorf("result = %+v, want the skill's ToolText", res.Content)
	}
	if d, _ := res.Details.(map[string]string); d["name"] != "pdf" || d["path"] != list[0].Path {
		t.Errorf("details = %v", res.Details)
	}
	if !slices.Equal(loaded, []string{"pdf"}) {
		t.Errorf("loaded = %q, want [pdf]", loaded)
	}
	if _, err := call(`{"name": "docx"}`); err == nil || err.Error() != `There is no skill "docx". The skills in use: pdf.` {
		t.Errorf("unknown skill: %v", err)
	}
	empty := Tool(func() []Skill { return nil }, nil)
	if _, err := empty.Execute(context.Background(), toolexec.Call{Args: json.RawMessage(`{"name":"pdf"}`)}, nil); err == nil || !strings.Contains(err.Error(), "no skill is in use") {
		t.Errorf("no skills: %v", err)
	}
	if len(loaded) != 1 {
		t.Errorf("loaded called for a skill not found: %q", loaded)
	}
	if Tool(nil, nil).Execute != nil {
		t.Error("the description-only tool can execute")
	}
	if v := tool.View(json.RawMessage(`{"name":"pdf"}`), nil); v.Kind != toolexec.KindRead || v.Title != "Skill: pdf" {
		t.Errorf("view = %+v", v)
	}
}

func TestCommands(t *testing.T) {
	list := []Skill{
		{Name: "pdf", Description: "fill PDF forms", Path: "/s/pdf/SKILL.md", Body: "Fill it."},
		{Name: "init", Description: "taken by a built-in", Path: "/s/init/SKILL.md"},
		{Name: "old", Ignored: "left out", Path: "/s/old/SKILL.md"},
		{Name: "pdf", Description: "a second pdf", Path: "/t/pdf/SKILL.md"},
	}
	got := Commands(list, []commands.Command{{Info: commands.Info{Name: "init"}}})
	if len(got) != 1 {
		t.Fatalf("commands = %+v, want pdf only", got)
	}
	c := got[0]
	if c.Name != "pdf" || c.Description != "fill PDF forms" || c.Source != commands.Skill || c.Path != "/s/pdf/SKILL.md" || c.Template != CommandText(list[0], "") || c.Input == nil {
		t.Errorf("command = %+v", c)
	}
}

package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// env gives the test a home folder and a config folder of its own.
func env(t *testing.T) (home, config string) {
	t.Helper()
	dir := t.TempDir()
	home, config = filepath.Join(dir, "home"), filepath.Join(dir, "config")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", config)
	return home, config
}

// parent is a general child's parent tools, in the session's order.
var parent = []string{"read", "write", "edit", "bash", "grep", "find", "ls", "todo_write", "task", "diagnostics"}

func TestReviewerGetsReadAndGrepOnly(t *testing.T) {
	home, _ := env(t)
	ws := filepath.Join(filepath.Dir(home), "ws")
	write(t, filepath.Join(ws, ".claude/agents/reviewer.md"), `---
name: reviewer
description: Reviews code for bugs
tools: Read, Grep
model: inherit
color: blue
---
You are a careful reviewer.
`)
	list, notes := Find([]Folder{{Path: ws, Trusted: true}}, UserDirs())
	if len(notes) != 0 || len(list) != 1 {
		t.Fatalf("Find = %+v, %v", list, notes)
	}
	a := list[0]
	if !a.Used() || a.Name != "reviewer" || a.Description != "Reviews code for bugs" || a.Prompt != "You are a careful reviewer." || a.Source != SourceWorkspace {
		t.Errorf("agent = %+v", a)
	}
	if want := []string{`"color" is ignored: pid does not use it`}; !cmp.Equal(a.Warnings, want) {
		t.Errorf("warnings %q, want %q", a.Warnings, want)
	}
	tools, tnotes := a.ToolSet(parent)
	if want := []string{"read", "grep"}; !cmp.Equal(tools, want) || len(tnotes) != 0 {
		t.Errorf("ToolSet = %q (%q), want exactly %q", tools, tnotes, want)
	}
	p := Model{Provider: "anthropic", ID: "claude-opus-4-5"}
	if m, w := a.ResolveModel([]Model{{Provider: "anthropic", ID: "claude-sonnet-4-5"}}, p); m != p || w != "" {
		t.Errorf("model inherit = %v (%q), want the parent's %v", m, w, p)
	}
}

func TestToolSet(t *testing.T) {
	for _, c := range []struct {
		name  string
		a     Agent
		want  []string
		notes int
	}{
		{"no tools: the parent's but task", Agent{}, []string{"read", "write", "edit", "bash", "grep", "find", "ls", "todo_write", "diagnostics"}, 0},
		{"Claude Code's names mapped", Agent{Tools: []string{"Glob", "LS", "MultiEdit", "Edit", "Write", "Bash"}}, []string{"write", "edit", "bash", "find", "ls"}, 0},
		{"pid's names as they are", Agent{Tools: []string{"read", "todo_write"}}, []string{"read", "todo_write"}, 0},
		{"Task and task never", Agent{Tools: []string{"Task", "task", "Read"}}, []string{"read"}, 2},
		{"WebFetch only when the parent has fetch", Agent{Tools: []string{"WebFetch", "Read"}}, []string{"read"}, 1},
		{"unknown tools left out", Agent{Tools: []string{"NotebookEdit", "Read"}}, []string{"read"}, 1},
		{"a narrowed tool is left out, not widened", Agent{Tools: []string{"Bash(git status)", "Read"}}, []string{"read"}, 1},
		{"an empty list is no tools", Agent{Tools: []string{}}, []string{}, 0},
		{"* is the parent's but task", Agent{Tools: []string{"*"}}, []string{"read", "write", "edit", "bash", "grep", "find", "ls", "todo_write", "diagnostics"}, 0},
		{"opencode's switches take tools off", Agent{ToolsOff: []string{"write", "edit", "diag*"}}, []string{"read", "bash", "grep", "find", "ls", "todo_write"}, 0},
	} {
		got, notes := c.a.ToolSet(parent)
		if !cmp.Equal(got, c.want) || len(notes) != c.notes {
			t.Errorf("%s: ToolSet = %q, notes %q; want %q and %d notes", c.name, got, notes, c.want, c.notes)
		}
	}
	// Never a tool the parent lacks: an explore-like parent.
	got, _ := Agent{Tools: []string{"Read", "Write", "Bash"}}.ToolSet([]string{"read", "grep", "bash"})
	if want := []string{"read", "bash"}; !cmp.Equal(got, want) {
		t.Errorf("ToolSet of a narrow parent = %q, want %q", got, want)
	}
}

func TestResolveModel(t *testing.T) {
	models := []Model{
		{Provider: "openai", ID: "gpt-5"},
		{Provider: "openai", ID: "sonnet-lookalike"},
		{Provider: "anthropic", ID: "claude-sonnet-4-5"},
		{Provider: "anthropic", ID: "claude-haiku-4-5"},
	}
	parentModel := Model{Provider: "anthropic", ID: "claude-opus-4-5"}
	for spec, want := range map[string]Model{
		"":                         parentModel,
		"inherit":                  parentModel,
		"sonnet":                   models[2], // an Anthropic model first
		"Haiku":                    models[3],
		"openai/gpt-5":             models[0],
		"gpt-5":                    models[0],
		"opus":                     parentModel, // none in the list
		"anthropic/claude-opus-9":  parentModel,
		"openai/claude-sonnet-4-5": parentModel, // the provider must match too
	} {
		m, w := Agent{Name: "x", Model: spec}.ResolveModel(models, parentModel)
		if m != want {
			t.Errorf("model %q = %v, want %v", spec, m, want)
		}
		if unknown := m == parentModel && spec != "" && spec != "inherit"; unknown != (w != "") {
			t.Errorf("model %q: warning %q", spec, w)
		}
	}
}

func TestFindPrecedenceTrustAndBadFiles(t *testing.T) {
	home, config := env(t)
	base := filepath.Dir(home)
	ws := filepath.Join(base, "ws")
	ok := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nprompt of " + desc + "\n"
	}
	write(t, filepath.Join(ws, ".claude/agents/a.md"), ok("a", "claude a"))
	write(t, filepath.Join(ws, ".opencode/agents/a.md"), ok("a", "opencode a"))
	// opencode's files have no name: the file's is used; its tools are switches.
	write(t, filepath.Join(ws, ".opencode/agents/docs.md"), "---\ndescription: writes docs\nmode: subagent\ntools:\n  bash: false\n---\nWrite docs.\n")
	write(t, filepath.Join(ws, ".agents/agents/b.md"), ok("b", "agents b"))
	write(t, filepath.Join(home, ".claude/agents/b.md"), ok("b", "user b"))
	write(t, filepath.Join(config, "pid/agents/c.md"), ok("c", "pid c"))
	write(t, filepath.Join(config, "pid/agents/general.md"), ok("general", "shadowing a builtin"))
	write(t, filepath.Join(config, "pid/agents/nodesc.md"), "---\nname: nodesc\n---\n")
	write(t, filepath.Join(config, "pid/agents/big.md"), ok("big", "big")+strings.Repeat("x", MaxBytes))
	write(t, filepath.Join(config, "pid/agents/iso.md"), "---\ndescription: isolated\nisolation: worktree\npermissionMode: bypassPermissions\n---\n")
	write(t, filepath.Join(config, "pid/agents/notes.txt"), "not an agent")
	outside := filepath.Join(base, "outside.md")
	write(t, outside, ok("out", "outside"))
	os.Symlink(outside, filepath.Join(ws, ".claude/agents/out.md"))

	type row struct{ Name, Source, Ignored string }
	summary := func(list []Agent) (out []row) {
		for _, a := range list {
			ign := a.Ignored
			if i := strings.IndexAny(ign, ":("); i >= 0 {
				ign = strings.TrimSpace(ign[:i])
			}
			out = append(out, row{a.Name, string(a.Source), ign})
		}
		return out
	}
	list, _ := Find([]Folder{{Path: ws, Trusted: true}}, UserDirs())
	want := []row{
		{"a", "workspace", ""},
		{"out", "workspace", "the file leads outside the workspace folder " + ws},
		{"a", "workspace", `the workspace agent "a" of ` + filepath.Join(ws, ".claude/agents/a.md") + " is used instead"},
		{"docs", "workspace", ""},
		{"b", "workspace", ""},
		{"b", "user", `the workspace agent "b" of ` + filepath.Join(ws, ".agents/agents/b.md") + " is used instead"},
		{"big", "user", "the file cannot be read"},
		{"c", "user", ""},
		{"general", "user", "bad front matter"},
		{"iso", "user", ""},
		{"nodesc", "user", "bad front matter"},
	}
	if d := cmp.Diff(want, summary(list)); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
	docs, _ := Lookup(list, "docs")
	if tools, _ := docs.ToolSet(parent); slices.Contains(tools, "bash") || !slices.Contains(tools, "write") {
		t.Errorf("docs tools = %q, want the parent's but bash (and task)", tools)
	}
	if !strings.Contains(strings.Join(docs.Warnings, "\n"), `"mode" is ignored`) {
		t.Errorf("docs warnings = %q", docs.Warnings)
	}
	iso, _ := Lookup(list, "iso")
	if iso.Isolation != IsolationWorktree || !strings.Contains(strings.Join(iso.Warnings, "\n"), `"permissionMode" is ignored: an agent's permissions are the parent session's`) {
		t.Errorf("iso = %+v", iso)
	}
	// Untrusted: listed by file name, not read; the person's b is used.
	list, _ = Find([]Folder{{Path: ws, Trusted: false}}, UserDirs())
	for _, a := range list[:5] {
		if a.Source == SourceWorkspace && a.Name != "out" && (!strings.Contains(a.Ignored, "is not trusted") || a.Description != "") {
			t.Errorf("untrusted agent %+v: want listed as untrusted, not read", a)
		}
	}
	if got := TrustItems(list, ws); !cmp.Equal(got, []string{"agent: a (.claude/agents/a.md)", "agent: a (.opencode/agents/a.md)", "agent: docs (.opencode/agents/docs.md)", "agent: b (.agents/agents/b.md)"}) {
		t.Errorf("TrustItems = %q", got)
	}
	if b, _ := Lookup(list, "b"); b.Source != SourceUser || b.Prompt != "prompt of user b" {
		t.Errorf("b = %+v, want the person's", b)
	}
}

func TestInUseAndNamed(t *testing.T) {
	list := []Agent{
		{Name: "reviewer", Path: "/u/agents/reviewer.md"},
		{Name: "old", Path: "/w/.pid/agents/old.md", Ignored: "the workspace folder is not trusted"},
		{Name: "writer", Path: "/u/agents/writer.md"},
		{Name: "reviewer", Path: "/w/.pid/agents/reviewer.md", Ignored: "an agent of that name comes first"},
	}
	var names []string
	for _, a := range InUse(list) {
		names = append(names, a.Path)
	}
	if want := []string{"/u/agents/reviewer.md", "/u/agents/writer.md"}; !slices.Equal(names, want) {
		t.Errorf("InUse = %q, want %q", names, want)
	}
	if a, why := Named(list, "reviewer"); why != "" || a.Path != "/u/agents/reviewer.md" {
		t.Errorf("reviewer: %+v, %q; want the one in use", a, why)
	}
	if a, why := Named(list, "old"); a.Name != "" || why != "The agent old is no longer defined (/w/.pid/agents/old.md): the workspace folder is not trusted." {
		t.Errorf("old: %+v, %q; want why its file is not used", a, why)
	}
	if a, why := Named(list, "gone"); a.Name != "" || why != "The agent gone is no longer defined." {
		t.Errorf("gone: %+v, %q", a, why)
	}
	if got := InUse(nil); got != nil {
		t.Errorf("InUse(nil) = %v", got)
	}
}

package permissions_test

// Issue 31: the policy's built-in verdicts use package protected, the one list of the paths
// other programs load commands from: a "default": "allow" is no rule about them, so a write
// or edit there (a bash command's redirection included) asks; an entry or a rule for the
// tool still decides. And docs/permissions.md lists the paths once, as protected.Names has
// them, each with why it is there.

import (
	"os"
	"strings"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
	"github.com/pid-agent/pid/protected"
)

func TestDefaultAllowNeverAllowsProtectedWrites(t *testing.T) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "user", Spec: permtest.Spec(t, `{"default":"allow","tools":{"bash":[{"pattern":"echo","decision":"allow"}]}}`)})
	cwd := "/ws"
	call := func(tool, args string) permissions.Call {
		c := permtest.Call(tool, args)
		c.Cwd = cwd
		return c
	}
	for _, path := range []string{".git/config", ".git/commondir", ".git/modules/sub/config", ".git/info/attributes", ".GIT/config",
		".pid/settings.json", ".vscode/tasks.json", ".idea/workspace.xml", ".zed/tasks.json", ".claude/settings.json",
		".devcontainer/devcontainer.json", ".envrc", ".mcp.json", "sub/.envrc", "/ws/.mcp.json", "vendor/x/.git/hooks/pre-commit"} {
		for _, tool := range []string{"write", "edit"} {
			v := p.Decide(call(tool, `{"path":"`+path+`"}`))
			if v.Decision != permissions.Ask || v.Source != "built-in" || !strings.Contains(v.Part, "writes") {
				t.Errorf("%s %s under default allow: %+v, want ask by built-in", tool, path, v)
			}
		}
		v := p.Decide(call("bash", `{"command":"echo x > `+path+`"}`))
		if v.Decision != permissions.Ask {
			t.Errorf("bash writing %s under default allow: %+v, want ask", path, v)
		}
	}
	for _, path := range []string{"docs/a.md", "gitignore.txt", "a/.gitignore", ".github/workflows/x.yml"} {
		if v := p.Decide(call("write", `{"path":"`+path+`"}`)); v.Decision != permissions.Allow {
			t.Errorf("write %s under default allow: %+v, want allow", path, v)
		}
	}
	// An entry or a rule for the tool is the person's word about these paths too.
	q := permissions.NewPolicy(nil, permissions.Layer{Source: "user", Spec: permtest.Spec(t, `{"default":"allow","tools":{"edit":"allow","write":[{"pattern":".envrc","decision":"allow"}]}}`)})
	for _, c := range []permissions.Call{call("edit", `{"path":".git/config"}`), call("write", `{"path":".envrc"}`)} {
		if v := q.Decide(c); v.Decision != permissions.Allow {
			t.Errorf("%s %s with an entry or rule allowing it: %+v", c.Tool, c.Args, v)
		}
	}
}

func TestDocsListTheProtectedPaths(t *testing.T) {
	data, err := os.ReadFile("../docs/permissions.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "### Paths that run code")
	if start < 0 {
		t.Fatal(`docs/permissions.md has no section "### Paths that run code"`)
	}
	section := doc[start:]
	if end := strings.Index(section[4:], "\n#"); end >= 0 {
		section = section[:end+4]
	}
	for _, e := range protected.Names {
		name := e.Name
		if e.Dir {
			name += "/"
		}
		row := "| `" + name + "` | " + e.Why + " |"
		if !strings.Contains(section, row) {
			t.Errorf("the section lacks the row %q", row)
		}
	}
	if n := strings.Count(section, "\n| `"); n != len(protected.Names) {
		t.Errorf("the section has %d rows, protected.Names %d entries", n, len(protected.Names))
	}
}

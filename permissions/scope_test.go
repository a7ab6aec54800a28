package permissions_test

// Tests of SuggestScope (what an "always" answer covers) and of remembered answers applied
// to parsed commands.

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
	"github.com/pid-agent/pid/shellcmd/shellcmdtest"
)

// checkScope verifies what every scope must satisfy: the store accepts it, an allow and a
// deny with it match the call itself, and a remembered allow is found again for the call.
func checkScope(t *testing.T, c permissions.Call, s permissions.AlwaysScope) {
	t.Helper()
	if s.Tool != c.Tool || s.Description == "" {
		t.Errorf("%s %s: scope %+v has the wrong tool or no description", c.Tool, c.Args, s)
	}
	if !s.Matches(c, permissions.Allow) || !s.Matches(c, permissions.Deny) {
		t.Errorf("%s %s: scope %+v does not cover its own call", c.Tool, c.Args, s)
	}
	st, err := permissions.OpenStore(filepath.Join(t.TempDir(), "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Remember("/work/proj", s.Tool, s.Path, s.Pattern, permissions.Allow); err != nil {
		t.Errorf("%s %s: the store refuses scope %+v: %v", c.Tool, c.Args, s, err)
		return
	}
	if r, ok := st.Lookup("/work/proj", c); !ok || r.Pattern != s.Pattern {
		t.Errorf("%s %s: the remembered scope %+v is not found for its call (%+v, %v)", c.Tool, c.Args, s, r, ok)
	}
}

func TestSuggestScope(t *testing.T) {
	cases := []struct {
		call    permissions.Call
		ok      bool
		pattern string
		// others are calls the scope must not allow.
		others []string
	}{
		{bashCall("git status --short"), true, "git status", []string{"git statusx", "git status; rm x", "git push"}},
		{bashCall("ls -la"), true, "ls", []string{"lsof", "ls > x", "ls && curl x"}},
		{bashCall("go test ./..."), true, "go test", []string{"go tool x"}},
		{bashCall("npm run test:unit"), true, "npm run", nil},
		// The bug this replaces: "[" was proposed as a glob, the store refused it, and the
		// answer fell back to the whole bash tool.
		{bashCall("[ -f go.mod ]"), true, "[", []string{"rm -f go.mod", "[[ -f x ]]"}},
		{bashCall("timeout 5 npm test"), true, "npm test", nil},
		{bashCall("CI=1 npm test"), true, "npm test", nil},
		{bashCall("sed -i s/a/b/ f.txt"), true, "sed -i", []string{"sed -n p f", "sed -i 's/a/b/w x' f"}},
		{bashCall("ls *.go"), true, "ls", nil},
		// issue 19: an interpreter one-liner is scoped to exactly itself, never to the
		// interpreter; an interpreter's script to the whole command as given.
		{bashCall("python3 -c 'print(1)'"), true, "python3 -c 'print(1)'", []string{"python3 x.py", "python3 -c 'print(2)'", "python3 -c 'print(1)' x", "python3 -c 'import os'"}},
		{bashCall("node -e 'console.log(1)'"), true, "node -e 'console.log(1)'", []string{"node -e 'require(\"fs\")'", "node x.js"}},
		{bashCall("perl -ne 'print if /x/' f"), true, "perl -ne 'print if /x/' f", []string{"perl -e 'system(1)'", "perl -ne 'print if /x/' f g"}},
		{bashCall("ruby -e 'puts 1'"), true, "ruby -e 'puts 1'", []string{"ruby -e 'system(1)'"}},
		{bashCall("python3.12 -Bc 'print(1)'"), true, "python3.12 -Bc 'print(1)'", []string{"python3.12 -c x"}},
		{bashCall("awk '{print $1}' f.txt"), true, "awk '{print $1}' f.txt", []string{"awk 'BEGIN{system(\"x\")}'", "awk '{print $1}' f.txt g.txt"}},
		{bashCall("python3 x.py --fast"), true, "python3 x.py --fast", []string{"python3 -c 'print(1)'", "python3 y.py", "python3 x.py"}},
		{bashCall("python3 -c \"print($X)\""), false, "", nil}, // code pid cannot see whole
		{bashCall("bash -c 'ls'"), false, "", nil},
		{bashCall("echo $HOME"), true, "echo", []string{"echo $(rm x)"}},
		{bashCall("'my tool' run x"), true, "'my tool' run", nil},
		{bashCall("touch X; rm -f Y"), true, "touch X; rm -f Y", []string{"touch X; rm -f Y; ls", "touch X", "rm -f Y", "touch X && rm -f Y"}},
		{bashCall("go build && ./bin/app --port 80"), true, "go build && ./bin/app --port 80", nil},
		{bashCall("touch X; rm -f Y; echo $HOME"), false, "", nil}, // an expansion in a compound command
		{bashCall("npm test > out.txt"), false, "", nil},           // a write
		{bashCall("git diff --output=x"), false, "", nil},          // a write through an option
		{bashCall("eval ls"), false, "", nil},
		{bashCall("echo $(date)"), false, "", nil},    // a substitution: two commands in one
		{bashCall("sudo apt update"), false, "", nil}, // sudo and apt are two parts
		{bashCall("$CMD x"), false, "", nil},
		{bashCall(`echo "unclosed`), false, "", nil},
		{bashCall("PATH=. ls"), false, "", nil}, // no rule can vouch for it
		{bashCall(""), false, "", nil},
		{permtest.Call("bash", `{}`), false, "", nil},
		{permissions.Call{Tool: "write", Args: json.RawMessage(`{"path":"docs/a.md"}`), Cwd: "/w/p"}, true, "docs/a.md", []string{"docs/a.md.bak"}},
		{permissions.Call{Tool: "edit", Args: json.RawMessage(`{"path":"/w/p/src/x.go"}`), Cwd: "/w/p"}, true, "src/x.go", nil},
		{permtest.Call("write", `{"path":"a[1]*.md"}`), true, `a\[1]\*.md`, []string{"a1x.md"}},
		{permtest.Call("grep", `{"pattern":"x"}`), true, ".", nil},
		{permtest.Call("write", `{"path":"photo (1).png"}`), false, "", nil}, // an allow rule cannot match it
		{permtest.Call("write", `{}`), false, "", nil},
		{permtest.Call("mcp_github_create_issue", `{"title":"x"}`), true, "", nil},
	}
	for _, c := range cases {
		s, ok := permissions.SuggestScope(c.call)
		if ok != c.ok || s.Pattern != c.pattern {
			t.Errorf("%s %s: %+v, %v; want pattern %q, %v", c.call.Tool, c.call.Args, s, ok, c.pattern, c.ok)
			continue
		}
		if !ok {
			continue
		}
		checkScope(t, c.call, s)
		for _, o := range c.others {
			oc := c.call
			if c.call.Tool == "bash" {
				oc = bashCall(o)
			} else {
				oc.Args = json.RawMessage(permtest.ArgsJSON("path", o))
			}
			if s.Matches(oc, permissions.Allow) {
				t.Errorf("scope %q of %s also allows %q", s.Pattern, c.call.Args, o)
			}
		}
	}
}

func TestSuggestScopeDescriptions(t *testing.T) {
	cases := map[string]struct {
		c    permissions.Call
		want string
	}{
		"single":   {bashCall("npm test -- --watch"), "bash commands starting with `npm test` in this workspace"},
		"compound": {bashCall("touch X; rm -f Y"), "exactly the bash command `touch X; rm -f Y` in this workspace"},
		"file":     {permtest.Call("write", `{"path":"docs/a.md"}`), "write calls on the path `docs/a.md` in this workspace"},
		"tool":     {permtest.Call("mcp_x", `{}`), "every call of the tool mcp_x in this workspace"},
	}
	for name, c := range cases {
		if s, ok := permissions.SuggestScope(c.c); !ok || s.Description != c.want {
			t.Errorf("%s: %q, %v; want %q", name, s.Description, ok, c.want)
		}
	}
}

// TestSuggestScopeOverTheCorpus: whatever scope is proposed for any corpus command is one
// the store accepts and that covers the command.
func TestSuggestScopeOverTheCorpus(t *testing.T) {
	n := 0
	for _, row := range shellcmdtest.Corpus {
		c := bashCall(row.Cmd)
		s, ok := permissions.SuggestScope(c)
		if !ok {
			continue
		}
		n++
		checkScope(t, c, s)
	}
	if n < 30 {
		t.Errorf("only %d corpus commands got a scope", n)
	}
}

// TestRememberedAnswersOnParsedCommands: a remembered answer is applied the way a rule is:
// an allow needs every part and no write, a deny any part.
func TestRememberedAnswersOnParsedCommands(t *testing.T) {
	st, err := permissions.OpenStore(filepath.Join(t.TempDir(), "p.json"))
	if err != nil {
		t.Fatal(err)
	}
	const ws = "/work/proj"
	if _, err := st.Remember(ws, "bash", "", "npm test", permissions.Allow); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Remember(ws, "bash", "", "curl", permissions.Deny); err != nil {
		t.Fatal(err)
	}
	p := corpusPolicyValue(t) // bash asks unless a rule says otherwise
	cases := map[string]struct {
		want   permissions.Decision
		source string
	}{
		"npm test -- --watch":     {allow, "remembered"},
		"timeout 60 npm test":     {allow, "remembered"},
		"npm test > out.txt":      {ask, "built-in"}, // the write still asks
		"npm test && npm publish": {ask, "built-in"},
		"npm test | curl -d @- x": {deny, "corpus"}, // the policy's own deny on curl
		"wget x | sh":             {ask, "built-in"},
		"echo $(npm test)":        {ask, "built-in"}, // echo is allowed, npm test is remembered: each answer is whole-call
	}
	for cmd, c := range cases {
		if v := permissions.Check(p, st, ws, bashCall(cmd)); v.Decision != c.want || v.Source != c.source {
			t.Errorf("%q: %+v, want %s from %s", cmd, v, c.want, c.source)
		}
	}
	// A remembered deny catches the command in any part.
	q := permissions.NewPolicy(nil)
	for _, cmd := range []string{"curl x", "ls | curl -d @- x", "echo $(curl x)", "sudo curl x"} {
		if v := permissions.Check(q, st, ws, bashCall(cmd)); v.Decision != deny || v.Source != "remembered" {
			t.Errorf("%q: %+v, want the remembered deny", cmd, v)
		}
	}
}

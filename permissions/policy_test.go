package permissions_test

// Tests of the Spec shape, the layering of sources and the rule semantics of match.go.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
)

func TestParseSpecErrorsNameTheField(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"bad default":          {`{"default":"maybe"}`, `permissions.default must be "allow", "ask" or "deny", not "maybe"`},
		"bad tool decision":    {`{"tools":{"bash":"yes"}}`, `permissions.tools["bash"] must be "allow", "ask" or "deny", not "yes"`},
		"tool not a list":      {`{"tools":{"bash":3}}`, `permissions.tools["bash"] must be "allow", "ask", "deny" or a list of rules`},
		"tool null":            {`{"tools":{"bash":null}}`, `permissions.tools["bash"] must be`},
		"rule bad decision":    {`{"tools":{"bash":[{"pattern":"ls","decision":"allow"},{"pattern":"rm","decision":"nope"}]}}`, `permissions.tools["bash"][1].decision must be`},
		"rule no pattern":      {`{"tools":{"bash":[{"decision":"allow"}]}}`, `permissions.tools["bash"][0].pattern is missing`},
		"rule empty pattern":   {`{"tools":{"bash":[{"pattern":"  ","decision":"allow"}]}}`, `permissions.tools["bash"][0].pattern must be a non-empty string`},
		"rule no decision":     {`{"tools":{"bash":[{"pattern":"ls"}]}}`, `permissions.tools["bash"][0].decision is missing`},
		"rule unknown key":     {`{"tools":{"bash":[{"pattern":"ls","decison":"allow"}]}}`, `unknown key "decison"`},
		"rule not an object":   {`{"tools":{"bash":["ls"]}}`, `permissions.tools["bash"][0] must be an object`},
		"rule needs a path":    {`{"tools":{"mcp_fetch":[{"pattern":"https://x","decision":"allow"}]}}`, `tool "mcp_fetch" has no default argument`},
		"rule empty path":      {`{"tools":{"bash":[{"path":"","pattern":"ls","decision":"allow"}]}}`, `.path must be a non-empty gjson path`},
		"bad glob":             {`{"tools":{"write":[{"pattern":"docs/[a","decision":"allow"}]}}`, `is not a valid glob`},
		"unknown top key":      {`{"tool":{"bash":"allow"}}`, `permissions has an unknown key "tool"`},
		"not an object":        {`["allow"]`, `permissions must be an object`},
		"tools not an object":  {`{"tools":["bash"]}`, `permissions.tools must be an object`},
		"default not a string": {`{"default":true}`, `permissions.default must be`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := permissions.ParseSpec([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseSpec(%s) = %v, want an error containing %q", c.in, err, c.want)
			}
		})
	}
}

func TestParseSpecAcceptsTheShape(t *testing.T) {
	s := permtest.Spec(t, `{"default":"deny","tools":{"bash":[{"pattern":"git status","decision":"allow"},{"path":"command","pattern":"rm","decision":"deny"}],"write":"ask","edit":[],"mcp_x":[{"path":"url","pattern":"https://*","decision":"allow"}]}}`)
	if s.Default != permissions.Deny || len(s.Tools) != 4 || len(s.Tools["bash"].Rules) != 2 || s.Tools["write"].Decision != permissions.Ask {
		t.Fatalf("parsed %+v", s)
	}
	if e := s.Tools["edit"]; e.Decision != "" || e.Rules == nil || len(e.Rules) != 0 {
		t.Fatalf("an empty list must parse as an empty rule list, got %+v", e)
	}
	for _, in := range []string{``, `null`, `{}`, `{"default":null,"tools":null}`} {
		if s := permtest.Spec(t, in); s.Default != "" || len(s.Tools) != 0 {
			t.Fatalf("%q parsed as %+v", in, s)
		}
	}
	// Round trip through MarshalJSON and UnmarshalJSON.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back permissions.Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the spec:\n%s\n%s", b, b2)
	}
}

func TestBuiltinDefaults(t *testing.T) {
	var p *permissions.Policy // the nil policy is the built-in defaults
	for _, tool := range []string{"read", "grep", "find", "ls"} {
		if v := p.Decide(permtest.Call(tool, `{}`)); v.Decision != permissions.Allow || v.Source != "built-in" {
			t.Errorf("%s: %+v, want allow by built-in", tool, v)
		}
	}
	for _, tool := range []string{"bash", "write", "edit", "mcp_unknown"} {
		if v := p.Decide(permtest.Call(tool, `{}`)); v.Decision != permissions.Ask {
			t.Errorf("%s: %+v, want ask", tool, v)
		}
	}
	// The daemon's predicate classifies other tools.
	ro := func(tool string) bool { return tool == "mcp_search" }
	q := permissions.NewPolicy(ro)
	if v := q.Decide(permtest.Call("mcp_search", `{}`)); v.Decision != permissions.Allow {
		t.Errorf("mcp_search with predicate: %+v", v)
	}
	if v := q.Decide(permtest.Call("read", `{}`)); v.Decision != permissions.Ask {
		t.Errorf("a predicate replaces the built-in set: read got %+v", v)
	}
}

func TestLayersLaterWin(t *testing.T) {
	user := permissions.Layer{Source: "user", Spec: permtest.Spec(t, `{"default":"deny","tools":{"bash":"allow","write":[{"pattern":"docs/**","decision":"allow"}],"edit":"deny"}}`)}
	ws := permissions.Layer{Source: "workspace", Spec: permtest.Spec(t, `{"tools":{"write":"ask","edit":[{"pattern":"src/**","decision":"allow"}]}}`)}
	sess := permissions.Layer{Source: "session", Spec: permtest.Spec(t, `{"default":"ask","tools":{"bash":"deny"}}`)}
	p := permissions.NewPolicy(nil, user, ws).With(nil, sess)

	check := func(c permissions.Call, want permissions.Decision, source string) {
		t.Helper()
		v := p.Decide(c)
		if v.Decision != want || !strings.Contains(v.Source, source) {
			t.Errorf("%s %s: got %+v, want %s from %q", c.Tool, c.Args, v, want, source)
		}
	}
	check(permtest.Call("bash", `{"command":"ls"}`), permissions.Deny, "session")               // session's entry replaces the user's
	check(permtest.Call("write", `{"path":"docs/a.md"}`), permissions.Ask, "workspace")         // workspace replaces the user's list whole
	check(permtest.Call("edit", `{"path":"src/a.go"}`), permissions.Allow, "workspace")         // the workspace's list matched
	check(permtest.Call("edit", `{"path":"other/a.go"}`), permissions.Ask, "default (session)") // no rule matched: the latest default, not the user's "deny" entry
	check(permtest.Call("mcp_x", `{}`), permissions.Ask, "default (session)")                   // session's default replaces user's
	check(permtest.Call("read", `{"path":"a"}`), permissions.Ask, "default")                    // a default beats the tool's nature

	// Without the session layer the user's default applies, also to read-only tools
	// (compatible with session/new: tools[NAME], else default, else nature).
	q := permissions.NewPolicy(nil, user)
	if v := q.Decide(permtest.Call("read", `{"path":"a"}`)); v.Decision != permissions.Deny {
		t.Errorf("user default deny: read got %+v", v)
	}
	// p's layers were not changed by With.
	if n := len(permissions.NewPolicy(nil, user, ws).Layers()); n != 2 {
		t.Errorf("layers: %d", n)
	}
}

func TestFirstMatchingRuleWins(t *testing.T) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, `{"tools":{"bash":[
		{"pattern":"git push --force","decision":"deny"},
		{"pattern":"git push","decision":"ask"},
		{"pattern":"git","decision":"allow"}]}}`)})
	cases := map[string]permissions.Decision{
		"git push --force origin": permissions.Deny,
		"git push origin":         permissions.Ask,
		"git log":                 permissions.Allow,
		"gitk":                    permissions.Ask, // no rule: built-in nature of bash
	}
	for cmd, want := range cases {
		v := p.Decide(permtest.Call("bash", permtest.ArgsJSON("command", cmd)))
		if v.Decision != want {
			t.Errorf("%q: %+v, want %s", cmd, v, want)
		}
	}
	if v := p.Decide(permtest.Call("bash", permtest.ArgsJSON("command", "git push x"))); v.Rule != 1 {
		t.Errorf("Rule index: %+v", v)
	}
}

// decide runs one rule list for a tool against arguments.
func decide(t *testing.T, tool, rules, args string) permissions.Decision {
	t.Helper()
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, `{"tools":{"`+tool+`":`+rules+`}}`)})
	return p.Decide(permtest.Call(tool, args)).Decision
}

func TestCommandPrefixAllow(t *testing.T) {
	rules := `[{"pattern":"git status","decision":"allow"}]`
	// Input redirection only reads (git status < /dev/zero was refused when any
	// metacharacter was; the command is now parsed, and only writes ask).
	allowed := []string{"git status", "git status --short", "  git   status\t-s ", "git status 'a b'", "git status < /dev/zero"}
	for _, cmd := range allowed {
		if d := decide(t, "bash", rules, permtest.ArgsJSON("command", cmd)); d != permissions.Allow {
			t.Errorf("%q: %s, want allow", cmd, d)
		}
	}
	// Not the same command, or a command that could do more than its first words say: the
	// allow rule does not apply and bash's nature (ask) decides.
	refused := []string{
		"git statusx", "git stat", "git", "sudo git status",
		"git status; rm -rf /", "git status && rm -rf /", "git status || rm -rf /", "git status | sh",
		"git status & rm -rf /", "git status `rm -rf /`", "git status $(rm -rf /)", "git status ${IFS}",
		"git status > /etc/passwd", "git status\nrm -rf /", "git status\rrm",
		"git status (x)", "git status\x00rm",
	}
	for _, cmd := range refused {
		if d := decide(t, "bash", rules, permtest.ArgsJSON("command", cmd)); d != permissions.Ask {
			t.Errorf("%q: %s, want ask (not allowed by a prefix rule)", cmd, d)
		}
	}
	// A glob allow rule on a command refuses metacharacters too.
	if d := decide(t, "bash", `[{"pattern":"git *","decision":"allow"}]`, permtest.ArgsJSON("command", "git log; rm -rf /")); d != permissions.Ask {
		t.Errorf("glob allow with ;: %s", d)
	}
	if !permissions.HasShellMeta("a;b") || permissions.HasShellMeta("git status --short 'x'") {
		t.Error("HasShellMeta")
	}
}

func TestCommandPrefixDenyCatchesParts(t *testing.T) {
	rules := `[{"pattern":"rm","decision":"deny"},{"pattern":"git push","decision":"ask"}]`
	denied := []string{
		"rm -rf /", "rm", "ls; rm -rf /", "ls && rm x", "ls | rm x", "echo $(rm -rf /)", "echo `rm x`",
		"sudo rm -rf /", "sudo -E rm x", "FOO=1 rm x", "env A=b rm x", `bash -c "rm -rf /"`, "ls\nrm x",
		"(cd /; rm x)",
	}
	for _, cmd := range denied {
		if d := decide(t, "bash", rules, permtest.ArgsJSON("command", cmd)); d != permissions.Deny {
			t.Errorf("%q: %s, want deny", cmd, d)
		}
	}
	for _, cmd := range []string{"rmdir x", "ls -l", "echo rm", "grep rm file"} {
		if d := decide(t, "bash", rules, permtest.ArgsJSON("command", cmd)); d != permissions.Ask {
			t.Errorf("%q: %s, want ask (no rule)", cmd, d)
		}
	}
	if d := decide(t, "bash", rules, permtest.ArgsJSON("command", "cd x && git push")); d != permissions.Ask {
		t.Errorf("ask rule on a part: %s", d)
	}
}

func TestPathGlobs(t *testing.T) {
	rules := `[{"pattern":"**/.env","decision":"deny"},{"pattern":"docs/**","decision":"allow"},{"pattern":"src/*.go","decision":"allow"},{"pattern":"/tmp/pid/**","decision":"allow"}]`
	cwd := "/work/proj"
	c := func(p string) permissions.Call {
		return permissions.Call{Tool: "write", Args: json.RawMessage(permtest.ArgsJSON("path", p)), Cwd: cwd}
	}
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, `{"tools":{"write":`+rules+`}}`)})
	cases := map[string]permissions.Decision{
		"docs/a.md":                 permissions.Allow,
		"docs/x/y/z.md":             permissions.Allow,
		"./docs/a.md":               permissions.Allow,
		"docs//a.md":                permissions.Allow,
		"/work/proj/docs/a.md":      permissions.Allow, // absolute inside cwd
		"src/main.go":               permissions.Allow,
		"src/sub/main.go":           permissions.Ask, // * does not cross folders
		"src/main.go.bak":           permissions.Ask,
		"docs/../secret.txt":        permissions.Ask, // cleaned: not under docs
		"docs/../../etc/passwd":     permissions.Ask,
		"../proj/docs/a.md":         permissions.Ask, // climbs out: never a relative pattern
		"docsx/a.md":                permissions.Ask,
		"/other/docs/a.md":          permissions.Ask, // absolute outside cwd
		"/tmp/pid/x/y":              permissions.Allow,
		"/tmp/pidx/y":               permissions.Ask,
		".env":                      permissions.Deny,
		"docs/.env":                 permissions.Deny, // the deny comes first
		"/work/proj/a/.env":         permissions.Deny,
		"docs/a;rm -rf ~.md":        permissions.Ask, // allow refuses metacharacters even in paths
		"docs/$(touch x).md":        permissions.Ask,
		"docs/photo (1).png":        permissions.Ask,
		"docs/a b.md":               permissions.Allow,
		"/work/proj/../proj/docs/a": permissions.Allow, // cleaned to inside cwd
	}
	for path, want := range cases {
		if v := p.Decide(c(path)); v.Decision != want {
			t.Errorf("write %q: %+v, want %s", path, v, want)
		}
	}
	// Without a cwd, absolute paths never match relative patterns.
	if v := p.Decide(permtest.Call("write", `{"path":"/work/proj/docs/a.md"}`)); v.Decision != permissions.Ask {
		t.Errorf("no cwd: %+v", v)
	}
	// An exact path (path arguments are globs: no prefix semantics).
	if d := decide(t, "write", `[{"pattern":"src/main.go","decision":"allow"}]`, `{"path":"src/main.go extra"}`); d != permissions.Ask {
		t.Errorf("exact path matched a longer name: %s", d)
	}
	if d := decide(t, "write", `[{"pattern":"src/main.go","decision":"allow"}]`, `{"path":"./src/main.go"}`); d != permissions.Allow {
		t.Errorf("exact path: %s", d)
	}
}

func TestMultiValuePaths(t *testing.T) {
	// edits.#.oldText yields one value per edit: allow needs all of them, deny any of them.
	rules := `[{"path":"edits.#.oldText","pattern":"TODO*","decision":"allow"},{"path":"edits.#.newText","pattern":"password*","decision":"deny"}]`
	all := `{"path":"a","edits":[{"oldText":"TODO a","newText":"x"},{"oldText":"TODO b","newText":"y"}]}`
	one := `{"path":"a","edits":[{"oldText":"TODO a","newText":"x"},{"oldText":"other","newText":"y"}]}`
	denyOne := `{"path":"a","edits":[{"oldText":"x","newText":"x"},{"oldText":"y","newText":"password=1"}]}`
	none := `{"path":"a","edits":[]}`
	for _, c := range []struct {
		args string
		want permissions.Decision
	}{{all, permissions.Allow}, {one, permissions.Ask}, {denyOne, permissions.Deny}, {none, permissions.Ask}} {
		if d := decide(t, "edit", rules, c.args); d != c.want {
			t.Errorf("%s: %s, want %s", c.args, d, c.want)
		}
	}
	// An array argument is several values too.
	if d := decide(t, "mcp_rm", `[{"path":"files","pattern":"tmp/**","decision":"allow"}]`, `{"files":["tmp/a","tmp/b"]}`); d != permissions.Allow {
		t.Errorf("array, all values match: %s, want allow", d)
	}
	if d := decide(t, "mcp_rm", `[{"path":"files","pattern":"tmp/**","decision":"allow"}]`, `{"files":["tmp/a","etc/b"]}`); d != permissions.Ask {
		t.Errorf("array one outside: %s, want ask", d)
	}
}

func TestValuesThatNeverMatch(t *testing.T) {
	allowAll := `[{"path":"x","pattern":"**","decision":"allow"}]`
	denyAll := `[{"path":"x","pattern":"**","decision":"deny"}]`
	for _, args := range []string{`{"x":{"a":1}}`, `{"x":null}`, `{}`, `not json`, `{"x":["a",{"b":1}]}`} {
		if d := decide(t, "mcp", allowAll, args); d != permissions.Ask {
			t.Errorf("allow %s: %s, want ask", args, d)
		}
	}
	for _, args := range []string{`{"x":{"a":1}}`, `{}`, `not json`} {
		if d := decide(t, "mcp", denyAll, args); d != permissions.Ask {
			t.Errorf("deny %s: %s, want ask (rule does not apply)", args, d)
		}
	}
	// Numbers and booleans match as their JSON text.
	if d := decide(t, "mcp", `[{"path":"n","pattern":"42","decision":"allow"}]`, `{"n":42}`); d != permissions.Allow {
		t.Errorf("number: %s", d)
	}
}

func TestMissingPathOfSearchToolsIsTheWorkingFolder(t *testing.T) {
	rules := `[{"pattern":"secrets/**","decision":"deny"},{"pattern":".","decision":"ask"}]`
	if d := decide(t, "grep", rules, `{"pattern":"x"}`); d != permissions.Ask {
		t.Errorf("grep without path: %s, want ask (\".\" rule)", d)
	}
	if d := decide(t, "grep", rules, `{"pattern":"x","path":"secrets/a"}`); d != permissions.Deny {
		t.Errorf("grep in secrets: %s", d)
	}
	// write has no such default: a missing path matches nothing.
	if d := decide(t, "write", `[{"pattern":"**","decision":"deny"}]`, `{"content":"x"}`); d != permissions.Ask {
		t.Errorf("write without path: %s", d)
	}
}

func TestSpecInRequestParams(t *testing.T) {
	// The daemon decodes session/new's params with encoding/json: the Spec's own error text
	// (naming the field) comes out unchanged, and null leaves the field nil.
	var p struct {
		Permissions *permissions.Spec `json:"permissions,omitempty"`
	}
	err := json.Unmarshal([]byte(`{"permissions":{"default":"maybe"}}`), &p)
	if err == nil || err.Error() != `permissions.default must be "allow", "ask" or "deny", not "maybe"` {
		t.Fatalf("error %v", err)
	}
	p.Permissions = nil
	if err := json.Unmarshal([]byte(`{"permissions":null}`), &p); err != nil || p.Permissions != nil {
		t.Fatalf("null: %v %v", err, p.Permissions)
	}
	// The old shape {default, tools: {NAME: decision}} still reads the same.
	if err := json.Unmarshal([]byte(`{"permissions":{"default":"allow","tools":{"write_file":"ask"}}}`), &p); err != nil {
		t.Fatal(err)
	}
	pol := permissions.NewPolicy(nil, permissions.Layer{Source: "session", Spec: p.Permissions})
	if pol.Decide(permtest.Call("write_file", `{}`)).Decision != permissions.Ask || pol.Decide(permtest.Call("other", `{}`)).Decision != permissions.Allow {
		t.Fatal("old shape decided differently")
	}
}

// narrowPolicy builds user settings, a narrow-only workspace layer and the session's own
// permissions, in that order.
func narrowPolicy(t *testing.T, user, workspace, session string) *permissions.Policy {
	t.Helper()
	return permissions.NewPolicy(nil,
		permissions.Layer{Source: "user", Spec: permtest.Spec(t, user)},
		permissions.Layer{Source: "workspace", Spec: permtest.Spec(t, workspace), Narrow: true},
	).With(nil, permissions.Layer{Source: "session", Spec: permtest.Spec(t, session)})
}

func TestNarrowLayerIgnoresItsAllows(t *testing.T) {
	p := narrowPolicy(t, `{}`,
		`{"default":"allow","tools":{"bash":[{"pattern":"npm test","decision":"allow"}],"write":"allow","mcp_x":"allow"}}`,
		`{}`)
	cases := []struct {
		c    permissions.Call
		want permissions.Decision
	}{
		{permtest.Call("bash", `{"command":"npm test"}`), permissions.Ask}, // its allow rule is ignored: bash asks
		{permtest.Call("write", `{"path":"a"}`), permissions.Ask},          // its plain allow is ignored
		{permtest.Call("mcp_y", `{}`), permissions.Ask},                    // its allow default is ignored
		{permtest.Call("read", `{"path":"a"}`), permissions.Allow},         // the built-in nature still applies
	}
	for _, c := range cases {
		if v := p.Decide(c.c); v.Decision != c.want || v.Source != "built-in" {
			t.Errorf("%s %s: %+v, want %s from built-in", c.c.Tool, c.c.Args, v, c.want)
		}
	}
}

func TestNarrowDenyBeatsSessionAllow(t *testing.T) {
	p := narrowPolicy(t, `{}`,
		`{"tools":{"bash":[{"pattern":"rm","decision":"deny"},{"pattern":"git push","decision":"ask"}],"write":[{"pattern":"**/.env","decision":"deny"}],"mcp_x":"deny"}}`,
		`{"default":"allow","tools":{"bash":"allow","mcp_x":"allow"}}`)
	cases := []struct {
		c            permissions.Call
		want         permissions.Decision
		source, part string
	}{
		{permtest.Call("bash", `{"command":"rm -rf build"}`), permissions.Deny, "workspace", "rm -rf build"},
		{permtest.Call("bash", `{"command":"ls && sudo rm x"}`), permissions.Deny, "workspace", "rm x"},
		{permtest.Call("bash", `{"command":"git push origin"}`), permissions.Ask, "workspace", "git push origin"},
		{permtest.Call("bash", `{"command":"ls"}`), permissions.Allow, "session", "ls"},
		// The session allows bash whatever it does, but the narrow layer still reads it:
		{permtest.Call("bash", `{"command":"eval \"rm x\""}`), permissions.Deny, "workspace", "rm x"},
		{permtest.Call("bash", `{"command":"eval \"$X\""}`), permissions.Ask, "workspace", "the command uses eval, which runs a string as a command"},
		{permtest.Call("bash", `{"command":"echo x > .env"}`), permissions.Deny, "workspace", "write .env"},
		{permtest.Call("write", `{"path":"a/.env"}`), permissions.Deny, "workspace", ""},
		{permtest.Call("mcp_x", `{}`), permissions.Deny, "workspace", ""},
		{permtest.Call("mcp_y", `{}`), permissions.Allow, "default (session)", ""},
	}
	for _, c := range cases {
		v := p.Decide(c.c)
		if v.Decision != c.want || v.Source != c.source || v.Part != c.part {
			t.Errorf("%s %s: %+v, want %s from %q, part %q", c.c.Tool, c.c.Args, v, c.want, c.source, c.part)
		}
	}
}

func TestNarrowEntryNeverReplacesATrustedOne(t *testing.T) {
	// The user denies rm and allows ls; a narrow workspace list without those rules must
	// not replace the user's list (a trusted layer's entry would).
	p := narrowPolicy(t,
		`{"tools":{"bash":[{"pattern":"rm","decision":"deny"},{"pattern":"ls","decision":"allow"}]}}`,
		`{"tools":{"bash":[{"pattern":"curl","decision":"deny"},{"pattern":"rm","decision":"allow"}]}}`,
		`{}`)
	cases := map[string]struct {
		want   permissions.Decision
		source string
	}{
		"rm -rf x": {permissions.Deny, "user"},
		"ls":       {permissions.Allow, "user"},
		"curl x":   {permissions.Deny, "workspace"},
	}
	for cmd, c := range cases {
		if v := p.Decide(permtest.Call("bash", permtest.ArgsJSON("command", cmd))); v.Decision != c.want || v.Source != c.source {
			t.Errorf("%q: %+v, want %s from %s", cmd, v, c.want, c.source)
		}
	}
	// The same workspace settings as a trusted layer replace the user's list whole.
	q := permissions.NewPolicy(nil,
		permissions.Layer{Source: "user", Spec: permtest.Spec(t, `{"tools":{"bash":[{"pattern":"rm","decision":"deny"}]}}`)},
		permissions.Layer{Source: "workspace", Spec: permtest.Spec(t, `{"tools":{"bash":[{"pattern":"curl","decision":"ask"},{"pattern":"rm","decision":"allow"}]}}`)})
	if v := q.Decide(permtest.Call("bash", `{"command":"rm x"}`)); v.Decision != permissions.Allow {
		t.Errorf("trusted workspace: %+v, want its allow", v)
	}
}

func TestNarrowDefault(t *testing.T) {
	// A narrow deny or ask default applies to every tool it does not name, over the
	// session's allows; where its own list has no matching rule, too.
	p := narrowPolicy(t, `{}`, `{"default":"ask","tools":{"read":[{"pattern":"secrets/**","decision":"deny"}]}}`,
		`{"default":"allow"}`)
	cases := map[string]struct {
		c      permissions.Call
		want   permissions.Decision
		source string
	}{
		"unnamed tool":    {permtest.Call("mcp_x", `{}`), permissions.Ask, "default (workspace)"},
		"read, no match":  {permtest.Call("read", `{"path":"a"}`), permissions.Ask, "default (workspace)"},
		"read, its rule":  {permtest.Call("read", `{"path":"secrets/k"}`), permissions.Deny, "workspace"},
		"bash, each part": {permtest.Call("bash", `{"command":"ls"}`), permissions.Ask, "default (workspace)"},
	}
	for name, c := range cases {
		if v := p.Decide(c.c); v.Decision != c.want || v.Source != c.source {
			t.Errorf("%s: %+v, want %s from %s", name, v, c.want, c.source)
		}
	}
	// Layers keeps the flag, and With keeps narrow layers.
	ls := p.Layers()
	if len(ls) != 3 || ls[0].Narrow || !ls[1].Narrow || ls[2].Narrow {
		t.Fatalf("layers: %+v", ls)
	}
}

func TestSpecWidening(t *testing.T) {
	s := permtest.Spec(t, `{"default":"allow","tools":{
		"write":"allow",
		"bash":[{"pattern":"rm","decision":"deny"},{"pattern":"git push","decision":"ask"},{"pattern":"npm test","decision":"allow"}],
		"mcp_fetch":[{"path":"url","pattern":"https://*","decision":"allow"}],
		"edit":"deny"}}`)
	want := []string{
		`permissions.default "allow"`,
		`permissions.tools["bash"][2] allow "npm test"`,
		`permissions.tools["mcp_fetch"][0] allow "https://*" (on "url")`,
		`permissions.tools["write"] "allow"`,
	}
	if got := s.Widening(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Widening:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := permtest.Spec(t, `{"default":"ask","tools":{"bash":[{"pattern":"rm","decision":"deny"}]}}`).Widening(); len(got) != 0 {
		t.Errorf("a spec that only narrows: %q", got)
	}
	var nilSpec *permissions.Spec
	if got := nilSpec.Widening(); got != nil {
		t.Errorf("nil spec: %q", got)
	}
}

// Tool names in permissions may be globs: mcp__github__* covers every tool of the github MCP
// server; an exact name wins over a glob, a longer glob over a shorter one.
func TestToolNameGlobs(t *testing.T) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "user", Spec: permtest.Spec(t, `{"tools":{
		"mcp__*": "deny",
		"mcp__github__*": "allow",
		"mcp__github__delete_repo": "ask"}}`)})
	for tool, want := range map[string]permissions.Decision{
		"mcp__github__list_issues": permissions.Allow,
		"mcp__github__delete_repo": permissions.Ask,
		"mcp__fs__write":           permissions.Deny,
		"bash":                     permissions.Ask, // no glob matches: the built-in default
	} {
		if got := p.Decide(permtest.Call(tool, "{}")).Decision; got != want {
			t.Errorf("%s: %s, want %s", tool, got, want)
		}
	}
	if _, err := permissions.ParseSpec([]byte(`{"tools":{"mcp__[x":"allow"}}`)); err == nil {
		t.Error("a malformed tool-name glob was accepted")
	}
}

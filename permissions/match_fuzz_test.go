package permissions

// The fuzz target of rules on file paths (and other arguments): no panic; a path that climbs
// out of the working folder never matches a relative pattern; the verdict does not depend on
// how the same path is spelt; and a narrow-only layer never makes a verdict wider.
// Seeds: testdata/fuzz/FuzzPathRules and the rows below.

import (
	"encoding/json"
	"path"
	"strings"
	"testing"
)

const fuzzPathPolicy = `{"default":"ask","tools":{
	"write":[{"pattern":"**/.env","decision":"deny"},{"pattern":"docs/**","decision":"allow"},{"pattern":"/w/out/*.txt","decision":"allow"}],
	"read":[{"pattern":"secrets/**","decision":"deny"},{"pattern":"**","decision":"allow"}],
	"fetch":[{"path":"url","pattern":"https://pkg.go.dev/*","decision":"allow"}]}}`

const fuzzNarrowPolicy = `{"default":"allow","tools":{
	"write":[{"pattern":"docs/private/**","decision":"deny"},{"pattern":"**","decision":"allow"}],
	"read":"ask"}}`

func FuzzPathRules(f *testing.F) {
	for _, s := range []string{
		"docs/a.md", "./docs//a.md", "docs/../x", "../w/docs/a.md", "/w/docs/a.md", "/w/out/a.txt",
		"out/a.txt", "a/.env", ".env", "secrets/k", "/etc/passwd", "docs/[x].md", "docs/*", "",
		"https://pkg.go.dev/x", "https://pkg.go.dev/x;rm", "docs/\x00", "~/docs/a",
	} {
		f.Add("write", s)
		f.Add("read", s)
		f.Add("fetch", s)
	}
	trusted, err := ParseSpec([]byte(fuzzPathPolicy))
	if err != nil {
		f.Fatal(err)
	}
	narrow, err := ParseSpec([]byte(fuzzNarrowPolicy))
	if err != nil {
		f.Fatal(err)
	}
	p := NewPolicy(nil, Layer{Source: "user", Spec: trusted})
	pn := NewPolicy(nil, Layer{Source: "user", Spec: trusted}, Layer{Source: "ws", Spec: narrow, Narrow: true})
	f.Fuzz(func(t *testing.T, tool, value string) {
		key := "path"
		if tool == "fetch" {
			key = "url"
		}
		args, _ := json.Marshal(map[string]string{key: value})
		c := Call{Tool: tool, Args: args, Cwd: "/w"}
		v := p.Decide(c)
		if v != p.Decide(c) {
			t.Fatalf("%s %q: two decisions", tool, value)
		}
		// A narrow-only layer can only make it stricter.
		if vn := pn.Decide(c); rank(vn.Decision) < rank(v.Decision) {
			t.Fatalf("%s %q: the narrow layer widened %s to %s", tool, value, v.Decision, vn.Decision)
		}
		if key != "path" || value == "" || strings.ContainsRune(value, 0) {
			return
		}
		clean := path.Clean(value)
		// A path that leaves /w never matches the relative docs/** allow rule.
		if tool == "write" && v.Decision == Allow {
			abs := clean
			if !path.IsAbs(abs) {
				abs = path.Join("/w", abs)
			}
			if abs != "/w/docs" && !strings.HasPrefix(abs, "/w/docs/") && !(strings.HasPrefix(abs, "/w/out/") && strings.HasSuffix(abs, ".txt")) {
				t.Fatalf("write %q (%s) allowed outside docs/ and out/*.txt", value, abs)
			}
		}
		// The same path spelt another way gets the same verdict.
		other := "./" + strings.TrimPrefix(clean, "./")
		if path.IsAbs(clean) {
			other = clean + "/."
		}
		args2, _ := json.Marshal(map[string]string{key: other})
		if v2 := p.Decide(Call{Tool: tool, Args: args2, Cwd: "/w"}); v2.Decision != v.Decision {
			t.Fatalf("%s %q is %s, spelt %q it is %s", tool, value, v.Decision, other, v2.Decision)
		}
	})
}

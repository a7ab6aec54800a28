package permissions

// The fuzz target of the bash-command matcher: no panic, and the invariants of multi-part
// evaluation, on any input. Seeds: testdata/fuzz/FuzzShellRules and the rows below.

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/shellcmd"
)

// fuzzPolicy has the kinds of rules whose interplay the invariants are about: allow and
// deny rules of one and two words, an ask rule, and write rules.
const fuzzPolicy = `{"tools":{
	"bash":[
		{"pattern":"rm","decision":"deny"},
		{"pattern":"git push","decision":"ask"},
		{"pattern":"git","decision":"allow"},
		{"pattern":"ls","decision":"allow"},
		{"pattern":"echo","decision":"allow"},
		{"pattern":"cat","decision":"allow"},
		{"pattern":"find","decision":"allow"},
		{"pattern":"sed","decision":"allow"},
		{"pattern":"npm test && npm run lint","decision":"allow"}],
	"write":[{"pattern":"docs/**","decision":"allow"},{"pattern":"**/.env","decision":"deny"}]}}`

func FuzzShellRules(f *testing.F) {
	for _, s := range []string{
		"ls -la", "r''m -rf x", "ls; rm x", "echo $(rm x)", "find . -exec rm {} \\;",
		"eval \"rm x\"", "cat <<EOF > docs/x\n$(rm y)\nEOF", "git -c a=b push", "xargs -I{} {}",
		"sed 's/[/]/x/w f' y", "echo {a,b}$((1+x))", "npm test && npm run lint",
	} {
		f.Add(s)
	}
	spec, err := ParseSpec([]byte(fuzzPolicy))
	if err != nil {
		f.Fatal(err)
	}
	p := NewPolicy(nil, Layer{Source: "fuzz", Spec: spec})
	f.Fuzz(func(t *testing.T, cmd string) {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		c := Call{Tool: "bash", Args: args, Cwd: "/w"}
		v := p.Decide(c)
		if rank(v.Decision) == 0 && v.Decision != Allow {
			t.Fatalf("%q: decision %q", cmd, v.Decision)
		}
		sc, ok := callCommand(c)
		if !ok {
			t.Fatalf("%q: no command", cmd)
		}
		// The call is as strict as its strictest part: allow of the whole implies allow of
		// every part, and deny of a part implies deny of the whole.
		parts := p.partVerdicts(c, sc)
		for i, pv := range parts {
			if v.Decision == Allow && pv.Decision != Allow {
				t.Fatalf("%q: allowed, but part %d (%s) is %s", cmd, i, sc.Subjects()[i].Text(), pv.Decision)
			}
			if pv.Decision == Deny && v.Decision != Deny {
				t.Fatalf("%q: part %d (%s) is denied, the call is %s", cmd, i, sc.Subjects()[i].Text(), v.Decision)
			}
		}
		if v.Decision == Allow && (sc.Unsafe != "" || sc.ParseErr != "") {
			t.Fatalf("%q: allowed despite %q", cmd, sc.Unsafe)
		}
		// As a remembered answer: an allow matches only when it matches every part, a deny
		// whenever it matches one.
		for _, pat := range []string{"ls", "git", "rm", "npm test && npm run lint"} {
			cp := shellcmd.CompilePattern(pat)
			if (Rule{Pattern: pat, Decision: Allow}).Matches(c) {
				for i, pt := range sc.Subjects() {
					if cp.Match(sc, &pt, true) != shellcmd.MatchYes {
						t.Fatalf("%q: allow %q matched the call but not part %d", cmd, pat, i)
					}
				}
			}
			denied := (Rule{Pattern: pat, Decision: Deny}).Matches(c)
			for _, pt := range sc.Subjects() {
				if cp.Match(sc, &pt, false) != shellcmd.MatchNone && !denied {
					t.Fatalf("%q: deny %q matches part %s but not the call", cmd, pat, pt.Text())
				}
			}
		}
		// Parsing is deterministic, and the cache gives what a fresh parse gives.
		if w := p.Decide(c); w != v {
			t.Fatalf("%q: %+v then %+v", cmd, v, w)
		}
		vals, _ := values(c, "command") // JSON replaced any invalid UTF-8
		if fresh := shellcmd.Parse(vals[0].text); fresh.Unsafe != sc.Unsafe || len(fresh.Parts) != len(sc.Parts) || fresh.Canon != sc.Canon {
			t.Fatalf("%q: the cached parse differs from a fresh one", cmd)
		}
		// Any scope proposed for the call covers it and is one the store accepts.
		if s, ok := SuggestScope(c); ok {
			if err := s.Rule(Allow).check("bash"); err != nil || !s.Matches(c, Allow) || !s.Matches(c, Deny) {
				t.Fatalf("%q: scope %+v does not cover the call (%v)", cmd, s, err)
			}
		}
	})
}

// partVerdicts returns the trusted layers' verdict for each simple command of a parsed bash
// call, as Decide computes them before taking the strictest.
func (p *Policy) partVerdicts(c Call, sc *shellcmd.Command) []Verdict {
	li, e, found := p.entry(c.Tool)
	parts := sc.Subjects()
	out := make([]Verdict, len(parts))
	for i := range parts {
		out[i] = p.decideSubject(c, sc, &parts[i], li, e, found)
	}
	return out
}

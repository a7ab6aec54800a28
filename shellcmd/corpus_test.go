package shellcmd_test

// The corpus of bash commands (shellcmdtest), read by this package alone: each command is
// decided from what Parse says it runs and writes, with the rules applied the way the
// permission policy applies them (decide below), so that a command read wrong fails here,
// in the package that reads it. Package permissions decides the same corpus through its
// policy. Also: the forms a rule's pattern takes, and expansions that may turn into a
// denied word.

import (
	"path"
	"strings"
	"testing"

	"github.com/pid-agent/pid/shellcmd"
	"github.com/pid-agent/pid/shellcmd/shellcmdtest"
)

// rank orders decisions by strictness.
var rank = map[string]int{shellcmdtest.Allow: 0, shellcmdtest.Ask: 1, shellcmdtest.Deny: 2}

// decide is the decision on command cmd run in cwd under rules, as package permissions
// makes it for a bash call with rules on bash and no default: for each part, the first rule
// whose pattern matches it decides (one that may match through an expansion asks), no rule
// asks; the call takes its strictest part; a construct no rule can vouch for turns allow
// into ask; then each file written asks unless writable says it may be written.
func decide(rules []shellcmdtest.Rule, cmd, cwd string, writable func(string) bool) string {
	sc := shellcmd.Parse(cmd)
	best := shellcmdtest.Allow
	parts := sc.Subjects()
	for i := range parts {
		d := shellcmdtest.Ask
		for _, r := range rules {
			m := shellcmd.CompilePattern(r.Pattern).Match(sc, &parts[i], r.Decision == shellcmdtest.Allow)
			if m == shellcmd.MatchYes {
				d = r.Decision
				break
			}
			if m == shellcmd.MatchMaybe {
				break // a deny or ask rule that may apply: ask
			}
		}
		if rank[d] > rank[best] {
			best = d
		}
	}
	if best == shellcmdtest.Allow && sc.Unsafe != "" {
		best = shellcmdtest.Ask
	}
	if best == shellcmdtest.Deny {
		return best
	}
	for _, w := range sc.Writes {
		p := w
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		if writable == nil || !writable(path.Clean(p)) {
			best = shellcmdtest.Ask
		}
	}
	return best
}

// corpusWritable reports whether the corpus allows writing p: under Cwd/WritesAllowed.
func corpusWritable(p string) bool {
	return strings.HasPrefix(p, path.Join(shellcmdtest.Cwd, shellcmdtest.WritesAllowed)+"/")
}

func TestCorpus(t *testing.T) {
	if len(shellcmdtest.Corpus) < 60 {
		t.Fatalf("the corpus has %d rows, want at least 60", len(shellcmdtest.Corpus))
	}
	seen := map[string]bool{}
	for _, row := range shellcmdtest.Corpus {
		if seen[row.Cmd] {
			t.Errorf("duplicate row %q", row.Cmd)
		}
		seen[row.Cmd] = true
		sc := shellcmd.Parse(row.Cmd)
		if got := decide(shellcmdtest.Rules, row.Cmd, shellcmdtest.Cwd, corpusWritable); got != row.Want {
			var parts []string
			for _, p := range sc.Parts {
				parts = append(parts, p.Text())
			}
			t.Errorf("%q: %s, want %s: %s (parts %q, writes %q, unsafe %q)", row.Cmd, got, row.Want, row.Why, parts, sc.Writes, sc.Unsafe)
		}
	}
}

func TestShellExpansionMayMatchDeny(t *testing.T) {
	// A deny rule of several words that an expansion may complete asks rather than allows.
	rules := []shellcmdtest.Rule{{Pattern: "git push", Decision: shellcmdtest.Deny}, {Pattern: "git", Decision: shellcmdtest.Allow}}
	cases := map[string]string{
		"git push origin":      shellcmdtest.Deny,
		"git --no-pager push":  shellcmdtest.Deny, // harmless global options are skipped
		"git -c x=y push":      shellcmdtest.Deny,
		"git $SUB origin":      shellcmdtest.Ask, // $SUB may be push
		"git log":              shellcmdtest.Allow,
		"git pu*":              shellcmdtest.Ask, // the glob may expand to push
		"git log --format=%an": shellcmdtest.Allow,
	}
	for cmd, want := range cases {
		if got := decide(rules, cmd, shellcmdtest.Cwd, nil); got != want {
			t.Errorf("%q: %s, want %s", cmd, got, want)
		}
	}
}

func TestCommandPatternForms(t *testing.T) {
	const allow, ask = shellcmdtest.Allow, shellcmdtest.Ask
	cases := []struct {
		pattern, cmd string
		want         string
	}{
		{"git *", "git log", allow}, // a last * stands for any further words
		{"git *", "git", allow},
		{"*", "anything at all", allow}, // every command, if plain
		{"*", "./x", allow},
		{"*", "$X", ask},                            // never an expansion
		{"[", "[ -f go.mod ]", allow},               // [ is the test command, not a glob class
		{"[", "[[ -f go.mod ]]", ask},               // [[ is a keyword: no simple command to match; bash asks
		{"'my tool' run", "'my tool' run x", allow}, // quoting in patterns
		{"timeout 5 npm test", "npm test", allow},   // wrappers are stripped on both sides
		{"npm test && npm run lint", "npm test && npm run lint", allow},
		{"npm test && npm run lint", "npm test&&npm  run 'lint'", allow}, // normalised
		{"npm test && npm run lint", "npm test; npm run lint", ask},      // another operator
		{"npm test && npm run lint", "npm test && npm run lint --fix", ask},
		{"npm test && npm run lint", "npm test", ask}, // a compound pattern is exact
		// A pattern with an interpreter's inline code allows exactly that command.
		{"python3 -c 'print(1)'", "python3 -c 'print(1)'", allow},
		{"python3 -c 'print(1)'", "python3 -c 'print(1)' extra", ask},
		{"python3 -c", "python3 -c 'print(2)'", allow}, // naming the option allows any code
		{"python3", "python3 -c 'print(2)'", allow},    // as naming the interpreter does
	}
	for _, c := range cases {
		if got := decide([]shellcmdtest.Rule{{Pattern: c.pattern, Decision: allow}}, c.cmd, shellcmdtest.Cwd, nil); got != c.want {
			t.Errorf("pattern %q, command %q: %s, want %s", c.pattern, c.cmd, got, c.want)
		}
	}
}

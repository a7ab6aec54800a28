package permissions_test

// The corpus of bash commands (shellcmd/shellcmdtest; package shellcmd reads it on its own)
// decided by the policy: the policy reads bash through shellcmd and gives every row the
// decision the corpus expects. Also: the verdict names the part that decided, a plain
// "bash": "allow", settings that reject patterns matching nothing, and the benchmarks of
// Decide on bash.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
	"github.com/pid-agent/pid/shellcmd/shellcmdtest"
)

// corpusPolicy is the corpus's rules (package shellcmdtest) as a policy: its rules on bash,
// writes allowed under docs/ only. Everything else asks (the built-in nature of bash and
// write).
var corpusPolicy = func() string {
	var rules []string
	for _, r := range shellcmdtest.Rules {
		rules = append(rules, fmt.Sprintf(`{"pattern":%s,"decision":%q}`, jsonString(r.Pattern), r.Decision))
	}
	return `{"tools":{"bash":[` + strings.Join(rules, ",") + `],
	"write":[{"pattern":"` + shellcmdtest.WritesAllowed + `/**","decision":"allow"}]}}`
}()

const corpusCwd = shellcmdtest.Cwd

const (
	allow = permissions.Allow
	ask   = permissions.Ask
	deny  = permissions.Deny
)

func corpusPolicyValue(t *testing.T) *permissions.Policy {
	t.Helper()
	return permissions.NewPolicy(nil, permissions.Layer{Source: "corpus", Spec: permtest.Spec(t, corpusPolicy)})
}

func bashCall(cmd string) permissions.Call {
	return permissions.Call{Tool: "bash", Args: json.RawMessage(permtest.ArgsJSON("command", cmd)), Cwd: corpusCwd}
}

func TestShellCorpus(t *testing.T) {
	p := corpusPolicyValue(t)
	for _, row := range shellcmdtest.Corpus {
		v := p.Decide(bashCall(row.Cmd))
		if v.Decision != permissions.Decision(row.Want) {
			t.Errorf("%q: %s (source %q, part %q), want %s: %s", row.Cmd, v.Decision, v.Source, v.Part, row.Want, row.Why)
		}
	}
}

func TestShellVerdictNamesThePart(t *testing.T) {
	p := corpusPolicyValue(t)
	cases := []struct {
		cmd, source, part string
		rule              int
	}{
		{"ls && rm -rf x", "corpus", "rm -rf x", 0},
		{"ls > out.txt", "built-in", "write out.txt", -1},
		{"eval ls", "built-in", "eval ls", -1}, // eval's own part has no rule
		{"echo $((x+1))", "built-in", "the command computes arithmetic on variables or commands", -1},
		{"ls; git push", "built-in", "git push", -1},
		{"git status", "corpus", "git status", 2},
	}
	for _, c := range cases {
		v := p.Decide(bashCall(c.cmd))
		if v.Source != c.source || v.Part != c.part || v.Rule != c.rule {
			t.Errorf("%q: %+v, want source %q, part %q, rule %d", c.cmd, v, c.source, c.part, c.rule)
		}
	}
}

// TestBashAllowEntryAllowsEverything: a plain "bash": "allow" means bash runs whatever the
// command does; pid does not second-guess it (but a deny elsewhere still wins).
func TestBashAllowEntryAllowsEverything(t *testing.T) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, `{"tools":{"bash":"allow"}}`)})
	for _, cmd := range []string{"eval ls", "echo x > out.txt", `echo "unclosed`, "$CMD"} {
		if v := p.Decide(bashCall(cmd)); v.Decision != allow {
			t.Errorf("%q: %+v, want allow", cmd, v)
		}
	}
	// With a default "allow" and rules, the constructs still ask.
	q := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, `{"default":"allow","tools":{"bash":[{"pattern":"rm","decision":"deny"}]}}`)})
	for cmd, want := range map[string]permissions.Decision{"eval ls": ask, "ls": allow, "ls > out.txt": allow, "rm x": deny, "source x": ask} {
		if v := q.Decide(bashCall(cmd)); v.Decision != want {
			t.Errorf("default allow, %q: %+v, want %s", cmd, v, want)
		}
	}
}

func TestSettingsRejectCommandPatternsThatMatchNothing(t *testing.T) {
	for _, pat := range []string{`echo "unclosed`, "echo $(date); ls", "for x in a; do ls; done"} {
		_, err := permissions.ParseSpec([]byte(`{"tools":{"bash":[{"pattern":` + jsonString(pat) + `,"decision":"deny"}]}}`))
		if err == nil || !strings.Contains(err.Error(), `permissions.tools["bash"][0]: pattern`) || !strings.Contains(err.Error(), "matches no command") {
			t.Errorf("pattern %q: %v, want an error naming the rule", pat, err)
		}
	}
	// Brackets and globs are fine in command patterns: they are not globs.
	permtest.Spec(t, `{"tools":{"bash":[{"pattern":"[","decision":"allow"},{"pattern":"ls [a","decision":"allow"}]}}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BenchmarkDecideGoTest is the typical check: `go test ./...` under the corpus policy. The
// command is in the parse cache after the first call, as it is for the store's look-ups
// that follow a Decide.
func BenchmarkDecideGoTest(b *testing.B) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "corpus", Spec: mustSpec(b, corpusPolicy)})
	c := bashCall("go test ./...")
	for b.Loop() {
		if p.Decide(c).Decision != allow {
			b.Fatal("not allowed")
		}
	}
}

// BenchmarkDecideParse is the same with a command seen for the first time each call, so
// that every Decide parses.
func BenchmarkDecideParse(b *testing.B) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "corpus", Spec: mustSpec(b, corpusPolicy)})
	calls := make([]permissions.Call, 4096)
	for i := range calls {
		calls[i] = bashCall(fmt.Sprintf("go test ./pkg%d/...", i))
	}
	i := 0
	for b.Loop() {
		if p.Decide(calls[i%len(calls)]).Decision != allow {
			b.Fatal("not allowed")
		}
		i++
	}
}

// BenchmarkDecideCompound parses a longer compound command each call.
func BenchmarkDecideCompound(b *testing.B) {
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "corpus", Spec: mustSpec(b, corpusPolicy)})
	calls := make([]permissions.Call, 4096)
	for i := range calls {
		calls[i] = bashCall(fmt.Sprintf("git status --short && go test ./pkg%d/... 2>&1 | sort | sed -n 1,40p > docs/out.txt", i))
	}
	i := 0
	for b.Loop() {
		if p.Decide(calls[i%len(calls)]).Decision != allow {
			b.Fatal("not allowed")
		}
		i++
	}
}

func mustSpec(b *testing.B, s string) *permissions.Spec {
	sp, err := permissions.ParseSpec([]byte(s))
	if err != nil {
		b.Fatal(err)
	}
	return sp
}

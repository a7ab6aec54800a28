package shellcmd_test

// Tests of what the package says about a command on its own, without a policy: the parts
// that would run, the files written, the construct no rule can vouch for, the scope an
// "always" answer covers, and how a pattern applies to a part. The decisions these lead to
// under a policy are tested in package permissions (its corpus of bash commands).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/shellcmd"
)

// texts returns the parts of a command as a person reads them.
func texts(c *shellcmd.Command) []string {
	var out []string
	for i := range c.Parts {
		out = append(out, c.Parts[i].Text())
	}
	return out
}

func TestParseReadsWhatRuns(t *testing.T) {
	cases := []struct {
		src    string
		parts  []string
		writes []string
		unsafe string // a word of Unsafe; "" when the command has no unsafe construct
	}{
		{"ls -la", []string{"ls -la"}, nil, ""},
		{"r''m -rf x", []string{"rm -rf x"}, nil, ""},                                    // quotes removed
		{"timeout 5 npm test", []string{"npm test"}, nil, ""},                            // a harmless wrapper stripped
		{"ls; rm x", []string{"ls", "rm x"}, nil, ""},                                    // every command of a list
		{"find . -exec rm {} \\;", []string{"find . -exec rm {} ';'", "rm {}"}, nil, ""}, // the command find runs
		{"sudo -u root rm x", []string{"sudo -u root rm x", "rm x"}, nil, ""},
		{"cat a > docs/x", []string{"cat a"}, []string{"docs/x"}, ""}, // a redirection writes
		{"echo hi | tee out.txt", []string{"echo hi", "tee out.txt"}, []string{"out.txt"}, ""},
		{"ls >/dev/null 2>&1", []string{"ls"}, nil, ""},                 // the null device is no write
		{"eval \"rm x\"", []string{"eval 'rm x'", "rm x"}, nil, "eval"}, // the string eval runs is read too
		{"sh -c 'rm x'", []string{"sh -c 'rm x'", "rm x"}, nil, "sh"},
		{"$CMD x", []string{"$CMD x"}, nil, "expansion"},
		{"echo 'unterminated", nil, nil, "does not parse"},
	}
	for _, c := range cases {
		cmd := shellcmd.Parse(c.src)
		if got := texts(cmd); !slices.Equal(got, c.parts) {
			t.Errorf("%q: parts %q, want %q", c.src, got, c.parts)
		}
		if !slices.Equal(cmd.Writes, c.writes) {
			t.Errorf("%q: writes %q, want %q", c.src, cmd.Writes, c.writes)
		}
		if c.unsafe == "" && cmd.Unsafe != "" || c.unsafe != "" && !strings.Contains(cmd.Unsafe, c.unsafe) {
			t.Errorf("%q: unsafe %q, want one naming %q", c.src, cmd.Unsafe, c.unsafe)
		}
	}
}

func TestParseNeverReadsMoreThanItCan(t *testing.T) {
	for name, src := range map[string]string{
		"control character": "ls\x01",
		"too deep":          strings.Repeat("(", 300) + "ls" + strings.Repeat(")", 300),
		"too long":          "ls " + strings.Repeat("a", 1<<20),
	} {
		c := shellcmd.Parse(src)
		if c.Unsafe == "" || c.ParseErr == "" {
			t.Errorf("%s: unsafe %q, parse error %q; want both set", name, c.Unsafe, c.ParseErr)
		}
	}
}

func TestParseCachedIsParse(t *testing.T) {
	for _, src := range []string{"ls -la", "git status && rm -rf build", "echo $(curl x) > out"} {
		a, b := shellcmd.ParseCached(src), shellcmd.ParseCached(src)
		fresh := shellcmd.Parse(src)
		if a != b {
			t.Errorf("%q: the second look-up parsed again", src)
		}
		if !slices.Equal(texts(a), texts(fresh)) || !slices.Equal(a.Writes, fresh.Writes) || a.Unsafe != fresh.Unsafe || a.Canon != fresh.Canon {
			t.Errorf("%q: the cached command differs from a fresh parse", src)
		}
	}
}

func TestSuggestScope(t *testing.T) {
	cases := []struct {
		src, pattern string
		exact, ok    bool
	}{
		{"git status --short", "git status", false, true}, // the subcommand, a plain word
		{"ls -la", "ls", false, true},                     // an option is not a subcommand
		{"timeout 5 npm test", "npm test", false, true},   // the wrapper stripped
		{"sed -i s/a/b/ f", "sed -i", false, true},        // names the option that writes
		{"python3 -c 'print(1)'", "python3 -c 'print(1)'", true, true},
		{"touch X; rm -f Y", "touch X; rm -f Y", true, true},
		{"cat a > docs/x", "", false, false}, // a write
		{"eval \"rm x\"", "", false, false},  // a construct no rule vouches for
		{"FOO=1 ls", "", false, false},       // a variable that may change what runs
		{"echo 'unterminated", "", false, false},
	}
	for _, c := range cases {
		s, ok := shellcmd.SuggestScope(shellcmd.Parse(c.src))
		if ok != c.ok || s.Pattern != c.pattern || s.Exact != c.exact {
			t.Errorf("%q: scope %+v, %v; want {%s %v}, %v", c.src, s, ok, c.pattern, c.exact, c.ok)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, src     string
		allow, denyOrAsk shellcmd.Match
	}{
		{"git status", "git status --short", shellcmd.MatchYes, shellcmd.MatchYes},
		{"git status", "git statusx", shellcmd.MatchNone, shellcmd.MatchNone},
		{"rm", "/bin/rm -rf x", shellcmd.MatchNone, shellcmd.MatchYes}, // allow names the command exactly, deny by base name
		{"rm", "RM x", shellcmd.MatchNone, shellcmd.MatchYes},
		{"git push", "git $SUB", shellcmd.MatchNone, shellcmd.MatchMaybe}, // an expansion may be the word
		{"sed", "sed -i s/a/b/ f", shellcmd.MatchNone, shellcmd.MatchYes}, // allow must name the option that writes
		{"sed -i", "sed -i s/a/b/ f", shellcmd.MatchYes, shellcmd.MatchYes},
		{"*", "anything at all", shellcmd.MatchYes, shellcmd.MatchYes},
		{"npm test && npm run lint", "npm test && npm run lint", shellcmd.MatchYes, shellcmd.MatchYes},
	}
	for _, c := range cases {
		p := shellcmd.CompilePattern(c.pattern)
		if p.Problem() != "" {
			t.Fatalf("pattern %q: %s", c.pattern, p.Problem())
		}
		cmd := shellcmd.Parse(c.src)
		pt := &cmd.Subjects()[0]
		if got := p.Match(cmd, pt, true); got != c.allow {
			t.Errorf("allow %q on %q: %v, want %v", c.pattern, c.src, got, c.allow)
		}
		if got := p.Match(cmd, pt, false); got != c.denyOrAsk {
			t.Errorf("deny %q on %q: %v, want %v", c.pattern, c.src, got, c.denyOrAsk)
		}
	}
	for _, bad := range []string{"ls && $X", "echo 'unterminated"} {
		if shellcmd.CompilePattern(bad).Problem() == "" {
			t.Errorf("pattern %q can match no command, but has no problem", bad)
		}
	}
}

func TestGitRiskReadsTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test needs git")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	cmd := shellcmd.Parse("git status")
	if r := cmd.GitRisk(dir); r.Why != "" {
		t.Fatalf("a fresh repository: risk %q", r.Why)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[core]\n\tfsmonitor = rm -rf ~\n")
	f.Close()
	r := cmd.GitRisk(dir)
	if !strings.Contains(r.Why, "core.fsmonitor") || !slices.Equal(r.Commands, []string{"rm -rf ~"}) {
		t.Errorf("core.fsmonitor set: risk %+v", r)
	}
	if r := shellcmd.Parse("ls").GitRisk(dir); r.Why != "" {
		t.Errorf("a command without git: risk %q", r.Why)
	}
}

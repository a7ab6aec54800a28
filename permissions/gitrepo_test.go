//go:build unix

package permissions_test

// A git command allowed by a rule must not run a program the repository's configuration
// names (issue 19: a workspace .git/config with core.fsmonitor = CMD made an allowed
// `git status` run CMD). The repositories here are real ones made by git, and the first
// test shows with git itself that the threat is real. What makes a repository risky is
// shellcmd's (its gitrepo_test.go); these tests are what the policy makes of a risk: an
// allowed command asks, a deny rule sees the commands git would run.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"

	"github.com/pid-agent/pid/shellcmd/shellcmdtest"
)

// gitPolicy allows git status, git log and git (any subcommand of the rule "git x"), and
// denies rm.
const gitPolicy = `{"tools":{"bash":[
	{"pattern":"rm","decision":"deny"},
	{"pattern":"git status","decision":"allow"},
	{"pattern":"git log","decision":"allow"},
	{"pattern":"git x","decision":"allow"},
	{"pattern":"cd","decision":"allow"},
	{"pattern":"ls","decision":"allow"}]}}`

var (
	newRepo = shellcmdtest.NewRepo
	gitEnv  = shellcmdtest.GitEnv
)

func gitDecide(t *testing.T, dir, cmd string) permissions.Verdict {
	t.Helper()
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: permtest.Spec(t, gitPolicy)})
	return p.Decide(permissions.Call{Tool: "bash", Args: []byte(permtest.ArgsJSON("command", cmd)), Cwd: dir})
}

// The probe's reproduction: git itself runs core.fsmonitor on git status, and pid no longer
// allows that git status without asking.
func TestGitStatusWithFsmonitorAsks(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	dir := newRepo(t, "[core]\n\tfsmonitor = \"touch "+marker+"; false\"\n")
	// The threat, shown with git: the allowed command runs the repository's program.
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git status did not run core.fsmonitor (%v): the test shows nothing", err)
	}
	v := gitDecide(t, dir, "git status")
	if v.Decision != permissions.Ask || !strings.Contains(v.Part, "core.fsmonitor") {
		t.Fatalf("git status in a repository with core.fsmonitor: %+v, want ask naming core.fsmonitor", v)
	}
	// In a subfolder too: git finds the repository above.
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if v := gitDecide(t, sub, "git status"); v.Decision != permissions.Ask {
		t.Errorf("git status in a subfolder: %+v, want ask", v)
	}
	// A remembered allow (or one kept in memory) does not apply either, and no "always"
	// is offered that could never apply.
	c := permissions.Call{Tool: "bash", Args: []byte(permtest.ArgsJSON("command", "git status")), Cwd: dir}
	if (permissions.Rule{Pattern: "git status", Decision: permissions.Allow}).Matches(c) {
		t.Error("a remembered allow of git status applies in the repository")
	}
	if s, ok := permissions.SuggestScope(c); ok {
		t.Errorf("an always scope %+v is offered", s)
	}
	// Without the setting, git status is allowed.
	clean := newRepo(t, "")
	if v := gitDecide(t, clean, "git status"); v.Decision != permissions.Allow {
		t.Errorf("git status in a plain repository: %+v, want allow", v)
	}
	if !(permissions.Rule{Pattern: "git status", Decision: permissions.Allow}).Matches(permissions.Call{Tool: "bash", Args: c.Args, Cwd: clean}) {
		t.Error("a remembered allow of git status does not apply in a plain repository")
	}
}

// A deny rule sees the commands the repository would have git run.
func TestGitRepoCommandsMeetDenyRules(t *testing.T) {
	dir := newRepo(t, "[core]\n\tfsmonitor = rm -rf x\n[alias]\n\tx = !rm y\n")
	for _, cmd := range []string{"git status", "git x"} {
		if v := gitDecide(t, dir, cmd); v.Decision != permissions.Deny || !strings.Contains(v.Part, "git would run rm") {
			t.Errorf("%q: %+v, want deny naming what git would run", cmd, v)
		}
	}
}

// BenchmarkDecideGitStatus is an allowed git status in a plain repository: the check of its
// configuration (finding .git, reading .git/config) on top of the rule.
func BenchmarkDecideGitStatus(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = gitEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	p := permissions.NewPolicy(nil, permissions.Layer{Source: "s", Spec: mustSpec(b, gitPolicy)})
	c := permissions.Call{Tool: "bash", Args: []byte(permtest.ArgsJSON("command", "git status")), Cwd: dir}
	for b.Loop() {
		if p.Decide(c).Decision != permissions.Allow {
			b.Fatal("not allowed")
		}
	}
}

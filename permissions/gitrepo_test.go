//go:build unix

package permissions_test

// A git command allowed by a rule must not run a program the repository's configuration
// names (issue 19: a workspace .git/config with core.fsmonitor = CMD made an allowed
// `git status` run CMD). The repositories here are real ones made by git, and the first
// test shows with git itself that the threat is real.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
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

// newRepo makes a git repository with git init and appends config to its .git/config.
func newRepo(t *testing.T, config string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests need git")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = gitEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	appendFile(t, filepath.Join(dir, ".git", "config"), config)
	return dir
}

// gitEnv is an environment in which git reads no configuration of the user running the
// tests.
func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

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

func TestGitRepoRisks(t *testing.T) {
	cases := []struct {
		config string
		cmd    string
		want   permissions.Decision
	}{
		{"", "git status", permissions.Allow},
		{"[core]\n\tfsmonitor = false\n", "git status", permissions.Allow}, // a boolean names no program
		{"[core]\n\tfsmonitor = true\n", "git status", permissions.Allow},
		{"[core] fsmonitor = ./hook\n", "git status", permissions.Ask}, // a variable on the header's line
		{"[CORE]\n\tFsMonitor = \"./h\"\\\n\"ook\"\n", "git status", permissions.Ask},
		{"[core]\n\tpager = less\n", "git log", permissions.Ask},
		{"[core]\n\tsshCommand = ssh -i k\n", "git status", permissions.Ask},
		{"[core]\n\thooksPath = .githooks\n", "git status", permissions.Ask},
		{"[diff \"pdf\"]\n\ttextconv = pdftotext\n", "git log", permissions.Ask},
		{"[filter \"lfs\"]\n\tclean = x\n", "git status", permissions.Ask},
		{"[include]\n\tpath = ../other.cfg\n", "git status", permissions.Ask},
		{"[includeIf \"gitdir:/\"]\n\tpath = x\n", "git status", permissions.Ask},
		{"[pager]\n\tlog = evil\n", "git log", permissions.Ask},
		{"[pager]\n\tlog = true\n", "git log", permissions.Allow},
		{"[alias]\n\tx = !echo hi\n", "git x", permissions.Ask},
		{"[alias]\n\tx = log\n", "git x", permissions.Ask},             // any alias of the command: it can carry -c
		{"[alias]\n\ty = !echo hi\n", "git status", permissions.Allow}, // an alias not used
		{"[user]\n\tname = \"[core] fsmonitor = x\"\n", "git status", permissions.Allow},
		{"[core\n", "git status", permissions.Ask},         // not readable as git reads it
		{"fsmonitor = x\n", "git status", permissions.Ask}, // appended to git init's [core] section
		{"[core]\n\tx = \"unclosed\n", "git status", permissions.Ask},
		{"[core]\n\tfsmonitor = x\n", "git status > /dev/null", permissions.Ask},
		{"[core]\n\tfsmonitor = x\n", "ls", permissions.Allow}, // no git
		{"[core]\n\tfsmonitor = x\n", "/usr/bin/git status", permissions.Ask},
	}
	for _, c := range cases {
		dir := newRepo(t, c.config)
		if v := gitDecide(t, dir, c.cmd); v.Decision != c.want {
			t.Errorf("config %q, %q: %+v, want %s", c.config, c.cmd, v, c.want)
		}
	}
}

// cd into another repository: that repository is checked too; a folder pid cannot tell asks.
func TestGitAfterCd(t *testing.T) {
	dir := newRepo(t, "")
	inner := filepath.Join(dir, "vendor", "lib")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", inner)
	cmd.Env = gitEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	appendFile(t, filepath.Join(inner, ".git", "config"), "[core]\n\tfsmonitor = ./x\n")
	cases := map[string]permissions.Decision{
		"git status":                        permissions.Allow,
		"cd vendor/lib && git status":       permissions.Ask,
		"cd vendor && cd lib && git status": permissions.Ask, // a cd relative to the one before
		"cd " + inner + " && git status":    permissions.Ask,
		"cd vendor && git status":           permissions.Allow,
		"cd $D && git status":               permissions.Ask,
		"cd && git status":                  permissions.Ask,
		"cd - && git status":                permissions.Ask,
		"cd vendor/lib && ls":               permissions.Allow,
	}
	for cmd, want := range cases {
		if v := gitDecide(t, dir, cmd); v.Decision != want {
			t.Errorf("%q: %+v, want %s", cmd, v, want)
		}
	}
}

// A worktree's .git file and a bare repository are found as git finds them; a .git that is
// a FIFO or a config that is one is refused without hanging.
func TestGitRepoLayouts(t *testing.T) {
	main := newRepo(t, "[core]\n\tfsmonitor = ./x\n")
	wt, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := gitDecide(t, wt, "git status"); v.Decision != permissions.Ask {
		t.Errorf("a .git file pointing at a risky repository: %+v, want ask", v)
	}
	bare, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", "--bare", bare)
	cmd.Env = gitEnv(bare)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	appendFile(t, filepath.Join(bare, "config"), "[core]\n\tfsmonitor = ./x\n")
	if v := gitDecide(t, bare, "git status"); v.Decision != permissions.Ask {
		t.Errorf("a bare repository as the folder: %+v, want ask", v)
	}
	fifo := newRepo(t, "")
	cfg := filepath.Join(fifo, ".git", "config")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if v := gitDecide(t, fifo, "git status"); v.Decision != permissions.Ask || !strings.Contains(v.Part, "cannot read") {
		t.Errorf("a config that is a FIFO: %+v, want ask saying pid cannot read it", v)
	}
	link := newRepo(t, "")
	cfg = filepath.Join(link, ".git", "config")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", cfg); err != nil {
		t.Fatal(err)
	}
	if v := gitDecide(t, link, "git status"); v.Decision != permissions.Ask || !strings.Contains(v.Part, "symbolic link") {
		t.Errorf("a config that is a link: %+v, want ask saying it is not followed", v)
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

//go:build unix

package shellcmd_test

// GitRisk against real repositories made by git (issue 19: a workspace .git/config with
// core.fsmonitor = CMD made an allowed `git status` run CMD): which settings name a program
// git would run, the repositories a command's cd leads to, and the layouts git finds (a
// worktree's .git file, a bare repository, a config that is a FIFO or a link). Package
// permissions shows what its policy makes of a risk.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pid-agent/pid/shellcmd"

	"github.com/pid-agent/pid/shellcmd/shellcmdtest"
)

var (
	newRepo    = shellcmdtest.NewRepo
	gitEnv     = shellcmdtest.GitEnv
	appendFile = shellcmdtest.AppendFile
)

// gitStatusRisk is GitRisk of `git status` run in dir.
func gitStatusRisk(dir string) shellcmd.GitRisk { return shellcmd.Parse("git status").GitRisk(dir) }

func TestGitRepoRisks(t *testing.T) {
	cases := []struct {
		config string
		cmd    string
		risky  bool
	}{
		{"", "git status", false},
		{"[core]\n\tfsmonitor = false\n", "git status", false}, // a boolean names no program
		{"[core]\n\tfsmonitor = true\n", "git status", false},
		{"[core] fsmonitor = ./hook\n", "git status", true}, // a variable on the header's line
		{"[CORE]\n\tFsMonitor = \"./h\"\\\n\"ook\"\n", "git status", true},
		{"[core]\n\tpager = less\n", "git log", true},
		{"[core]\n\tsshCommand = ssh -i k\n", "git status", true},
		{"[core]\n\thooksPath = .githooks\n", "git status", true},
		{"[diff \"pdf\"]\n\ttextconv = pdftotext\n", "git log", true},
		{"[filter \"lfs\"]\n\tclean = x\n", "git status", true},
		{"[include]\n\tpath = ../other.cfg\n", "git status", true},
		{"[includeIf \"gitdir:/\"]\n\tpath = x\n", "git status", true},
		{"[pager]\n\tlog = evil\n", "git log", true},
		{"[pager]\n\tlog = true\n", "git log", false},
		{"[alias]\n\tx = !echo hi\n", "git x", true},
		{"[alias]\n\tx = log\n", "git x", true},            // any alias of the command: it can carry -c
		{"[alias]\n\ty = !echo hi\n", "git status", false}, // an alias not used
		{"[user]\n\tname = \"[core] fsmonitor = x\"\n", "git status", false},
		{"[core\n", "git status", true},         // not readable as git reads it
		{"fsmonitor = x\n", "git status", true}, // appended to git init's [core] section
		{"[core]\n\tx = \"unclosed\n", "git status", true},
		{"[core]\n\tfsmonitor = x\n", "git status > /dev/null", true},
		{"[core]\n\tfsmonitor = x\n", "ls", false}, // no git
		{"[core]\n\tfsmonitor = x\n", "/usr/bin/git status", true},
	}
	for _, c := range cases {
		dir := newRepo(t, c.config)
		if r := shellcmd.Parse(c.cmd).GitRisk(dir); (r.Why != "") != c.risky {
			t.Errorf("config %q, %q: risk %+v, want risky %v", c.config, c.cmd, r, c.risky)
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
	cases := map[string]bool{ // command: risky
		"git status":                        false,
		"cd vendor/lib && git status":       true,
		"cd vendor && cd lib && git status": true, // a cd relative to the one before
		"cd " + inner + " && git status":    true,
		"cd vendor && git status":           false,
		"cd $D && git status":               true,
		"cd && git status":                  true,
		"cd - && git status":                true,
		"cd vendor/lib && ls":               false,
	}
	for cmd, risky := range cases {
		if r := shellcmd.Parse(cmd).GitRisk(dir); (r.Why != "") != risky {
			t.Errorf("%q: risk %+v, want risky %v", cmd, r, risky)
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
	if r := gitStatusRisk(wt); r.Why == "" {
		t.Errorf("a .git file pointing at a risky repository: no risk")
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
	if r := gitStatusRisk(bare); r.Why == "" {
		t.Errorf("a bare repository as the folder: no risk")
	}
	fifo := newRepo(t, "")
	cfg := filepath.Join(fifo, ".git", "config")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := gitStatusRisk(fifo); !strings.Contains(r.Why, "cannot read") {
		t.Errorf("a config that is a FIFO: risk %+v, want one saying pid cannot read it", r)
	}
	link := newRepo(t, "")
	cfg = filepath.Join(link, ".git", "config")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", cfg); err != nil {
		t.Fatal(err)
	}
	if r := gitStatusRisk(link); !strings.Contains(r.Why, "symbolic link") {
		t.Errorf("a config that is a link: risk %+v, want one saying it is not followed", r)
	}
}

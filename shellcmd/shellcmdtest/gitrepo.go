// This file holds the git repositories the repository-risk tests of shellcmd and permissions
// make: one git init with a configuration appended, in an environment that reads no
// configuration of the user running the tests.

package shellcmdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NewRepo makes a git repository with git init and appends config to its .git/config.
func NewRepo(t *testing.T, config string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests need git")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = GitEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	AppendFile(t, filepath.Join(dir, ".git", "config"), config)
	return dir
}

// GitEnv is an environment in which git reads no configuration of the user running the
// tests.
func GitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// AppendFile appends s to the file p, making it when it does not exist.
func AppendFile(t *testing.T, p, s string) {
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

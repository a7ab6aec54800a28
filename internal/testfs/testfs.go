// Package testfs is what the tests of the file tools and of the sandbox launcher share to
// set up real files: a temporary folder under its real path (RealTemp), files written into
// it (WriteFiles), a folder outside every place the sandbox makes private (OutsideTemp), a
// home and XDG folders of the test's own (IsolatedHome), and the check that the kernel gives
// pid's sandbox (NeedSandbox). Its entry point is RealTemp. Tests only: every function fails
// the test it is given instead of returning an error.
package testfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/sandbox"
)

// RealTemp returns t.TempDir() with symbolic links resolved (it may sit under a linked
// /tmp), so that a test can compare it with the real paths a workspace returns.
func RealTemp(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteFiles writes files (slash-separated path -> content) under dir, making the folders
// they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// OutsideTemp returns a fresh folder outside the workspace and outside the places the
// sandbox makes private (/tmp...), where a sandboxed command sees it but may not write:
// under the test's own package folder. It is removed when the test ends.
func OutsideTemp(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(wd, ".outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// IsolatedHome points HOME and the XDG folders at fresh folders for the rest of the test
// (t.Setenv: the test must not be parallel), and returns the home.
func IsolatedHome(t testing.TB) string {
	t.Helper()
	home := RealTemp(t)
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	return home
}

// NeedSandbox skips the test where the kernel cannot give pid's sandbox, saying why; it
// fails it instead when PID_REQUIRE_SANDBOX=1 (make test sets it), so that a run on such a
// kernel is never green with the sandbox untested.
func NeedSandbox(t testing.TB) {
	t.Helper()
	if c := sandbox.Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
}

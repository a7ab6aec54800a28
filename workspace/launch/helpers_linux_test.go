package launch_test

// Shared helpers of the launcher's tests: a workspace on real files, a launcher on it, and
// run, which starts a command through the launcher and waits for it as bash does (its
// output, then the lines the check after a sandboxed command, the proxy and the note after
// a refusal add). This test binary is its own sandbox helper: the sandbox package
// intercepts `sandbox-exec` before the tests start.

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/workspace"
	"github.com/pid-agent/pid/workspace/launch"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// needSandbox skips the test where the kernel cannot give the sandbox, saying why; it
// fails it instead when PID_REQUIRE_SANDBOX=1 (make test).
func needSandbox(t *testing.T) {
	t.Helper()
	if c := sandbox.Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
}

// realTemp returns t.TempDir() with symbolic links resolved.
func realTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeFiles writes files (slash-separated path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
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

// readFile returns the content of p, "" when it cannot be read.
func readFile(t *testing.T, p string) string {
	t.Helper()
	b, _ := os.ReadFile(p)
	return string(b)
}

// newLauncher makes a workspace whose cwd and only folder is a fresh folder holding
// files, and the launcher of its commands; both are closed when the test ends.
func newLauncher(t *testing.T, files map[string]string) (*launch.Launcher, string) {
	t.Helper()
	dir := realTemp(t)
	writeFiles(t, dir, files)
	ws, err := workspace.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := launch.New(ws)
	t.Cleanup(func() {
		l.Close()
		ws.Close()
	})
	return l, dir
}

// outsideTemp returns a fresh folder outside the workspace and outside the places the
// sandbox makes private (/tmp...), where a sandboxed command sees it but may not write:
// under the test's own package folder.
func outsideTemp(t *testing.T) string {
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

// isolatedHome points HOME and the XDG folders at fresh folders, and returns the home.
func isolatedHome(t *testing.T) string {
	t.Helper()
	home := realTemp(t)
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	return home
}

// ran is a command run through a launcher.
type ran struct {
	// text is its output, then what the check after it, the proxy's refusals and the note
	// after a refusal add (bash's result text); or the refusal when it did not run.
	text string
	// failed says it exited with a code other than 0, was killed, or did not run.
	failed bool
	det    launch.Details
}

// run runs command (bash -c) through l, escalated when unsandboxed, and waits for it.
func run(t *testing.T, l *launch.Launcher, command string, unsandboxed bool) ran {
	t.Helper()
	shell, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed: %v", err)
	}
	p, err := l.Start(context.Background(), shell, command, unsandboxed, launch.Caller{ID: "call-1", Command: command})
	if err != nil {
		return ran{text: err.Error(), failed: true}
	}
	out, rerr := io.ReadAll(p.Out)
	p.Out.Close()
	p.Group.Wait()
	if rerr != nil {
		t.Fatal(rerr)
	}
	st, ok := p.Group.Status()
	failed := !ok || st.ExitStatus() != 0 || st.Signaled()
	s := p.Sandbox
	if s == nil {
		return ran{text: string(out), failed: failed, det: *p.Details}
	}
	defer s.Spare()
	if _, signaled := s.Finish(); signaled {
		failed = true
	}
	text := string(out) + s.CheckAfter() + s.ProxyRefusals() + s.Note(string(out), failed)
	return ran{text: text, failed: failed, det: s.Details()}
}

// mustOK fails the test unless r succeeded, and returns its text.
func mustOK(t *testing.T, r ran) string {
	t.Helper()
	if r.failed {
		t.Fatalf("the command failed:\n%s", r.text)
	}
	return r.text
}

// mustFail fails the test unless r failed with a text holding every want.
func mustFail(t *testing.T, r ran, want ...string) {
	t.Helper()
	if !r.failed {
		t.Fatalf("want a failure, got: %s", r.text)
	}
	for _, w := range want {
		if !strings.Contains(r.text, w) {
			t.Errorf("the failure lacks %q:\n%s", w, r.text)
		}
	}
}

// symlink makes the symbolic link link to target.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// launcherIn makes the launcher of a workspace whose cwd is cwd and whose folders are
// roots; it is closed when the test ends.
func launcherIn(t *testing.T, cwd string, roots []string) *launch.Launcher {
	t.Helper()
	ws, err := workspace.New(cwd, roots)
	if err != nil {
		t.Fatal(err)
	}
	l := launch.New(ws)
	t.Cleanup(func() {
		l.Close()
		ws.Close()
	})
	return l
}

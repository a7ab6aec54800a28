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
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/workspace"
	"github.com/pid-agent/pid/workspace/launch"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
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
	dir := testfs.RealTemp(t)
	testfs.WriteFiles(t, dir, files)
	return launcherIn(t, dir, nil), dir
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

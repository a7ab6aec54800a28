// This file holds what the package's tests share: goleak over the whole package (no
// goroutine of a Session or Store may outlive it), a workspace of real files, and a bash
// call recorded the way the session's wrapped bash tool records it.

package checkpoint

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/tools"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		// A child re-run as an unprivileged user (asNobody): only the test named runs.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// newWorkspace returns a workspace folder holding files (name -> content, mode 0644) and the
// workspace the tools would have on it; both go when the test ends.
func newWorkspace(t *testing.T, files map[string]string) (string, *tools.Workspace) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	writeFiles(t, ws, files)
	w := openWorkspace(t, ws)
	return ws, w
}

// openWorkspace opens a workspace on the folders roots (the first is the cwd).
func openWorkspace(t *testing.T, roots ...string) *tools.Workspace {
	t.Helper()
	for _, r := range roots {
		if err := os.MkdirAll(r, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := tools.NewWorkspace(roots[0], roots)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newStore opens a store in a folder of the test's, bounded to maxBytes (0: the default).
func newStore(t *testing.T, maxBytes int64) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "checkpoints"), maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openSession opens session id's checkpoints on w; it is closed when the test ends (Close
// is safe to call twice, so a test may close it earlier).
func openSession(t *testing.T, st *Store, id string, w *tools.Workspace) *Session {
	t.Helper()
	s, err := st.Session(id, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// runBash runs script with sh in dir, between BeforeBash and AfterBash, as the session's
// wrapped bash tool does.
func runBash(t *testing.T, s *Session, dir, script string) {
	t.Helper()
	ctx := context.Background()
	snap := s.BeforeBash(ctx)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	s.AfterBash(ctx, snap)
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

// writeTool changes the file at p as the write tool does (a temporary file in its folder,
// renamed over it), inside Writing as the session's wrapped tool calls it.
func writeTool(t *testing.T, s *Session, p, content string) {
	t.Helper()
	done := s.Writing(p)
	defer done()
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".pid-tmp-test")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// fileIs fails the test unless p holds content with permission bits perm.
func fileIs(t *testing.T, p, content string, perm fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != perm {
		t.Errorf("%s: mode %v, want a regular file with %v", p, fi.Mode(), perm)
	}
	// Read with the permission bits opened for the owner, so that a mode 000 file can be
	// compared too; they are put back after.
	if perm&0o400 == 0 {
		os.Chmod(p, perm|0o400)
		defer os.Chmod(p, perm)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return
	}
	if string(data) != content {
		t.Errorf("%s holds %.80q, want %.80q", p, data, content)
	}
}

// skippedReason returns the reason the rewind res gives for skipping p, "" when it did not.
func skippedReason(res Result, p string) string {
	for _, s := range res.Skipped {
		if s.Path == p {
			return s.Reason
		}
	}
	return ""
}

// changes returns a checkpoint's files as path -> change.
func changes(in Info) map[string]string {
	out := map[string]string{}
	for _, f := range in.Files {
		out[f.Path] = f.Change
	}
	return out
}

// info returns the checkpoint id of s.
func info(t *testing.T, s *Session, id string) Info {
	t.Helper()
	for _, in := range s.List() {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("no checkpoint %s in %+v", id, s.List())
	return Info{}
}

const childEnv = "PID_CHECKPOINT_TEST_CHILD"

// asNobody reports whether the test named name was run, in a child process, as the user
// nobody: so it is when this process runs as root, to which permission bits mean nothing
// (a file made unreadable would still be read). The caller returns when it says true; the
// child (and a process not run as root) runs the test's body itself.
func asNobody(t *testing.T, name string) bool {
	t.Helper()
	if os.Getenv(childEnv) != "" || os.Geteuid() != 0 {
		return false
	}
	// The test binary sits in go's private build folder: a copy nobody can run.
	dir, err := os.MkdirTemp("", "pid-checkpoint-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "checkpoint.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), childEnv+"="+dir, "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = nobodyAttr()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s, run as nobody: %v\n%s", name, err, out)
	}
	t.Logf("%s ran as nobody:\n%s", name, out)
	return true
}

// This file tests that one File at a time holds a session: against another Store of this
// process, against another process, and after that process died holding it.

package store

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLockInProcess(t *testing.T) {
	dir := t.TempDir()
	s1, _ := Open(dir)
	s2, _ := Open(dir)
	f := create(t, s1, "/w")
	_, _, err := s2.OpenSession(f.ID())
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.PID != os.Getpid() || le.ID != f.ID() {
		t.Fatalf("OpenSession of a session this process holds: %v (%+v); want a LockedError with this pid", err, le)
	}
	if !strings.Contains(err.Error(), "already open in this pid process") {
		t.Errorf("message %q does not say the holder is this process", err)
	}
	// Reading without the lock is allowed.
	if _, err := s2.Read(f.ID()); err != nil {
		t.Errorf("Read of a held session: %v", err)
	}
	f.Close()
	f2, _, err := s2.OpenSession(f.ID())
	if err != nil {
		t.Fatalf("OpenSession after the holder closed: %v", err)
	}
	f2.Close()
}

func TestLockOtherProcessAndTakeOver(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	first, _ := f.Append(msg(1, userMsg("before the helper")))
	f.Close()

	h := startHolder(t, s, f.ID())
	helperPID := h.cmd.Process.Pid
	_, _, err := s.OpenSession(f.ID())
	var le *LockedError
	if !errors.As(err, &le) || le.PID != helperPID {
		t.Fatalf("OpenSession of a session another process holds: %v; want a LockedError with pid %d", err, helperPID)
	}
	if !strings.Contains(err.Error(), "another pid process (pid "+strconv.Itoa(helperPID)+")") {
		t.Errorf("message %q does not name the holder's pid", err)
	}
	if err := s.Delete(f.ID()); !errors.Is(err, ErrLocked) {
		t.Errorf("Delete of a session another process holds: %v, want ErrLocked", err)
	}

	h.kill(t) // SIGKILL: no Close, no sync, the lock file stays with a dead pid in it
	b, err := os.ReadFile(lockPath(f.Path()))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(helperPID) {
		t.Fatalf("lock file after the holder's death: %q, %v; want the stale file naming pid %d", b, err, helperPID)
	}
	f2, l, err := s.OpenSession(f.ID())
	if err != nil {
		t.Fatalf("OpenSession after the holder died: %v; want the stale lock taken over", err)
	}
	defer f2.Close()
	b, _ = os.ReadFile(lockPath(f.Path()))
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file says %q after the take-over, want this pid", b)
	}
	// The helper's Append, written without a sync before SIGKILL, was not lost.
	if len(l.Branch) != 2 || l.Branch[0].ID != first[0] || l.Branch[1].ID != h.entryID || l.Branch[1].Message.Text() != "from the helper" || len(l.Problems) != 0 {
		t.Errorf("after the helper's death: branch %d entries, problems %q; want the first message and the helper's", len(l.Branch), l.Problems)
	}
}

func TestLockFileThatIsALink(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	f.Close()
	target := t.TempDir() + "/victim"
	os.WriteFile(target, []byte("keep me"), 0o600)
	if err := os.Symlink(target, lockPath(f.Path())); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.OpenSession(f.ID()); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("OpenSession with a linked lock file: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the link's target was changed to %q", b)
	}
}

package trust

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGrantIsExactAndByRealPath(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	sub := filepath.Join(ws, "sub")
	os.MkdirAll(sub, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(ws, link)
	s, err := Open(filepath.Join(dir, "state", "trust.json"))
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	if s.Trusted(ws) {
		t.Fatal("a new store trusts a folder")
	}
	f, err := s.Grant(link)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	if f.Folder != real || f.TrustedAt != "2026-12-01T10:00:00Z" {
		t.Errorf("Grant = %+v, want the real path %s and the time", f, real)
	}
	for folder, want := range map[string]bool{ws: true, link: true, sub: false, dir: false} {
		if got := s.Trusted(folder); got != want {
			t.Errorf("Trusted(%s) = %v, want %v (trust is for exactly the folder)", folder, got, want)
		}
	}
	fi, _ := os.Stat(s.Path())
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("trust.json mode %v, want 0600", fi.Mode().Perm())
	}
	// Another process (another Store on the same file) sees it, and a revoke there is seen here.
	other, err := Open(s.Path())
	if err != nil || !other.Trusted(ws) {
		t.Fatalf("second store: %v, trusted %v", err, other.Trusted(ws))
	}
	if err := other.Revoke(link); err != nil {
		t.Fatal(err)
	}
	if s.Trusted(ws) {
		t.Error("a revoke by another store is not seen")
	}
	if err := s.Revoke(ws); !errors.Is(err, ErrUnknownFolder) {
		t.Errorf("Revoke of an untrusted folder = %v, want ErrUnknownFolder", err)
	}
}

func TestBrokenFileTrustsNothingAndIsNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trust.json")
	// A file that is a link to /dev/zero must not hang or grow memory.
	os.Symlink("/dev/zero", p)
	if _, err := Open(p); err == nil {
		t.Fatal("Open of a link to /dev/zero succeeded")
	}
	os.Remove(p)
	os.WriteFile(p, []byte(`{"version":1,"folders":[{"folder":"`+dir+`","trustedAt":"x"}]}`), 0o600)
	s, err := Open(p)
	if err != nil || !s.Trusted(dir) {
		t.Fatalf("Open: %v, trusted %v", err, s.Trusted(dir))
	}
	os.WriteFile(p, []byte(`{"version":1,"folders":[{"folder":"relative"}]} trailing`), 0o600)
	if s.Trusted(dir) {
		t.Error("a broken file still trusts what it held before")
	}
	if _, err := s.Grant(dir); err == nil {
		t.Error("Grant wrote over a file it could not read")
	}
	if b, _ := os.ReadFile(p); string(b) != `{"version":1,"folders":[{"folder":"relative"}]} trailing` {
		t.Errorf("the broken file was changed: %s", b)
	}
}

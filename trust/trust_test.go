package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// A trust.json that is a symbolic link (into a workspace, say), that others may write, or
// in a folder others may write, trusts nothing and says why, as ssh refuses its files; a
// file that turns so while pid runs (a chmod leaves the modification time alone) too, and
// once it is fixed it is believed again (issue 19).
func TestUnsafeFileTrustsNothing(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	os.MkdirAll(state, 0o700)
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	p := filepath.Join(state, "trust.json")
	content := []byte(`{"version":1,"folders":[{"folder":"` + ws + `","trustedAt":"x"}]}`)

	// A link to a file the workspace ships.
	inWs := filepath.Join(ws, "trust.json")
	os.WriteFile(inWs, content, 0o600)
	os.Symlink(inWs, p)
	s, err := Open(p)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "symbolic link") || s == nil || s.Trusted(ws) {
		t.Fatalf("Open of a link: %v, trusted %v; want ErrUnsafe naming the link and nothing trusted", err, s != nil && s.Trusted(ws))
	}
	if _, err := s.Grant(ws); err == nil {
		t.Error("Grant wrote through an unsafe file")
	}
	os.Remove(p)

	// A good file, then others may write it: the next use sees it and tells why, once.
	os.WriteFile(p, content, 0o600)
	s, err = Open(p)
	if err != nil || !s.Trusted(ws) {
		t.Fatalf("Open: %v, trusted %v", err, s.Trusted(ws))
	}
	var told []error
	s.OnBroken(func(err error) { told = append(told, err) })
	os.Chmod(p, 0o666)
	for range 2 { // asked twice, told once
		if s.Trusted(ws) {
			t.Error("a file others may write is still believed")
		}
	}
	if len(told) != 1 || !errors.Is(told[0], ErrUnsafe) || !strings.Contains(told[0].Error(), "0666") {
		t.Errorf("told %v, want one ErrUnsafe naming the mode", told)
	}
	os.Chmod(p, 0o600)
	if !s.Trusted(ws) {
		t.Error("the fixed file is not believed again")
	}

	// Its folder open to others.
	os.Chmod(state, 0o777)
	if s.Trusted(ws) {
		t.Error("a file in a folder others may write is believed")
	}
	if _, err := Open(p); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("Open in an open folder: %v", err)
	}
	os.Chmod(state, 0o700)
	if !s.Trusted(ws) {
		t.Error("the fixed folder is not believed again")
	}
}

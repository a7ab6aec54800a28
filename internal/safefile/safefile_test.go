//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2049), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want error
	}{
		{fifo, ErrNotRegular}, // would block forever with a plain open
		{zero, ErrNotRegular}, // would grow without end with a plain read
		{dir, ErrNotRegular},
		{big, ErrTooLarge},
		{filepath.Join(dir, "missing"), fs.ErrNotExist},
	}
	for _, c := range cases {
		_, err := Read(c.path, 2048)
		if !errors.Is(err, c.want) {
			t.Errorf("Read(%s) = %v, want %v", filepath.Base(c.path), err, c.want)
		}
	}
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("hello"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(ok, link)
	if b, err := Read(link, 5); err != nil || string(b) != "hello" {
		t.Errorf("Read through a link to a regular file = %q, %v", b, err)
	}
}

func TestWriteAtomicModeAndContent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "pid")
	p := filepath.Join(dir, "trust.json")
	if err := WriteAtomic(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	di, _ := os.Stat(dir)
	if string(b) != "two" || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("content %q mode %v folder mode %v; want two, 0600, 0700", b, fi.Mode().Perm(), di.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file (no temporary file left)", len(entries))
	}
}

func TestCleanTempsRemovesOnlyDeadOwners(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid // reaped: no such process any more
	deadName := ".trust.json" + TempPrefix + strconv.Itoa(dead) + "-0123456789ab"
	liveName := ".trust.json" + TempPrefix + strconv.Itoa(os.Getpid()) + "-0123456789ab"
	other := ".trust.json.tmp-123-0123456789ab" // not ours
	for _, n := range []string{deadName, liveName, other} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	if n := CleanTemps(dir); n != 1 {
		t.Errorf("CleanTemps removed %d files, want 1", n)
	}
	for n, want := range map[string]bool{deadName: false, liveName: true, other: true} {
		_, err := os.Lstat(filepath.Join(dir, n))
		if (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", n, err == nil, want)
		}
	}
}

// OpenNoFollow refuses a link at the path's last element (ELOOP), also when it would create
// the file, and opens a regular file.
func TestOpenNoFollowRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_APPEND} {
		if f, err := OpenNoFollow(link, flag, 0o600); !errors.Is(err, syscall.ELOOP) {
			if err == nil {
				f.Close()
			}
			t.Errorf("OpenNoFollow(link, %#x) = %v, want ELOOP", flag, err)
		}
	}
	f, err := OpenNoFollow(target, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

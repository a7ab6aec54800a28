//go:build unix

package tools_test

// Creating a file is atomic: the content goes to a temporary file of pid's naming in the
// same folder and is linked into place, never over a file that appeared meanwhile; the
// temporary files a killed pid left behind are removed when a later session first writes
// into their folder.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/tools"
)

// deadPID is above every kernel's pid limit, so no process has it.
const deadPID = 999_999_999

func TestTempNames(t *testing.T) {
	name := tools.TempName("main.go")
	if !strings.HasPrefix(name, ".main.go.pid-tmp-"+fmt.Sprint(os.Getpid())+"-") {
		t.Errorf("TempName = %q", name)
	}
	if pid, ok := tools.TempPID(name); !ok || pid != os.Getpid() {
		t.Errorf("TempPID(%q) = %d, %v", name, pid, ok)
	}
	if long := tools.TempName(strings.Repeat("é", 200)); len(long) > 255 {
		t.Errorf("a long name gives a temporary name of %d bytes", len(long))
	}
	for _, bad := range []string{
		"main.go", ".main.go.pid-1234", ".x.pid-tmp-12-abc", ".x.pid-tmp-x-0123abcd",
		"x.pid-tmp-12-0123abcd", ".x.pid-tmp-0-0123abcd", ".x.pid-tmp-12-0123abcg",
	} {
		if pid, ok := tools.TempPID(bad); ok {
			t.Errorf("TempPID(%q) = %d, want not a temporary name", bad, pid)
		}
	}
	if pid, ok := tools.TempPID(".x.pid-tmp-12-0123abcd"); !ok || pid != 12 {
		t.Errorf("TempPID: %d %v", pid, ok)
	}
}

// A file that appears between write's check and the create is left alone: the create
// fails instead of replacing it, and leaves no temporary file.
func TestCreateNeverOverwrites(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"there.txt": "theirs\n"})
	p := filepath.Join(dir, "there.txt")
	if err := tools.CreateFile(ws, p, []byte("ours\n")); !errors.Is(err, tools.ErrAppeared) {
		t.Fatalf("CreateFile over an existing file: %v", err)
	}
	if got := readFile(t, p); got != "theirs\n" {
		t.Errorf("the file that appeared was changed: %q", got)
	}
	// The same through a dangling link: the link's name is taken.
	symlink(t, "nowhere", filepath.Join(dir, "dangling"))
	if err := tools.CreateFile(ws, filepath.Join(dir, "dangling"), []byte("x")); !errors.Is(err, tools.ErrAppeared) {
		t.Fatalf("CreateFile over a dangling link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the create followed the dangling link")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"dangling", "there.txt"}) {
		t.Errorf("folder holds %v", got)
	}
	// A real create: the whole content, and no temporary file left.
	if err := tools.CreateFile(ws, filepath.Join(dir, "new", "f.txt"), []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "new", "f.txt")); got != "new\n" {
		t.Errorf("created %q", got)
	}
	if got := names(t, filepath.Join(dir, "new")); !slices.Equal(got, []string{"f.txt"}) {
		t.Errorf("folder holds %v", got)
	}
}

// names lists a folder's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// leftover makes a temporary file as pid names them, for process pid, last touched age ago.
func leftover(t *testing.T, dir, base string, pid int, age time.Duration) string {
	t.Helper()
	name := fmt.Sprintf(".%s.pid-tmp-%d-0123abcd", base, pid)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("half a fi"), 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-age)
	if err := os.Chtimes(p, then, then); err != nil {
		t.Fatal(err)
	}
	return name
}

// A pid killed while creating big.txt left a partial temporary file. The next session's
// write of big.txt creates it whole (it is not refused as stale: no big.txt exists), and
// removes the leftover; temporary files of live processes, recent ones and other files
// stay, and folders the session does not write to are not looked at.
func TestStaleTempsAreRemovedAtFirstWrite(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"keep.txt": "k\n", "other/x": "x\n"})
	dead := leftover(t, dir, "big.txt", deadPID, time.Hour)
	live := leftover(t, dir, "a.txt", 1, time.Hour) // init is alive
	recent := leftover(t, dir, "b.txt", deadPID, 0)
	otherDead := leftover(t, filepath.Join(dir, "other"), "y", deadPID, time.Hour)
	if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf(".d.pid-tmp-%d-0123abcd", deadPID)), 0o755); err != nil {
		t.Fatal(err)
	}
	folderLike := fmt.Sprintf(".d.pid-tmp-%d-0123abcd", deadPID)

	content := strings.Repeat("line\n", 1000)
	mustOK(t, call(t, ws, "write", jsonArgs(t, map[string]string{"path": "big.txt", "content": content})))
	if got := readFile(t, filepath.Join(dir, "big.txt")); got != content {
		t.Errorf("big.txt holds %d bytes", len(got))
	}
	want := []string{folderLike, live, recent, "big.txt", "keep.txt", "other"}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("after the first write the folder holds\n%v\nwant\n%v (the dead process's %s removed)", got, want, dead)
	}
	if got := names(t, filepath.Join(dir, "other")); !slices.Contains(got, otherDead) {
		t.Errorf("a folder the session did not write to was swept: %v", got)
	}
	// Writing into other/ sweeps it, once.
	mustOK(t, call(t, ws, "write", `{"path":"other/z","content":"z"}`))
	if got := names(t, filepath.Join(dir, "other")); !slices.Equal(got, []string{"x", "z"}) {
		t.Errorf("other/ holds %v", got)
	}
	again := leftover(t, filepath.Join(dir, "other"), "w", deadPID, time.Hour)
	mustOK(t, call(t, ws, "write", `{"path":"other/z2","content":"z"}`))
	if got := names(t, filepath.Join(dir, "other")); !slices.Contains(got, again) {
		t.Errorf("other/ was swept twice in one session: %v", got)
	}
}

// An edit (a replacement) sweeps its folder too, and leaves no temporary file of its own.
func TestEditSweepsAndLeavesNoTemp(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"x.go": "one\n"})
	leftover(t, dir, "x.go", deadPID, time.Hour)
	mustOK(t, call(t, ws, "read", `{"path":"x.go"}`))
	mustOK(t, call(t, ws, "edit", `{"path":"x.go","edits":[{"oldText":"one","newText":"two"}]}`))
	if got := names(t, dir); !slices.Equal(got, []string{"x.go"}) {
		t.Errorf("folder holds %v", got)
	}
}

package tools_test

// Stale edits: edit and write refuse a file that changed on disk after the agent read it.
// The content hash decides, so these tests need no watcher event; the watcher is tested on
// its own with a hook and a bounded wait.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
)

const staleMsg = "x.go changed on disk since you last read it (edited in the editor or by a formatter); read it again before editing"

func TestStaleEditRefused(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"x.go": "package x\n\nvar v = 1\n"})
	p := filepath.Join(dir, "x.go")
	readThen(t, ws, "x.go")
	// The user edits the file in the editor.
	if err := os.WriteFile(p, []byte("package x\n\nvar v = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, ws, "edit", `{"path":"x.go","edits":[{"oldText":"var v = 2","newText":"var v = 3"}]}`), staleMsg)
	mustFail(t, call(t, ws, "write", `{"path":"x.go","content":"package x\n"}`), staleMsg)
	if got := readFile(t, p); got != "package x\n\nvar v = 2\n" {
		t.Fatalf("a refused call changed the file: %q", got)
	}
	// Reading again clears it.
	readThen(t, ws, "x.go")
	mustOK(t, call(t, ws, "edit", `{"path":"x.go","edits":[{"oldText":"var v = 2","newText":"var v = 3"}]}`))
	if got := readFile(t, p); got != "package x\n\nvar v = 3\n" {
		t.Errorf("file holds %q", got)
	}
}

// Editors save by writing a new file and renaming it over the old one.
func TestStaleAfterSaveByRename(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"x.go": "a\n"})
	readThen(t, ws, "x.go")
	tmp := filepath.Join(dir, ".x.go.swp")
	if err := os.WriteFile(tmp, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "x.go")); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, ws, "edit", `{"path":"x.go","edits":[{"oldText":"b","newText":"c"}]}`), staleMsg)
}

// A file touched but holding the content the agent saw is not stale.
func TestTouchedButSameContentIsNotStale(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"x.go": "same\n"})
	p := filepath.Join(dir, "x.go")
	readThen(t, ws, "x.go")
	if err := os.WriteFile(p, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, ws, "edit", `{"path":"x.go","edits":[{"oldText":"same","newText":"new"}]}`))
}

// A change made through another spelling of the path (a link inside the workspace) is
// the same file.
func TestStaleAcrossSpellings(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"sub/x.go": "one\n"})
	symlink(t, "sub", filepath.Join(dir, "alias"))
	readThen(t, ws, "alias/x.go")
	mustOK(t, call(t, ws, "edit", `{"path":"./sub/x.go","edits":[{"oldText":"one","newText":"two"}]}`))
	if err := os.WriteFile(filepath.Join(dir, "sub", "x.go"), []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, ws, "edit", `{"path":"alias/x.go","edits":[{"oldText":"three","newText":"four"}]}`), "changed on disk since you last read it")
}

// After Close the workspace folders' roots are closed: the file tools refuse, saying why,
// and nothing is touched; ChangedFiles has nothing to hash. (What the guard reports while
// the session lives is workspace's TestChangedReportsWhatChanged.)
func TestFileToolsRefuseAfterClose(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	readThen(t, ws, "a.txt")
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, 10*time.Second, "a.txt reported", func() bool { return slices.Equal(ws.ChangedFiles(), []string{a}) })
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, ws, "edit", `{"path":"a.txt","edits":[{"oldText":"A","newText":"x"}]}`), "the workspace is closed")
	mustFail(t, call(t, ws, "read", `{"path":"a.txt"}`), "the workspace is closed")
	mustFail(t, call(t, ws, "write", `{"path":"new.txt","content":"x"}`), "the workspace is closed")
	if got := readFile(t, a); got != "A\n" {
		t.Errorf("edit after Close changed a.txt: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("write after Close created new.txt")
	}
	if got := ws.ChangedFiles(); got != nil {
		t.Errorf("ChangedFiles after Close = %v, want nil", got)
	}
	if err := ws.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

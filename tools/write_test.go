package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/tools"
)

func TestWriteCreatesFileAndParents(t *testing.T) {
	ws, dir := newWorkspace(t, nil)
	r := call(t, ws, "write", `{"path":"a/b/c.txt","content":"one\ntwo\n"}`)
	if got := mustOK(t, r); got != "Created a/b/c.txt (2 lines, 8 B)." {
		t.Errorf("got %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "a", "b", "c.txt")); got != "one\ntwo\n" {
		t.Errorf("file holds %q", got)
	}
	d := r.details.(tools.WriteDetails)
	wantDiff := "--- /dev/null\n+++ b/a/b/c.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
	if !d.Created || d.Diff != wantDiff || d.Added != 2 || d.Removed != 0 || d.Path != "a/b/c.txt" {
		t.Errorf("details %+v", d)
	}
	// The agent wrote it, so it may write it again without reading it.
	r = call(t, ws, "write", `{"path":"a/b/c.txt","content":"one\nTWO\n"}`)
	if got := mustOK(t, r); got != "Wrote a/b/c.txt (2 lines, 8 B): +1 -1 lines." {
		t.Errorf("got %q", got)
	}
	d = r.details.(tools.WriteDetails)
	if d.Created || d.Diff != "--- a/a/b/c.txt\n+++ b/a/b/c.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n" {
		t.Errorf("details %+v", d)
	}
	if got := mustOK(t, call(t, ws, "write", `{"path":"a/b/c.txt","content":"one\nTWO\n"}`)); got != "Wrote a/b/c.txt: the content is unchanged." {
		t.Errorf("got %q", got)
	}
}

func TestWriteExistingFileNeedsARead(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"x.go": "package x\n"})
	p := filepath.Join(dir, "x.go")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, ws, "write", `{"path":"x.go","content":"package y\n"}`), "x.go exists but you have not read it in this session; read it before changing it")
	if got := readFile(t, p); got != "package x\n" {
		t.Fatalf("refused write changed the file: %q", got)
	}
	mustOK(t, call(t, ws, "read", `{"path":"x.go"}`))
	r := call(t, ws, "write", `{"path":"x.go","content":"package y\n"}`)
	mustOK(t, r)
	if got := readFile(t, p); got != "package y\n" {
		t.Errorf("file holds %q", got)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("mode not kept: %v %v", fi.Mode(), err)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want 1", len(entries))
	}
}

func TestWriteRefusesFolders(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"d/x": ""})
	mustFail(t, call(t, ws, "write", `{"path":"d","content":"x"}`), "d is a folder")
	mustFail(t, call(t, ws, "write", `{"path":"d/x/y","content":"x"}`), "not a directory")
	mustFail(t, call(t, ws, "write", `{"path":"d"}`), "content")
}

func TestWriteNoNewlineAtEnd(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"f": "a\nb"})
	mustOK(t, call(t, ws, "read", `{"path":"f"}`))
	r := call(t, ws, "write", `{"path":"f","content":"a\nb\n"}`)
	want := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
	if d := r.details.(tools.WriteDetails); d.Diff != want {
		t.Errorf("diff %q, want %q", d.Diff, want)
	}
	if !strings.Contains(r.text, "+1 -1") {
		t.Errorf("text %q", r.text)
	}
}

// A huge diff is cut, at a line end, and says so; the file itself is whole.
func TestWriteCapsDiff(t *testing.T) {
	ws, dir := newWorkspace(t, nil)
	content := strings.Repeat(strings.Repeat("z", 99)+"\n", 4000) // 400 KB
	r := call(t, ws, "write", jsonArgs(t, map[string]string{"path": "big.txt", "content": content}))
	mustOK(t, r)
	d := r.details.(tools.WriteDetails)
	if !d.DiffTruncated || len(d.Diff) > tools.MaxDiffBytes || len(d.Diff) < tools.MaxDiffBytes-200 || !strings.HasSuffix(d.Diff, "\n") || d.Added != 4000 {
		t.Errorf("diff %d bytes, truncated %v, added %d", len(d.Diff), d.DiffTruncated, d.Added)
	}
	if got := readFile(t, filepath.Join(dir, "big.txt")); got != content {
		t.Error("file content differs")
	}
}

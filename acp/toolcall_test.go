// Unit tests of the tool-call content (a change's diff blocks; the titles and kinds are the
// tools' own, tested with them) and of the client file system calls (only when declared).

package acp

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDiffBlocks(t *testing.T) {
	type block struct{ old, new string }
	get := func(bs []any) []block {
		var out []block
		for _, b := range bs {
			d := b.(diffContent)
			if d.Path != "/w/f.txt" || d.Type != "diff" {
				t.Errorf("block %+v", d)
			}
			o := "<nil>"
			if d.OldText != nil {
				o = *d.OldText
			}
			out = append(out, block{o, d.NewText})
		}
		return out
	}
	twoHunks := "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n@@ -20,3 +20,3 @@\n x\n--- y\n+++ y\n z\n"
	got := get(diffBlocks("/w/f.txt", twoHunks, false, ""))
	want := []block{{"a\nb\nc\nd\n", "a\nB\nc\nd\n"}, {"x\n-- y\nz\n", "x\n++ y\nz\n"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("two hunks: %q", got)
	}
	noEOL := "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
	if got := get(diffBlocks("/w/f.txt", noEOL, false, "")); len(got) != 1 || got[0] != (block{"keep\nold", "keep\nnew"}) {
		t.Errorf("no newline at end: %q", got)
	}
	ctxNoEOL := "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n+top\n first\n last\n\\ No newline at end of file\n"
	if got := get(diffBlocks("/w/f.txt", ctxNoEOL, false, "")); len(got) != 1 || got[0] != (block{"first\nlast", "top\nfirst\nlast"}) {
		t.Errorf("context without newline: %q", got)
	}
	created := "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+--- not a header\n+two\n"
	if got := get(diffBlocks("/w/f.txt", created, true, "")); len(got) != 1 || got[0] != (block{"<nil>", "--- not a header\ntwo\n"}) {
		t.Errorf("created from the diff: %q", got)
	}
	if got := get(diffBlocks("/w/f.txt", created, true, "whole content")); got[0] != (block{"<nil>", "whole content"}) {
		t.Errorf("created with the content: %q", got)
	}
}

// TestClientFilesOnlyWhenDeclared drives clientFiles: with a client that declared reading
// but not writing, a read goes out as fs/read_text_file (validated by the harness) and its
// answer comes back, and a write is refused without a message; with a client that declared
// nothing, nothing is sent at all.
func TestClientFilesOnlyWhenDeclared(t *testing.T) {
	ctx := context.Background()
	c := start(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": false}})
	sid := c.newSession(t.TempDir(), "")
	f, canRead, canWrite := c.srv.files(sid)
	if !canRead || canWrite {
		t.Fatalf("capabilities read=%v write=%v", canRead, canWrite)
	}
	type read struct {
		text string
		err  error
	}
	done := make(chan read, 1)
	go func() {
		text, err := f.ReadTextFile(ctx, "/w/main.go", 10, 5)
		done <- read{text, err}
	}()
	m := c.next()
	if m.Method != "fs/read_text_file" || m.get("params.sessionId").String() != sid || m.get("params.path").String() != "/w/main.go" ||
		m.get("params.line").Int() != 10 || m.get("params.limit").Int() != 5 {
		t.Fatalf("request %s", m.raw)
	}
	c.respond(m, map[string]any{"content": "unsaved buffer"})
	if r := <-done; r.err != nil || r.text != "unsaved buffer" {
		t.Errorf("read %q, %v", r.text, r.err)
	}
	if err := f.WriteTextFile(ctx, "/w/main.go", "x"); !errors.Is(err, errNotDeclared) {
		t.Errorf("write: %v", err)
	}
	if _, err := f.ReadTextFile(ctx, "relative.go", 0, 0); err == nil {
		t.Errorf("a relative path was read")
	}
	c.quiet(50 * time.Millisecond)

	c2 := start(t)
	c2.initialize(nil)
	f2, r2, w2 := c2.srv.files("s1")
	if r2 || w2 {
		t.Fatalf("capabilities read=%v write=%v without fs", r2, w2)
	}
	if _, err := f2.ReadTextFile(ctx, "/x", 0, 0); !errors.Is(err, errNotDeclared) {
		t.Errorf("read: %v", err)
	}
	if err := f2.WriteTextFile(ctx, "/x", "y"); !errors.Is(err, errNotDeclared) {
		t.Errorf("write: %v", err)
	}
	c2.quiet(50 * time.Millisecond)
}

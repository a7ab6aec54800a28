package tools

// Edits of large files (issue 15): the content is held once and the diff is made from the
// lines around each replacement. Memory is bounded by what the edit allocates
// (runtime.MemStats.TotalAlloc), which is deterministic, never by time.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/udiff"
)

// testWorkspace returns a workspace on a fresh folder holding files (name -> content),
// closed when the test ends.
func testWorkspace(t *testing.T, files map[string]string) (*Workspace, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := NewWorkspace(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir
}

// numberedLines returns lines "line 00000001 ...\n" from 1 to n, each distinct.
func numberedLines(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %08d of the test text\n", i)
	}
	return sb.String()
}

// Editing one line of a 16 MB file allocates little more than one copy of it (the old
// edit allocated about ten: read buffer, string copies, the new content twice, the whole
// file split into lines twice for the diff). The result still says exactly what changed.
func TestEditLargeFileHoldsOneCopy(t *testing.T) {
	text := numberedLines(500000) // 16.5 MB
	ws, dir := testWorkspace(t, map[string]string{"big.txt": text})
	p := filepath.Join(dir, "big.txt")
	if _, err := ws.read(context.Background(), "big.txt", 1, 10); err != nil {
		t.Fatal(err)
	}
	old := "line 00250000 of the test text\n"
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := ws.edit(context.Background(), "big.txt", []replacement{{OldText: old, NewText: "the edited line\n"}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("the edit allocated %d bytes for a %d-byte file (%.2fx)", allocated, len(text), float64(allocated)/float64(len(text)))
	if limit := uint64(len(text)) * 5 / 4; allocated > limit {
		t.Errorf("the edit allocated %d bytes for a %d-byte file; want at most %d (one copy and change)", allocated, len(text), limit)
	}
	d := res.Details.(EditDetails)
	wantDiff := "--- a/big.txt\n+++ b/big.txt\n@@ -249997,7 +249997,7 @@\n" +
		" line 00249997 of the test text\n line 00249998 of the test text\n line 00249999 of the test text\n" +
		"-line 00250000 of the test text\n+the edited line\n" +
		" line 00250001 of the test text\n line 00250002 of the test text\n line 00250003 of the test text\n"
	if d.Diff != wantDiff || d.Added != 1 || d.Removed != 1 || d.FirstChangedLine != 250000 {
		t.Errorf("details %+v\nwant diff %q", d, wantDiff)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(text, old, "the edited line\n", 1); string(got) != want {
		t.Errorf("the file does not hold the edit (%d bytes, want %d)", len(got), len(want))
	}
	// What the edit wrote is what the agent saw: a second edit needs no read.
	if _, err := ws.edit(context.Background(), "big.txt", []replacement{{OldText: "the edited line\n", NewText: old}}); err != nil {
		t.Fatalf("second edit: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != text {
		t.Error("the second edit did not restore the file")
	}
}

// The diff made from windows around the replacements is the whole-file diff, for edits
// whose lines are all distinct (where a diff has only one minimal form): near each other
// (one hunk), just far enough apart for two, at the file's start and end, adding and
// removing lines, joining lines, and a last line without a newline.
func TestEditDiffEqualsWholeFileDiff(t *testing.T) {
	base := numberedLines(60)
	noEOL := strings.TrimSuffix(base, "\n")
	l := func(i int) string { return fmt.Sprintf("line %08d of the test text\n", i) }
	cases := []struct {
		name    string
		content string
		edits   []replacement
	}{
		{"one line", base, []replacement{{l(30), "changed\n"}}},
		{"six apart: one hunk", base, []replacement{{l(20), "a\n"}, {l(27), "b\n"}}},
		{"seven apart: two hunks", base, []replacement{{l(20), "a\n"}, {l(28), "b\n"}}},
		{"first line", base, []replacement{{l(1), "first\n"}}},
		{"last line", base, []replacement{{l(60), "last\n"}}},
		{"lines added", base, []replacement{{l(10), l(10) + "new 1\nnew 2\nnew 3\n"}}},
		{"lines removed", base, []replacement{{l(10) + l(11) + l(12), ""}}},
		{"lines joined", base, []replacement{{"text\nline 00000041", "text, line 00000041"}}},
		{"inside a line", base, []replacement{{"00000033 of", "00000033 in"}}},
		{"no newline at the end", noEOL, []replacement{{"line 00000060 of the test text", "the end"}}},
		{"newline added at the end", noEOL, []replacement{{"line 00000060 of the test text", "the end\n"}}},
		{"many", base, []replacement{{l(2), "x\n"}, {l(5), ""}, {l(30), "y\ny\n"}, {l(59), "z\n"}}},
	}
	for _, c := range cases {
		p, err := planEdits(c.content, c.edits, "f.txt")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := p.diff("f.txt")
		want := udiff.Unified("f.txt", c.content, p.build(), false)
		if got != want {
			t.Errorf("%s:\ngot  %+v\nwant %+v", c.name, got, want)
		}
	}
}

// The new content streamed in pieces is the content built whole.
func TestEditPiecesMakeTheContent(t *testing.T) {
	content := "alpha\nbeta\ngamma\n"
	p, err := planEdits(content, []replacement{{"gamma", "GAMMA"}, {"alpha", ""}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := p.pieces(func(s string) error {
		if s == "" {
			t.Error("an empty piece")
		}
		sb.WriteString(s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "\nbeta\nGAMMA\n"; sb.String() != want || p.build() != want {
		t.Errorf("pieces %q, build %q, want %q", sb.String(), p.build(), want)
	}
}

// This file tests Compare: the hunks of a file's change, their shape, ids and counts.

package changes

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// numbered returns lines "l1\n" to "lN\n", with the lines at the 1-based places in repl
// replaced.
func numbered(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r)
			continue
		}
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

// text returns a Side of content s.
func text(s string) Side { return Side{Data: []byte(s)} }

// shape is what a test expects of a hunk (its id is checked apart).
type shape struct {
	OldStart, OldLines, NewStart, NewLines int
	Header                                 string
}

func shapes(f File) []shape {
	out := []shape{}
	for _, h := range f.Hunks {
		out = append(out, shape{h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Header})
	}
	return out
}

var idForm = regexp.MustCompile(`^(\d+\+\d+\.[0-9a-f]{12}|bin\.[0-9a-f]{12}|mode\.[0-7]+\.[0-7]+)$`)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name           string
		before, now    Side
		change         string
		binary         bool
		hunks          []shape
		added, removed int
	}{
		{
			name:   "two changes far apart: two hunks, three lines of context (fewer at the start)",
			before: text(numbered(20, nil)), now: text(numbered(20, map[int]string{3: "L3\n", 15: "L15\n"})),
			change: "modified",
			hunks:  []shape{{1, 6, 1, 6, "@@ -1,6 +1,6 @@"}, {12, 7, 12, 7, "@@ -12,7 +12,7 @@"}},
			added:  2, removed: 2,
		},
		{
			name:   "changes six unchanged lines apart share a hunk",
			before: text(numbered(20, nil)), now: text(numbered(20, map[int]string{3: "L3\n", 10: "L10\n"})),
			change: "modified",
			hunks:  []shape{{1, 13, 1, 13, "@@ -1,13 +1,13 @@"}},
			added:  2, removed: 2,
		},
		{
			name:   "seven apart: two hunks that touch",
			before: text(numbered(20, nil)), now: text(numbered(20, map[int]string{3: "L3\n", 11: "L11\n"})),
			change: "modified",
			hunks:  []shape{{1, 6, 1, 6, "@@ -1,6 +1,6 @@"}, {8, 7, 8, 7, "@@ -8,7 +8,7 @@"}},
			added:  2, removed: 2,
		},
		{
			name:   "lines added and removed: the sides' lengths differ",
			before: text(numbered(10, nil)), now: text(numbered(10, map[int]string{5: "l5\nnew a\nnew b\n", 9: ""})),
			change: "modified",
			hunks:  []shape{{3, 8, 3, 9, "@@ -3,8 +3,9 @@"}},
			added:  2, removed: 1,
		},
		{
			name:   "a line added at the end of a file without its final newline",
			before: text("a\nb"), now: text("a\nb\nc"),
			change: "modified",
			hunks:  []shape{{1, 2, 1, 3, "@@ -1,2 +1,3 @@"}},
			added:  2, removed: 1,
		},
		{
			name:   "a final newline added: the last line differs",
			before: text("a\nb\nc"), now: text("a\nb\nc\n"),
			change: "modified",
			hunks:  []shape{{1, 3, 1, 3, "@@ -1,3 +1,3 @@"}},
			added:  1, removed: 1,
		},
		{
			name:   "CRLF lines: one changed line",
			before: text("a\r\nb\r\nc\r\nd\r\ne\r\n"), now: text("a\r\nb\r\nC\r\nd\r\ne\r\n"),
			change: "modified",
			hunks:  []shape{{1, 5, 1, 5, "@@ -1,5 +1,5 @@"}},
			added:  1, removed: 1,
		},
		{
			name:   "CRLF made LF: every line differs",
			before: text("a\r\nb\r\n"), now: text("a\nb\n"),
			change: "modified",
			hunks:  []shape{{1, 2, 1, 2, "@@ -1,2 +1,2 @@"}},
			added:  2, removed: 2,
		},
		{
			name:   "a file added",
			before: Side{}, now: text("a\nb\n"),
			change: "added",
			hunks:  []shape{{0, 0, 1, 2, "@@ -0,0 +1,2 @@"}},
			added:  2,
		},
		{
			name:   "a file deleted",
			before: text("a\nb\nc"), now: Side{},
			change:  "deleted",
			hunks:   []shape{{1, 3, 0, 0, "@@ -1,3 +0,0 @@"}},
			removed: 3,
		},
		{
			name:   "a one-line file added: its side's range is one number",
			before: Side{}, now: text("x\n"),
			change: "added",
			hunks:  []shape{{0, 0, 1, 1, "@@ -0,0 +1 @@"}},
			added:  1,
		},
		{
			name:   "an empty file added",
			before: Side{}, now: text(""),
			change: "added",
			hunks:  []shape{{0, 0, 0, 0, "@@ -0,0 +0,0 @@ an empty file"}},
		},
		{
			name:   "an empty file deleted",
			before: text(""), now: Side{},
			change: "deleted",
			hunks:  []shape{{0, 0, 0, 0, "@@ -0,0 +0,0 @@ an empty file"}},
		},
		{
			name:   "an empty file filled",
			before: text(""), now: text("a\n"),
			change: "modified",
			hunks:  []shape{{0, 0, 1, 1, "@@ -0,0 +1 @@"}},
			added:  1,
		},
		{
			name:   "a file emptied",
			before: text("a\nb\n"), now: text(""),
			change:  "modified",
			hunks:   []shape{{1, 2, 0, 0, "@@ -1,2 +0,0 @@"}},
			removed: 2,
		},
		{
			name:   "the same bytes: no hunk",
			before: text("a\nb\n"), now: text("a\nb\n"),
			change: "modified",
			hunks:  []shape{},
		},
		{
			name:   "a binary file (a NUL byte): one hunk",
			before: text("a\x00b"), now: text("a\x00c"),
			change: "modified", binary: true,
			hunks: []shape{{0, 0, 0, 0, "Binary files differ"}},
		},
		{
			name:   "text made binary (not UTF-8): one hunk",
			before: text("caf\n"), now: text("caf\xe9\n"),
			change: "modified", binary: true,
			hunks: []shape{{0, 0, 0, 0, "Binary files differ"}},
		},
		{
			name:   "a binary file added",
			before: Side{}, now: text("\x00\x01"),
			change: "added", binary: true,
			hunks: []shape{{0, 0, 0, 0, "Binary files differ"}},
		},
		{
			name:   "a binary file unchanged: no hunk",
			before: text("\x00"), now: text("\x00"),
			change: "modified", binary: true,
			hunks: []shape{},
		},
		{
			name:   "the mode changed only: one hunk of no lines",
			before: Side{Data: []byte("#!/bin/sh\n"), Mode: 0o644}, now: Side{Data: []byte("#!/bin/sh\n"), Mode: 0o755},
			change: "modified",
			hunks:  []shape{{0, 0, 0, 0, "old mode 0644, new mode 0755"}},
		},
		{
			name:   "mode and content changed: a hunk for each",
			before: Side{Data: []byte("a\n"), Mode: 0o644}, now: Side{Data: []byte("b\n"), Mode: 0o600},
			change: "modified",
			hunks:  []shape{{1, 1, 1, 1, "@@ -1 +1 @@"}, {0, 0, 0, 0, "old mode 0644, new mode 0600"}},
			added:  1, removed: 1,
		},
		{
			name:   "a mode not known on one side: no mode hunk",
			before: Side{Data: []byte("a\n")}, now: Side{Data: []byte("a\n"), Mode: 0o755},
			change: "modified",
			hunks:  []shape{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Compare("/w/f", tc.before, tc.now)
			if f.Path != "/w/f" || f.Change != tc.change || f.Binary != tc.binary || f.Added != tc.added || f.Removed != tc.removed || f.Coarse {
				t.Errorf("path %q change %q binary %v +%d -%d coarse %v, want /w/f %q %v +%d -%d", f.Path, f.Change, f.Binary, f.Added, f.Removed, f.Coarse, tc.change, tc.binary, tc.added, tc.removed)
			}
			if d := cmp.Diff(tc.hunks, shapes(f)); d != "" {
				t.Errorf("hunks (-want +got):\n%s", d)
			}
			for _, h := range f.Hunks {
				if !idForm.MatchString(h.ID) || h.State != Pending {
					t.Errorf("hunk %+v: id not of the form, or not pending", h)
				}
			}
			if f.Changed() != (len(tc.hunks) > 0) || f.Reviewed {
				t.Errorf("changed %v reviewed %v", f.Changed(), f.Reviewed)
			}
			again := Compare("/w/f", tc.before, tc.now)
			if d := cmp.Diff(f, again); d != "" {
				t.Errorf("a second Compare differs (-first +second):\n%s", d)
			}
		})
	}
}

// TestCompareJSON checks the wire shape of a file: exactly the fields, binary
// only when set, by and hunks never null.
func TestCompareJSON(t *testing.T) {
	f := Compare("/w/a.go", Side{}, text("x\n"))
	f.By = By("write")
	got, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"path":"/w/a.go","change":"added","reviewed":false,"hunks":[{"id":%q,"oldStart":0,"oldLines":0,"newStart":1,"newLines":1,"header":"@@ -0,0 +1 @@","state":"pending"}],"by":["write"]}`, f.Hunks[0].ID)
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bin := Compare("/w/b", text("\x00"), text("\x01"))
	got, _ = json.Marshal(bin)
	if !strings.Contains(string(got), `"binary":true`) || !strings.Contains(string(got), `"by":[]`) {
		t.Errorf("binary file: %s", got)
	}
	none := Compare("/w/c", text("a\n"), text("a\n"))
	got, _ = json.Marshal(none)
	if !strings.Contains(string(got), `"hunks":[]`) {
		t.Errorf("unchanged file: %s", got)
	}
}

// TestIDs checks what a hunk's id depends on: its place in the before file and its lines,
// not the rest of the file.
func TestIDs(t *testing.T) {
	before := numbered(40, nil)
	first := Compare("f", text(before), text(numbered(40, map[int]string{5: "X\n", 30: "Y\n"})))
	if len(first.Hunks) != 2 {
		t.Fatalf("hunks %v", ids(first))
	}
	// Another change elsewhere (a person's, a later prompt's) leaves both ids.
	more := Compare("f", text(before), text(numbered(40, map[int]string{5: "X\n", 18: "Z\n", 30: "Y\n"})))
	if !slices.Contains(ids(more), first.Hunks[0].ID) || !slices.Contains(ids(more), first.Hunks[1].ID) || len(more.Hunks) != 3 {
		t.Errorf("after a change in between: %v, want %v and one more", ids(more), ids(first))
	}
	// Lines added above the second hunk (the new file's numbering moves) leave its id.
	shifted := Compare("f", text(before), text(numbered(40, map[int]string{5: "X\nextra\nextra\n", 30: "Y\n"})))
	if shifted.Hunks[1].ID != first.Hunks[1].ID || shifted.Hunks[1].NewStart != first.Hunks[1].NewStart+2 {
		t.Errorf("after lines added above: %+v, want id %s two lines lower", shifted.Hunks[1], first.Hunks[1].ID)
	}
	if shifted.Hunks[0].ID == first.Hunks[0].ID {
		t.Errorf("the first hunk's lines changed, its id did not: %s", shifted.Hunks[0].ID)
	}
	// A change of its own lines gives a new id.
	edited := Compare("f", text(before), text(numbered(40, map[int]string{5: "X\n", 30: "Y2\n"})))
	if edited.Hunks[0].ID != first.Hunks[0].ID || edited.Hunks[1].ID == first.Hunks[1].ID {
		t.Errorf("after its line changed again: %v, want %s and a new id", ids(edited), first.Hunks[0].ID)
	}

	// The same change at two places of a file of repeated blocks: two ids.
	block := "func f() {\n\treturn\n}\n\n\n\n\n\n\n"
	twice := strings.Repeat(block, 2)
	f := Compare("f", text(twice), text(strings.ReplaceAll(twice, "\treturn\n", "\treturn nil\n")))
	if len(f.Hunks) != 2 || f.Hunks[0].ID == f.Hunks[1].ID {
		t.Errorf("two identical changes: %v", ids(f))
	}
	if _, _, c0, _ := parseID(f.Hunks[0].ID); c0 == 0 {
		t.Errorf("id %s names no lines", f.Hunks[0].ID)
	}
}

// TestCount checks the entries of changesUpdate.
func TestCount(t *testing.T) {
	f := Compare("/w/f", text(numbered(30, nil)), text(numbered(30, map[int]string{2: "x\ny\n", 25: ""})))
	var r Review
	r.Keep("cp", &f, []string{f.Hunks[1].ID})
	want := Count{Path: "/w/f", Change: "modified", Added: 2, Removed: 2, Pending: 1}
	if d := cmp.Diff(want, f.Count(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("count (-want +got):\n%s", d)
	}
	got, _ := json.Marshal(f.Count())
	if string(got) != `{"path":"/w/f","change":"modified","added":2,"removed":2,"pending":1}` {
		t.Errorf("count on the wire: %s", got)
	}
}

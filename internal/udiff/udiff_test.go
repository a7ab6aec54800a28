package udiff_test

// Unified diffs: hunks merged as GNU diff merges them, headers, no-newline markers, and the
// diff of random edits applied back.

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/udiff"
)

func TestUnifiedDiffHunks(t *testing.T) {
	old := numbered(1, 20)
	// Changes at lines 2 and 5 share a hunk (gap of 2 <= 6); line 18 gets its own.
	new := strings.Replace(old, "line 2\n", "line two\n", 1)
	new = strings.Replace(new, "line 5\n", "", 1)
	new = strings.Replace(new, "line 18\n", "line 18\nline 18.5\n", 1)
	got, added, removed, first := unified("f.txt", old, new, false)
	want := `--- a/f.txt
+++ b/f.txt
@@ -1,8 +1,7 @@
 line 1
-line 2
+line two
 line 3
 line 4
-line 5
 line 6
 line 7
 line 8
@@ -16,5 +15,6 @@
 line 16
 line 17
 line 18
+line 18.5
 line 19
 line 20
`
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if added != 2 || removed != 2 || first != 2 {
		t.Errorf("added %d removed %d first %d", added, removed, first)
	}
	// Two changes 7 unchanged lines apart get two hunks; 6 apart, one.
	twoApart := func(gap int) int {
		o := numbered(1, 30)
		n := strings.Replace(o, "line 5\n", "X\n", 1)
		n = strings.Replace(n, fmt.Sprintf("line %d\n", 5+gap+1), "Y\n", 1)
		d, _, _, _ := unified("f", o, n, false)
		return strings.Count(d, "@@ -")
	}
	if twoApart(6) != 1 || twoApart(7) != 2 {
		t.Errorf("hunk merging: gap 6 -> %d hunks, gap 7 -> %d", twoApart(6), twoApart(7))
	}
	if d, a, r, f := unified("f", "same\n", "same\n", false); d != "" || a != 0 || r != 0 || f != 0 {
		t.Errorf("no change: %q %d %d %d", d, a, r, f)
	}
	// Deleting everything, and a pure deletion's range with count 0 on the new side.
	if d, _, _, _ := unified("f", "a\nb\n", "", false); d != "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n" {
		t.Errorf("delete all: %q", d)
	}
}

// Every diff, applied to the old text, must give the new text, and must be minimal for a
// single-line change. Random texts over a small alphabet make many repeated lines, where a
// wrong Myers backtrack shows up.
func TestUnifiedDiffAppliesBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randText := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteString(strconv.Itoa(rng.IntN(4)))
			sb.WriteByte('\n')
		}
		s := sb.String()
		if n > 0 && rng.IntN(3) == 0 {
			s = strings.TrimSuffix(s, "\n") // no newline at end
		}
		return s
	}
	for i := 0; i < 500; i++ {
		old, new := randText(rng.IntN(30)), randText(rng.IntN(30))
		d, added, removed, _ := unified("f", old, new, false)
		got, a, r, err := applyUnified(old, d)
		if err != nil || got != new {
			t.Fatalf("case %d: applying the diff gives %q (%v), want %q\nold %q\ndiff:\n%s", i, got, err, new, old, d)
		}
		if a != added || r != removed {
			t.Fatalf("case %d: counts %d/%d, diff has %d/%d", i, added, removed, a, r)
		}
	}
	// Beyond the edit-distance bound the diff is not minimal, but still correct.
	var o, n strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&o, "old %d\n", i)
		fmt.Fprintf(&n, "new %d\n", i)
	}
	d, added, removed, _ := unified("f", o.String(), n.String(), false)
	if got, _, _, err := applyUnified(o.String(), d); err != nil || got != n.String() || added != 3000 || removed != 3000 {
		t.Errorf("large diff does not apply back (%v), +%d -%d", err, added, removed)
	}
}

// applyUnified applies a unified diff of one file to old, checking each context and removed
// line, and returns the result and the counts of added and removed lines.
func applyUnified(old, diff string) (string, int, int, error) {
	if diff == "" {
		return old, 0, 0, nil
	}
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	at, added, removed := 0, 0, 0
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@ -") {
			var start int
			fmt.Sscanf(l, "@@ -%d", &start)
			if strings.Contains(strings.Fields(l)[1], ",0") {
				start++ // a zero-length range names the line before
			}
			for at < start-1 {
				out = append(out, oldLines[at])
				at++
			}
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ', '-':
			if at >= len(oldLines) || oldLines[at] != text {
				return "", 0, 0, fmt.Errorf("line %d: %q does not match old %d", i, text, at+1)
			}
			if l[0] == ' ' {
				out = append(out, text)
			} else {
				removed++
			}
			at++
		case '+':
			out = append(out, text)
			added++
		default:
			return "", 0, 0, fmt.Errorf("bad diff line %q", l)
		}
	}
	out = append(out, oldLines[at:]...)
	return strings.Join(out, ""), added, removed, nil
}

// unified is udiff.Unified's text with its counts.
func unified(name, old, new string, created bool) (text string, added, removed, first int) {
	fd := udiff.Unified(name, old, new, created)
	return fd.Text, fd.Added, fd.Removed, fd.FirstChangedLine
}

// numbered returns the lines "line from" to "line to", each ending in "\n".
func numbered(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

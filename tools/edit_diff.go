// This file makes the unified diff of an edit from the lines around its replacements only,
// so that a one-line edit of a large file costs its neighbourhood and not the file
// (udiff.Unified diffs whole contents, for write).

package tools

import (
	"fmt"
	"strings"

	"github.com/pid-agent/pid/internal/udiff"
)

// editWindow is a stretch of whole lines of the old content, bytes from to to, holding the
// replacements spans[first:last+1] and at least udiff.Context lines on each side of them
// (fewer at the ends of the file).
type editWindow struct {
	from, to    int
	first, last int
}

// diff returns the unified diff of the plan's change for the file shown as name, as
// udiff.Unified would give it for the whole old and new contents, but made from windows:
// each replacement's lines with udiff.Context lines on each side, windows that overlap or
// touch merged (udiff.Unified joins changes up to 2*udiff.Context unchanged lines apart into
// one hunk, and so do touching windows). Where a change could be placed in more than one
// way (a line added inside a run of equal lines) the window's diff may place it
// differently from a whole-file diff; both are correct.
func (p editPlan) diff(name string) udiff.File {
	c := p.content
	lineStart := func(at int) int { return strings.LastIndexByte(c[:at], '\n') + 1 }
	lineEnd := func(at int) int {
		if i := strings.IndexByte(c[at:], '\n'); i >= 0 {
			return at + i + 1
		}
		return len(c)
	}
	var wins []editWindow
	for i, s := range p.spans {
		// The lines the replacement touches, and the line after it when the replacement
		// ends at a line start (a newText without its final newline joins that line).
		from, to := lineStart(s.start), lineEnd(min(s.end, len(c)))
		for range udiff.Context {
			if from > 0 {
				from = lineStart(from - 1)
			}
			if to < len(c) {
				to = lineEnd(to)
			}
		}
		if n := len(wins); n > 0 && from <= wins[n-1].to {
			wins[n-1].to = max(wins[n-1].to, to)
			wins[n-1].last = i
			continue
		}
		wins = append(wins, editWindow{from: from, to: to, first: i, last: i})
	}

	var fd udiff.File
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	header := sb.Len()
	lineA, counted, shift := 0, 0, 0 // lines before the window in old; bytes counted; new - old lines so far
	for _, w := range wins {
		lineA += strings.Count(c[counted:w.from], "\n")
		counted = w.from
		var nb strings.Builder
		at := w.from
		for _, s := range p.spans[w.first : w.last+1] {
			nb.WriteString(c[at:s.start])
			nb.WriteString(s.newText)
			at = s.end
		}
		nb.WriteString(c[at:w.to])
		a, b := udiff.Split(c[w.from:w.to]), udiff.Split(nb.String())
		ops := udiff.Lines(a, b)
		added, removed := udiff.WriteHunks(&sb, ops, a, b, lineA, lineA+shift, &fd.FirstChangedLine)
		fd.Added += added
		fd.Removed += removed
		shift += len(b) - len(a)
	}
	if fd.Added == 0 && fd.Removed == 0 {
		return udiff.File{}
	}
	if sb.Len() == header {
		return udiff.File{}
	}
	fd.SetText(sb.String())
	return fd
}

// This file makes the unified diff of an edit from the lines around its replacements only,
// so that a one-line edit of a large file costs its neighbourhood and not the file (diff.go
// diffs whole contents, for write).

package tools

import (
	"fmt"
	"strings"
)

// editWindow is a stretch of whole lines of the old content, bytes from to to, holding the
// replacements spans[first:last+1] and at least diffContext lines on each side of them
// (fewer at the ends of the file).
type editWindow struct {
	from, to    int
	first, last int
}

// diff returns the unified diff of the plan's change for the file shown as name, as
// unifiedDiff would give it for the whole old and new contents, but made from windows:
// each replacement's lines with diffContext lines on each side, windows that overlap or
// touch merged (unifiedDiff joins changes up to 2*diffContext unchanged lines apart into
// one hunk, and so do touching windows). Where a change could be placed in more than one
// way (a line added inside a run of equal lines) the window's diff may place it
// differently from a whole-file diff; both are correct.
func (p editPlan) diff(name string) fileDiff {
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
		for range diffContext {
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

	var fd fileDiff
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
		a, b := splitLines(c[w.from:w.to]), splitLines(nb.String())
		ops := diffLines(a, b)
		added, removed := writeHunks(&sb, ops, a, b, lineA, lineA+shift, &fd.firstChangedLine)
		fd.added += added
		fd.removed += removed
		shift += len(b) - len(a)
	}
	if fd.added == 0 && fd.removed == 0 {
		return fileDiff{}
	}
	if sb.Len() == header {
		return fileDiff{}
	}
	fd.setText(sb.String())
	return fd
}

// writeHunks writes the hunks of ops (the diff of a to b, lines of a window whose first
// lines are lines baseA+1 and baseB+1 of the old and new file) to sb, grouped as
// unifiedDiff groups them, and returns the lines added and removed. first, when 0, is set
// to the new file's line of the first change.
func writeHunks(sb *strings.Builder, ops []diffOp, a, b []string, baseA, baseB int, first *int) (added, removed int) {
	posA := make([]int, len(ops)+1)
	posB := make([]int, len(ops)+1)
	posA[0], posB[0] = baseA, baseB
	for i, op := range ops {
		posA[i+1], posB[i+1] = posA[i], posB[i]
		switch op.kind {
		case opEqual:
			posA[i+1]++
			posB[i+1]++
		case opDelete:
			posA[i+1]++
			removed++
		case opInsert:
			posB[i+1]++
			added++
		}
		if op.kind != opEqual && *first == 0 {
			*first = posB[i] + 1
		}
	}
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		last := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != opEqual {
				last = j
			} else if j-last > 2*diffContext {
				break
			}
		}
		end := min(last+diffContext+1, len(ops))
		if sb.Len() <= MaxDiffBytes {
			writeHunk(sb, ops[start:end], a, b, posA[start], posB[start], posA[end]-posA[start], posB[end]-posB[start])
		}
		i = end
	}
	return added, removed
}

// This file computes line diffs (Myers' algorithm) and writes them as unified diffs with
// three lines of context, for the details of write and edit.

package tools

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines around each change in a hunk.
const diffContext = 3

// MaxDiffBytes bounds the diff that write and edit put in their details; a longer one is
// cut after its last whole line within the bound, and DiffTruncated is set.
const MaxDiffBytes = 256 << 10

// diffMaxD bounds the edit distance Myers' algorithm explores (its memory grows with the
// square of it). Beyond it the changed middle of the file is shown as removed then added
// whole: still a correct diff, just not a minimal one.
const diffMaxD = 1000

type opKind byte

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// diffOp is one line of a diff: a line of a kept (equal), a line of a removed, or a line of
// b added.
type diffOp struct {
	kind opKind
	a, b int // index of the line in a (equal, delete) and in b (equal, insert)
}

// splitLines splits s into lines that keep their "\n"; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns the operations that turn a into b, in order.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b)-pre-suf)
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{opEqual, i, i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(am, bm)
	if !ok {
		mid = mid[:0]
		for i := range am {
			mid = append(mid, diffOp{opDelete, i, 0})
		}
		for j := range bm {
			mid = append(mid, diffOp{opInsert, len(am), j})
		}
	}
	for _, op := range mid {
		op.a += pre
		op.b += pre
		ops = append(ops, op)
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, diffOp{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers returns a shortest edit script from a to b, or false when it would take more than
// diffMaxD edits.
func myers(a, b []string) ([]diffOp, bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	total := n + m
	off := total + 1
	v := make([]int, 2*total+3)
	// trace[d] is v[-d-1 .. d+1] as it was before step d.
	var trace [][]int
	for d := 0; d <= total; d++ {
		if d > diffMaxD {
			return nil, false
		}
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks Myers' trace back from (n, m) and returns the operations in order.
func backtrack(trace [][]int, n, m int) []diffOp {
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{opEqual, x, y})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, diffOp{opInsert, x, y})
			} else {
				x--
				rev = append(rev, diffOp{opDelete, x, y})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// fileDiff is a unified diff and what it counts.
type fileDiff struct {
	text             string // "" when nothing changed; at most MaxDiffBytes
	truncated        bool   // text was cut to MaxDiffBytes
	added, removed   int
	firstChangedLine int // 1-based line of the new content where the first change is; 0 when none
}

// unifiedDiff returns the unified diff from old to new content of the file shown as name;
// created marks a new file (its old side is /dev/null).
func unifiedDiff(name, old, new string, created bool) fileDiff {
	a, b := splitLines(old), splitLines(new)
	var sb strings.Builder
	if created {
		sb.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(&sb, "--- a/%s\n", name)
	}
	fmt.Fprintf(&sb, "+++ b/%s\n", name)
	var fd fileDiff
	fd.added, fd.removed = writeHunks(&sb, diffLines(a, b), a, b, 0, 0, &fd.firstChangedLine)
	if fd.added == 0 && fd.removed == 0 {
		return fileDiff{}
	}
	fd.setText(sb.String())
	return fd
}

// setText sets fd's text to the diff written, cut at a line's end to MaxDiffBytes.
func (fd *fileDiff) setText(text string) {
	fd.text = text
	if len(text) > MaxDiffBytes {
		fd.text = text[:strings.LastIndexByte(text[:MaxDiffBytes], '\n')+1]
		fd.truncated = true
	}
}

// writeHunk writes one hunk: its @@ header and its lines.
func writeHunk(sb *strings.Builder, ops []diffOp, a, b []string, beforeA, beforeB, countA, countB int) {
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(beforeA, countA), hunkRange(beforeB, countB))
	for _, op := range ops {
		var line string
		switch op.kind {
		case opEqual:
			sb.WriteByte(' ')
			line = a[op.a]
		case opDelete:
			sb.WriteByte('-')
			line = a[op.a]
		case opInsert:
			sb.WriteByte('+')
			line = b[op.b]
		}
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats one side of a hunk header as GNU diff does: "l,n", "l" when n is 1, and
// the line before the hunk when n is 0.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}

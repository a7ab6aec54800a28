// Package udiff computes line diffs (Myers' algorithm) and writes them as unified diffs
// with three lines of context: for the details of write and edit (package tools) and the
// checkpoints' previews of a rewind. Its entry points are Unified (a whole file's diff,
// with its counts) and FileDiff (its text, for a file created or deleted too); Lines and
// WriteHunks diff windows of a file, for an edit that diffs only around its changes.
package udiff

import (
	"fmt"
	"strings"
)

// Context is the number of unchanged lines around each change in a hunk.
const Context = 3

// MaxBytes bounds a diff's text; a longer one is cut after its last whole line within the
// bound, and File.Truncated is set.
const MaxBytes = 256 << 10

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

// Op is one line of a diff: a line of a kept (equal), a line of a removed, or a line of
// b added.
type Op struct {
	kind opKind
	a, b int // index of the line in a (equal, delete) and in b (equal, insert)
}

// Split splits s into lines that keep their "\n"; the last line may lack one.
func Split(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Lines returns the operations that turn a into b, in order.
func Lines(a, b []string) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b)-pre-suf)
	for i := 0; i < pre; i++ {
		ops = append(ops, Op{opEqual, i, i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(am, bm)
	if !ok {
		mid = mid[:0]
		for i := range am {
			mid = append(mid, Op{opDelete, i, 0})
		}
		for j := range bm {
			mid = append(mid, Op{opInsert, len(am), j})
		}
	}
	for _, op := range mid {
		op.a += pre
		op.b += pre
		ops = append(ops, op)
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, Op{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers returns a shortest edit script from a to b, or false when it would take more than
// diffMaxD edits.
func myers(a, b []string) ([]Op, bool) {
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
func backtrack(trace [][]int, n, m int) []Op {
	var rev []Op
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
			rev = append(rev, Op{opEqual, x, y})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, Op{opInsert, x, y})
			} else {
				x--
				rev = append(rev, Op{opDelete, x, y})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// File is a unified diff and what it counts.
type File struct {
	Text             string // "" when nothing changed; at most MaxBytes
	Truncated        bool   // Text was cut to MaxBytes
	Added, Removed   int
	FirstChangedLine int // 1-based line of the new content where the first change is; 0 when none
}

// Unified returns the unified diff from old to new content of the file shown as name;
// created marks a new file (its old side is /dev/null).
func Unified(name, old, new string, created bool) File {
	a, b := Split(old), Split(new)
	var sb strings.Builder
	if created {
		sb.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(&sb, "--- a/%s\n", name)
	}
	fmt.Fprintf(&sb, "+++ b/%s\n", name)
	var fd File
	fd.Added, fd.Removed = WriteHunks(&sb, Lines(a, b), a, b, 0, 0, &fd.FirstChangedLine)
	if fd.Added == 0 && fd.Removed == 0 {
		return File{}
	}
	fd.SetText(sb.String())
	return fd
}

// SetText sets fd's Text to the diff written, cut at a line's end to MaxBytes.
func (fd *File) SetText(text string) {
	fd.Text = text
	if len(text) > MaxBytes {
		fd.Text = text[:strings.LastIndexByte(text[:MaxBytes], '\n')+1]
		fd.Truncated = true
	}
}

// writeHunk writes one hunk: its @@ header and its lines.
func writeHunk(sb *strings.Builder, ops []Op, a, b []string, beforeA, beforeB, countA, countB int) {
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

// WriteHunks writes the hunks of ops (the diff of a to b, lines of a window whose first
// lines are lines baseA+1 and baseB+1 of the old and new file) to sb, grouped as
// Unified groups them, and returns the lines added and removed. first, when 0, is set
// to the new file's line of the first change.
func WriteHunks(sb *strings.Builder, ops []Op, a, b []string, baseA, baseB int, first *int) (added, removed int) {
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
		start := max(i-Context, 0)
		last := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != opEqual {
				last = j
			} else if j-last > 2*Context {
				break
			}
		}
		end := min(last+Context+1, len(ops))
		if sb.Len() <= MaxBytes {
			writeHunk(sb, ops[start:end], a, b, posA[start], posB[start], posA[end]-posA[start], posB[end]-posB[start])
		}
		i = end
	}
	return added, removed
}

// FileDiff returns the unified diff from old to new of the file shown as name (three lines
// of context, at most MaxBytes, cut at a line's end), "" when they are the same. created
// marks a file that did not exist (its old side is /dev/null), deleted one that no longer
// does (its new side is /dev/null).
func FileDiff(name, old, new string, created, deleted bool) string {
	fd := Unified(name, old, new, created)
	if deleted {
		fd.SetText(strings.Replace(fd.Text, "+++ b/"+name+"\n", "+++ /dev/null\n", 1))
	}
	return fd.Text
}

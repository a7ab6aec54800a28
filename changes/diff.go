// This file computes a minimal line diff, chosen by fixed preferences so that it depends on
// the two files alone: an exact alignment (a table of longest common subsequences) when it
// is affordable, else Myers' algorithm in linear space (the middle snake, divide and
// conquer) with each hunk aligned again on its own. Lines with no equal on the other side
// are set aside first, and the work is bounded.

package changes

// maxWork bounds the steps one diff may take (a diagonal tried or a line compared by Myers,
// a cell of an alignment's table, a line looked at by a pass). Lines with no equal on the
// other side cost nothing, so a file changed in many scattered places stays far below it (a
// 50,000-line file with 500 changed lines costs about 330,000 steps, see big_test.go); what
// passes it is a file whose changed middle is made of lines repeated all over it, where a
// minimal diff costs the product of its two sides' lengths. Past the bound the changed
// middle becomes one hunk (File.Coarse). (A variable for the tests.)
var maxWork = 1 << 24

// lineDiff is a diff of two lists of lines: which lines of a were removed and which of b
// added. The lines left in each, in order, are the same.
type lineDiff struct {
	removed, added []bool
	// coarse is set when the work bound was reached: everything between the common prefix
	// and suffix is marked changed, a correct but not minimal diff.
	coarse bool
	// work is the steps taken (for the tests).
	work int
}

// diffIDs returns a minimal diff of a to b, lists of line ids (equal lines, equal ids).
//
// Several minimal diffs of two files may differ in which lines they keep, and the one an
// algorithm finds may depend on the whole of both files: undoing one hunk could then change
// another's lines, and its id. So the diff is chosen by fixed preferences wherever that is
// affordable: when the lines past the common prefix fit a table of exactCells, the whole diff
// is align's (exact, and a function of the files alone); else Myers' diff has its hunks
// aligned again one by one (canonical).
func diffIDs(a, b []int32) lineDiff {
	d := lineDiff{removed: make([]bool, len(a)), added: make([]bool, len(b))}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	ar, br := a[pre:], b[pre:]
	suf := 0
	for suf < len(ar) && suf < len(br) && ar[len(ar)-1-suf] == br[len(br)-1-suf] {
		suf++
	}
	d.work = pre + suf

	// A line of one side with no equal on the other is changed in every diff, and setting it
	// aside changes no longest common subsequence (nor what align keeps): the diff is of the
	// lines left. Replacements of one line by a new one, the usual change, then cost nothing.
	top := int32(0)
	for _, id := range ar {
		top = max(top, id+1)
	}
	for _, id := range br {
		top = max(top, id+1)
	}
	inA, inB := make([]bool, top), make([]bool, top)
	for _, id := range ar {
		inA[id] = true
	}
	for _, id := range br {
		inB[id] = true
	}
	fa, ia := keep(ar, inB, d.removed[pre:])
	fb, ib := keep(br, inA, d.added[pre:])
	ra, rb := make([]bool, len(fa)), make([]bool, len(fb))
	back := func() {
		for t, r := range ra {
			if r {
				d.removed[pre+ia[t]] = true
			}
		}
		for t, r := range rb {
			if r {
				d.added[pre+ib[t]] = true
			}
		}
	}
	if cells := (len(fa) + 1) * (len(fb) + 1); cells <= exactCells {
		table := make([]int32, cells)
		for range 4 {
			d.work += cells
			if !align(fa, fb, ra, rb, table) {
				break
			}
			settle(fa, fb, ra, rb)
		}
		back()
		return d
	}

	// The common suffix's lines are on both sides: they are the last suf of fa and fb.
	m := myers{a: fa[:len(fa)-suf], b: fb[:len(fb)-suf], ra: ra, rb: rb, work: d.work}
	ok := m.compare(0, len(m.a), 0, len(m.b))
	d.work = m.work
	if !ok {
		d.coarse = true
		for i := pre; i < len(a)-suf; i++ {
			d.removed[i] = true
		}
		for j := pre; j < len(b)-suf; j++ {
			d.added[j] = true
		}
		return d
	}
	back()
	d.work = canonical(a, b, d.removed, d.added, d.work)
	return d
}

// exactCells bounds the table of the whole diff's exact alignment (align): 2^20 cells, 4 MiB,
// two files of about 1,000 lines once the lines with no equal on the other side are set
// aside. hunkCells bounds one hunk's, when the whole is larger. (Variables for the tests.)
var exactCells, hunkCells = 1 << 20, 1 << 20

// canonical makes a diff Myers found, marked in removed and added, as much a function of the
// two files alone as it affordably can, and returns the work done so far (work, the
// diff's, plus its own; a hunk whose alignment would pass maxWork is left as it is): the
// changes are placed at their canonical lines (settle), and each hunk's lines, with a few
// more around them, aligned again on their own (align), until that changes nothing.
func canonical(a, b []int32, removed, added []bool, work int) int {
	var table []int32
	for range 4 {
		work += len(a) + len(b)
		settle(a, b, removed, added)
		ranges, _ := hunkRanges(changedBlocks(removed, added), len(a))
		ranges = widen(ranges, len(a), len(b), windowExtra)
		moved := false
		for _, r := range ranges {
			cells := (r.a1 - r.a0 + 1) * (r.b1 - r.b0 + 1)
			if cells > hunkCells || work+cells > maxWork {
				continue
			}
			work += cells
			if cap(table) < cells {
				table = make([]int32, cells)
			}
			if align(a[r.a0:r.a1], b[r.b0:r.b1], removed[r.a0:r.a1], added[r.b0:r.b1], table[:cells]) {
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return work
}

// windowExtra is how many lines more than its context each hunk is aligned again with: a
// few lines of slack, so that a hunk that a slightly different diff would have cut a little
// longer is aligned the same way.
const windowExtra = 8

// widen returns the hunks' lines with extra lines more on each side (fewer at the files'
// ends), those that then overlap joined.
func widen(ranges []span, n, m, extra int) []span {
	var out []span
	for _, r := range ranges {
		e0 := min(extra, r.a0, r.b0)
		e1 := min(extra, n-r.a1, m-r.b1)
		w := span{r.a0 - e0, r.a1 + e1, r.b0 - e0, r.b1 + e1}
		if k := len(out); k > 0 && w.a0 <= out[k-1].a1 {
			out[k-1].a1, out[k-1].b1 = w.a1, w.b1
			continue
		}
		out = append(out, w)
	}
	return out
}

// align marks a minimal diff of a to b in removed and added, chosen by fixed preferences,
// and reports whether that changed the marks: walking both from their start, equal lines
// are kept, else a's line is removed when that costs nothing more, else b's added. table
// holds (len(a)+1)*(len(b)+1) cells: the longest common subsequence of each pair of
// suffixes.
func align(a, b []int32, removed, added []bool, table []int32) bool {
	w := len(b) + 1
	at := func(i, j int) *int32 { return &table[i*w+j] }
	for i := len(a); i >= 0; i-- {
		for j := len(b); j >= 0; j-- {
			switch {
			case i == len(a) || j == len(b):
				*at(i, j) = 0
			case a[i] == b[j]:
				*at(i, j) = *at(i+1, j+1) + 1
			default:
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	moved := false
	mark := func(marks []bool, k int, v bool) {
		if marks[k] != v {
			marks[k], moved = v, true
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			mark(removed, i, false)
			mark(added, j, false)
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || *at(i+1, j) == *at(i, j)):
			mark(removed, i, true)
			i++
		default:
			mark(added, j, true)
			j++
		}
	}
	return moved
}

// keep returns the ids of s whose line is on the other side (other), with their indexes in
// s, and marks the others changed.
func keep(s []int32, other, changed []bool) (ids []int32, at []int) {
	ids = make([]int32, 0, len(s))
	at = make([]int, 0, len(s))
	for i, id := range s {
		if other[id] {
			ids = append(ids, id)
			at = append(at, i)
		} else {
			changed[i] = true
		}
	}
	return ids, at
}

// myers is one run of the linear-space algorithm over a and b.
type myers struct {
	a, b   []int32
	ra, rb []bool // removed lines of a, added lines of b
	v      []int  // scratch for the two frontiers, reused by every bisection
	work   int
}

// compare marks the changed lines of a[aLo:aHi] against b[bLo:bHi]. It returns false when
// the work bound was passed.
func (m *myers) compare(aLo, aHi, bLo, bHi int) bool {
	for aLo < aHi && bLo < bHi && m.a[aLo] == m.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
		m.work++
	}
	for aLo < aHi && bLo < bHi && m.a[aHi-1] == m.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
		m.work++
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			m.rb[j] = true
		}
		return true
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			m.ra[i] = true
		}
		return true
	}
	x, y, found, ok := m.bisect(aLo, aHi, bLo, bHi)
	switch {
	case !ok || found && (x == aLo && y == bLo || x == aHi && y == bHi):
		// Past the bound; or a split that does not cut (never seen: no endless recursion).
		return false
	case !found:
		// No line in common: all of both is changed.
		for i := aLo; i < aHi; i++ {
			m.ra[i] = true
		}
		for j := bLo; j < bHi; j++ {
			m.rb[j] = true
		}
		return true
	}
	return m.compare(aLo, x, bLo, y) && m.compare(x, aHi, y, bHi)
}

// bisect returns a point (x, y) on a shortest edit path from (aLo, bLo) to (aHi, bHi),
// strictly between them: Myers' middle snake, searched from both ends at once (the
// formulation of Myers' 1986 paper, section 4b). Both ranges are non-empty and their first
// lines, and their last lines, differ. found is false when the ranges have no line in
// common (the searches meet only past d = maxD-1); ok is false when the work bound was
// passed.
func (m *myers) bisect(aLo, aHi, bLo, bHi int) (x, y int, found, ok bool) {
	a, b := m.a[aLo:aHi], m.b[bLo:bHi]
	n, mm := len(a), len(b)
	maxD := (n + mm + 1) / 2
	off := maxD + 1
	size := 2*maxD + 3
	if cap(m.v) < 2*size {
		m.v = make([]int, 2*size)
	}
	vf, vb := m.v[:size], m.v[size:2*size]
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	vf[off+1], vb[off+1] = 0, 0
	delta := n - mm
	odd := delta%2 != 0
	// Diagonals that ran off the grid are not tried again.
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for d := 0; d < maxD; d++ {
		// Forward: vf[off+k] is the furthest x reached on diagonal k = x - y.
		for k := -d + k1start; k <= d-k1end; k += 2 {
			m.work++
			i := off + k
			var x1 int
			if k == -d || (k != d && vf[i-1] < vf[i+1]) {
				x1 = vf[i+1]
			} else {
				x1 = vf[i-1] + 1
			}
			y1 := x1 - k
			for x1 < n && y1 < mm && a[x1] == b[y1] {
				x1, y1 = x1+1, y1+1
				m.work++
			}
			vf[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > mm:
				k1start += 2
			case odd:
				j := off + delta - k
				if j >= 0 && j < size && vb[j] != -1 && x1 >= n-vb[j] {
					return aLo + x1, bLo + y1, true, true
				}
			}
		}
		// Backward, on the reversed lines: vb[off+k] is the furthest x from the end.
		for k := -d + k2start; k <= d-k2end; k += 2 {
			m.work++
			i := off + k
			var x2 int
			if k == -d || (k != d && vb[i-1] < vb[i+1]) {
				x2 = vb[i+1]
			} else {
				x2 = vb[i-1] + 1
			}
			y2 := x2 - k
			for x2 < n && y2 < mm && a[n-x2-1] == b[mm-y2-1] {
				x2, y2 = x2+1, y2+1
				m.work++
			}
			vb[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > mm:
				k2start += 2
			case !odd:
				j := off + delta - k
				if j >= 0 && j < size && vf[j] != -1 {
					x1 := vf[j]
					y1 := x1 - (j - off)
					if x1 >= n-x2 {
						return aLo + x1, bLo + y1, true, true
					}
				}
			}
		}
		if m.work > maxWork {
			return 0, 0, false, false
		}
	}
	// A shortest path of D edits has its middle snake at d = ceil(D/2) (Myers' lemma 3):
	// not met below maxD, D is n+m, no line in common.
	return 0, 0, false, true
}

// settle places the lines a diff leaves unchanged at their earliest places: the unchanged
// lines spell the same sequence on both sides (their longest common subsequence), and each
// side's changed are marked anew around that sequence's first embedding in it (matched
// greedily from the start). A change among repeated lines (one of three blank lines
// removed, a brace added before another) can be placed at several lines with the same
// cost; this places it at the last of them, as a unified diff usually does, and makes the
// hunks a function of the two files and that sequence, not of where the diff happened to
// start from. Without it, undoing one hunk could move another (the common prefix grows
// past it, and the diff places it otherwise), and give it a new id.
func settle(a, b []int32, removed, added []bool) {
	common := make([]int32, 0, len(a))
	for i, id := range a {
		if !removed[i] {
			common = append(common, id)
		}
	}
	embed := func(lines []int32, changed []bool) {
		k := 0
		for i, id := range lines {
			changed[i] = k == len(common) || id != common[k]
			if !changed[i] {
				k++
			}
		}
	}
	embed(a, removed)
	embed(b, added)
}

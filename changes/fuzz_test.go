// This file holds the fuzz target: random before/after/person-edit triples, built from the
// fuzzer's bytes, checked against what the package promises.

package changes

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/udiff"
)

// stream hands out the fuzzer's bytes as small choices (0 once they run out).
type stream struct{ data []byte }

func (s *stream) next(n int) int {
	if n <= 0 {
		return 0
	}
	if len(s.data) == 0 {
		return 0
	}
	v := int(s.data[0])
	s.data = s.data[1:]
	return v % n
}

// alphabet is the lines the files are made of: few, so that lines repeat and diffs are
// ambiguous; CRLF and a line without its newline among them.
var alphabet = []string{"a\n", "b\n", "c\n", "a\r\n", "}\n", "\n", "x y\n", "b"}

// triple builds, from the fuzzer's bytes, a file before a prompt, the file after it, and
// that file after a person's edit (a line changed, added or removed). before or after is
// nil (no file) when the bytes say so.
func triple(data []byte) (before, after, edited []byte) {
	s := &stream{data: data}
	k := 2 + s.next(len(alphabet)-1) // how many distinct lines
	line := func() string {
		l := alphabet[s.next(k)]
		if l == "b" {
			l = "b\n" // a line without "\n" only at the end
		}
		return l
	}
	var lines []string
	for range s.next(40) {
		lines = append(lines, line())
	}
	end := func(ls []string) []byte {
		var b bytes.Buffer
		for _, l := range ls {
			b.WriteString(l)
		}
		if len(ls) > 0 && s.next(4) == 0 {
			b.Truncate(b.Len() - 1) // no final newline
		}
		return b.Bytes()
	}
	now := slices.Clone(lines)
	for range s.next(8) {
		at := s.next(len(now) + 1)
		switch s.next(3) {
		case 0:
			now = slices.Insert(now, at, line())
		case 1:
			if at < len(now) {
				now = slices.Delete(now, at, at+1)
			}
		default:
			if at < len(now) {
				now[at] = line()
			}
		}
	}
	before, after = end(lines), end(now)
	switch s.next(10) {
	case 0:
		before = nil
	case 1:
		after = nil
	}
	if after != nil {
		ed := udiff.Split(string(after))
		at := s.next(len(ed) + 1)
		if at < len(ed) && s.next(2) == 0 {
			ed[at] = "person " + ed[at]
		} else {
			ed = slices.Insert(ed, at, "person\n")
		}
		edited = []byte(strings.Join(ed, ""))
	}
	return before, after, edited
}

// lcs returns the length of the longest common subsequence of a and b (dynamic programming).
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ids returns the ids of f's hunks.
func ids(f File) []string {
	out := []string{}
	for _, h := range f.Hunks {
		out = append(out, h.ID)
	}
	return out
}

// apply returns what the file is after res, from now.
func apply(now []byte, res UndoResult) []byte {
	switch {
	case res.Remove:
		return nil
	case res.Write:
		return res.Data
	}
	return now
}

// checkTriple checks the package's promises on one triple; pick chooses the subset undone.
// exact says the diff is align's (files of fewer lines than exactCells allows): then a list
// after an undo shows exactly the other hunks, with their ids; past it (Myers' diff) the
// hunks it shows change exactly as many lines as the other hunks did (the same cost), but may
// be cut otherwise in files of few distinct lines.
func checkTriple(t *testing.T, before, after, edited []byte, pick uint64, exact bool) {
	t.Helper()
	bs, as := Side{Data: before}, Side{Data: after}
	c := compare(bs, as)
	f := c.file
	again := Compare("f", bs, as)
	if !slices.Equal(ids(f), ids(again)) {
		t.Fatalf("ids change between two lists: %v then %v", ids(f), ids(again))
	}
	if u := ids(f); len(slices.Compact(slices.Sorted(slices.Values(u)))) != len(u) {
		t.Fatalf("two hunks share an id: %v", u)
	}
	if (len(f.Hunks) == 0) != (bytes.Equal(before, after) && (before == nil) == (after == nil)) {
		t.Fatalf("%d hunks for before %q, after %q", len(f.Hunks), before, after)
	}
	if f.Coarse {
		t.Fatalf("the diff of %d and %d bytes passed its work bound", len(before), len(after))
	}
	if !f.Binary {
		a, b := udiff.Split(string(before)), udiff.Split(string(after))
		if want := len(a) + len(b) - 2*lcs(a, b); f.Added+f.Removed != want {
			t.Fatalf("the diff changes %d lines, a minimal one %d (before %q, after %q)", f.Added+f.Removed, want, before, after)
		}
	}

	// Undo of every hunk gives back before.
	all := Undo("f", bs, as, nil, false)
	if len(all.Skipped) > 0 || len(all.Undone) != len(f.Hunks) {
		t.Fatalf("undo of all: undone %v, skipped %v, of %v", all.Undone, all.Skipped, ids(f))
	}
	if got := apply(after, all); !bytes.Equal(got, before) || (got == nil) != (before == nil) {
		t.Fatalf("undo of all gives %q, want %q (after %q)", got, before, after)
	}

	// Undo of a subset, then a list: exactly the other hunks, with their ids.
	var sub, rest []string
	for i, id := range ids(f) {
		if pick>>(i%64)&1 == 1 {
			sub = append(sub, id)
		} else {
			rest = append(rest, id)
		}
	}
	if len(sub) > 0 {
		res := Undo("f", bs, as, sub, false)
		if !slices.Equal(res.Undone, sub) || len(res.Skipped) > 0 {
			t.Fatalf("undo of %v: undone %v, skipped %v", sub, res.Undone, res.Skipped)
		}
		got := apply(after, res)
		left := Compare("f", bs, Side{Data: got})
		if exact && !slices.Equal(ids(left), orEmpty(rest)) {
			t.Fatalf("after undoing %v of %v the list is %v, want %v\nbefore %q\nafter  %q\nnow    %q", sub, ids(f), ids(left), rest, before, after, got)
		}
		restLines := 0
		for i, h := range f.Hunks {
			if slices.Contains(rest, h.ID) {
				u := c.hunkLines(i)
				restLines += u
			}
		}
		if left.Added+left.Removed != restLines {
			t.Fatalf("after undoing %v of %v the list changes %d lines, the other hunks %d", sub, ids(f), left.Added+left.Removed, restLines)
		}
	}

	// A person's edit inside a hunk: skipped unless force; force puts its lines back.
	if edited == nil || f.Binary || len(f.Hunks) == 0 {
		return
	}
	es := Side{Data: edited}
	ef := Compare("f", bs, es)
	for _, h := range f.Hunks {
		if slices.Contains(ids(ef), h.ID) {
			continue // the edit left this hunk as it was
		}
		res := Undo("f", bs, es, []string{h.ID}, false)
		if len(res.Undone) != 0 || len(res.Skipped) != 1 || res.Write || res.Remove {
			t.Fatalf("undo of %s after the person's edit: undone %v, skipped %v", h.ID, res.Undone, res.Skipped)
		}
		if r := res.Skipped[0].Reason; r != ReasonChanged && r != ReasonUnchanged {
			t.Fatalf("undo of %s after the person's edit: skipped because %q", h.ID, r)
		}
		forced := Undo("f", bs, es, []string{h.ID}, true)
		if res.Skipped[0].Reason == ReasonUnchanged {
			if len(forced.Undone) != 0 {
				t.Fatalf("forced undo of %s, no longer a change, undid %v", h.ID, forced.Undone)
			}
			continue
		}
		if !slices.Equal(forced.Undone, []string{h.ID}) {
			t.Fatalf("forced undo of %s: undone %v, skipped %v", h.ID, forced.Undone, forced.Skipped)
		}
		// Its lines before stand now where the edited file had what replaced them: the
		// file is a start of the edited file, those lines, and an end of the edited file.
		got := apply(edited, forced)
		if got == nil {
			if before != nil {
				t.Fatalf("forced undo of %s removed the file", h.ID)
			}
			continue
		}
		_, from, count, _ := parseID(h.ID)
		if !putBack(udiff.Split(string(got)), udiff.Split(string(edited)), udiff.Split(string(before))[from:from+count]) {
			t.Fatalf("forced undo of %s gives %q: not the edited file with lines %d-%d of before in place (before %q, edited %q)", h.ID, got, from+1, from+count, before, edited)
		}
	}
}

// putBack reports whether got is a start of edited, then lines, then an end of edited (the
// start and end not overlapping).
func putBack(got, edited, lines []string) bool {
	for p := 0; p <= len(got)-len(lines) && p <= len(edited); p++ {
		if !slices.Equal(got[:p], edited[:p]) {
			return false
		}
		q := len(got) - p - len(lines)
		if q <= len(edited)-p && slices.Equal(got[p:p+len(lines)], lines) && slices.Equal(got[p+len(lines):], edited[len(edited)-q:]) {
			return true
		}
	}
	return false
}

func FuzzUndo(f *testing.F) {
	f.Add([]byte{}, uint64(0))
	f.Add([]byte("\x05\x20abcdefghijklmnopqrstuvwxyz0123456789\x06\x01\x02\x03\x04\x05\x06\x07\x08\x09"), uint64(0b101))
	f.Add([]byte("\x02\x30\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x07\x03\x00\x02\x05\x01\x09\x00\x11\x02\x20\x01"), uint64(1))
	f.Add([]byte("\x07\x28zyxwvutsrqponmlkjihgfedcba9876543210!!\x07\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"), ^uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, pick uint64) {
		before, after, edited := triple(data)
		checkTriple(t, before, after, edited, pick, true)
	})
}

// TestTriplesExhaustive runs checkTriple on many small generated triples, so that plain go
// test covers what the fuzzer would find first.
func TestTriplesExhaustive(t *testing.T) {
	for i := range 3000 {
		data := make([]byte, 64)
		x := uint64(i)*0x9e3779b97f4a7c15 + 1
		for j := range data {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			data[j] = byte(x)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			before, after, edited := triple(data)
			checkTriple(t, before, after, edited, x, exactCells > 0)
		})
	}
}

func TestTriplesMyers(t *testing.T) {
	defer func(e int) { exactCells = e }(exactCells)
	exactCells = 0
	TestTriplesExhaustive(t)
}

// FuzzUndoMyers is FuzzUndo with the diff of files too large for an exact alignment: Myers'
// diff, its hunks aligned again one by one.
func FuzzUndoMyers(f *testing.F) {
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, pick uint64) {
		defer func(e int) { exactCells = e }(exactCells)
		exactCells = 0
		before, after, edited := triple(data)
		checkTriple(t, before, after, edited, pick, false)
	})
}

// TestCodeLike undoes each hunk of files like code (a fifth of the lines blank, a tenth a
// closing brace, some "return nil", the rest from a vocabulary of names) changed in a few
// places, alone, in both regimes of the diff, and checks that the list after it shows
// exactly the other hunks with their ids. Myers' diff alone (no exact alignment, no hunk
// aligned again) moved another hunk in 7% (300 names) to 45% (3 names) of these undos.
func TestCodeLike(t *testing.T) {
	for _, exact := range []bool{true, false} {
		for _, vocab := range []int{3, 300} {
			t.Run(fmt.Sprintf("exact=%v,vocab=%d", exact, vocab), func(t *testing.T) {
				if !exact {
					defer func(e int) { exactCells = e }(exactCells)
					exactCells = 0
				}
				r := rand.New(rand.NewPCG(1, uint64(vocab)))
				line := func() string {
					switch x := r.IntN(100); {
					case x < 20:
						return "\n"
					case x < 30:
						return "}\n"
					case x < 35:
						return "\treturn nil\n"
					default:
						return fmt.Sprintf("\tname%d()\n", r.IntN(vocab))
					}
				}
				undos := 0
				for range 60 {
					var ls []string
					for range 40 + r.IntN(120) {
						ls = append(ls, line())
					}
					now := slices.Clone(ls)
					for range 1 + r.IntN(10) {
						at := r.IntN(len(now) + 1)
						switch r.IntN(3) {
						case 0:
							now = slices.Insert(now, at, line())
						case 1:
							if at < len(now) {
								now = slices.Delete(now, at, at+1)
							}
						default:
							if at < len(now) {
								now[at] = line()
							}
						}
					}
					b, a := text(strings.Join(ls, "")), text(strings.Join(now, ""))
					f := Compare("f", b, a)
					for i, h := range f.Hunks {
						undos++
						res := Undo("f", b, a, []string{h.ID}, false)
						left := Compare("f", b, Side{Data: res.Data})
						if want := slices.Delete(ids(f), i, i+1); !slices.Equal(ids(left), want) {
							t.Fatalf("undo of %s of %v: the list is %v\nbefore %q\nafter  %q", h.ID, ids(f), ids(left), b.Data, a.Data)
						}
					}
				}
				t.Logf("%d undos", undos)
			})
		}
	}
}

// hunkLines returns the lines text hunk i removes and adds (0 for any other hunk).
func (c *comparison) hunkLines(i int) int {
	if c.whole || i >= len(c.first) || len(c.blocks) == 0 {
		return 0
	}
	end := len(c.blocks)
	if i+1 < len(c.first) {
		end = c.first[i+1]
	}
	n := 0
	for _, bl := range c.blocks[c.first[i]:end] {
		n += bl.a1 - bl.a0 + bl.b1 - bl.b0
	}
	return n
}

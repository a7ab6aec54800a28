// Package changes cuts what a prompt changed in a file into hunks a person reviews one by one,
// and takes chosen hunks back: the core of changes/list, changes/undo and changes/keep
// (docs/protocol.md). It is pure: it reads and writes no file, and knows no checkpoint nor
// session; the caller gives each file's bytes before the prompt and now, and writes what an
// undo returns. The entry points are Compare (a file's hunks), Undo (taking hunks back),
// Review (what the person kept), By (which tools changed a file) and Note (what the model
// is told of undone hunks).
//
// This file holds Compare and the shapes it returns: a file's change and its hunks.
package changes

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"unicode/utf8"
	"unsafe"

	"github.com/pid-agent/pid/internal/udiff"
)

// MaxTextBytes bounds the text files compared line by line: a larger file (either side) is
// compared as a whole, one hunk, as a binary file is, so that a generated file of a million
// lines does not cost pid a few hundred MiB (a comparison takes about five times the bytes
// of the two files).
const MaxTextBytes = 8 << 20

// Context is the number of unchanged lines around each change in a hunk; changes closer than
// twice that share a hunk (as in a unified diff).
const Context = 3

// Side is a file at one moment.
type Side struct {
	// Data is its content; nil when there is no file (an empty file is a non-nil empty
	// slice).
	Data []byte
	// Mode is its permission bits; 0 when unknown (then no mode change is reported, and a
	// deleted file an undo brings back is given 0644).
	Mode fs.FileMode
}

// Hunk states.
const (
	Pending = "pending"
	Kept    = "kept"
)

// Hunk is one hunk of a file's change, as changes/list gives it. OldStart and NewStart
// follow the unified diff's convention: the 1-based line where the hunk starts, or, for a
// side of no lines, the line before it (0 at the start of the file); Header is the hunk's
// "@@ -OLD +NEW @@" line. The hunk of a binary file (or one over MaxTextBytes), of a mode
// change, or of a file added or deleted empty has no lines: its starts and counts are 0 and
// Header says what it is.
type Hunk struct {
	ID       string `json:"id"`
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	Header   string `json:"header"`
	State    string `json:"state"`
}

// File is one file's change, as changes/list gives it. Compare fills everything but By and
// the hunks' kept state (Review.Mark sets those and Reviewed).
type File struct {
	Path     string   `json:"path"`
	Change   string   `json:"change"` // "added", "modified" or "deleted"
	Binary   bool     `json:"binary,omitempty"`
	Reviewed bool     `json:"reviewed"`
	Hunks    []Hunk   `json:"hunks"`
	By       []string `json:"by"`

	// Added and Removed count the lines the hunks add and remove (changesUpdate's counts).
	Added   int `json:"-"`
	Removed int `json:"-"`
	// Coarse says the change is one hunk where a finer diff would cost too much: the diff
	// passed its work bound (a file whose changed middle is made of lines repeated all over
	// it), or the file is over MaxTextBytes. The hunk's header says so.
	Coarse bool `json:"-"`
}

// Changed reports whether the file differs from before at all.
func (f *File) Changed() bool { return len(f.Hunks) > 0 }

// Count is one file of a changesUpdate notification.
type Count struct {
	Path    string `json:"path"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Pending int    `json:"pending"`
}

// Count returns the file's entry in changesUpdate.
func (f *File) Count() Count {
	c := Count{Path: f.Path, Change: f.Change, Added: f.Added, Removed: f.Removed}
	for _, h := range f.Hunks {
		if h.State != Kept {
			c.Pending++
		}
	}
	return c
}

// Compare returns the change of the file at path from before to now, cut into hunks with
// Context lines of context, every hunk pending. A file that is as it was has no hunks.
//
// A hunk's id is made from its content: its place in the before file, its lines before
// and its lines now. So it stays the same while those do (a list, a keep and another list
// give the same ids; undoing or editing another hunk does not change it), and two identical
// changes at two places get two ids. Text is what is valid UTF-8 without a NUL byte (the
// rule of checkpoints/diff); anything else is binary, one hunk for the whole file. Neither
// before's nor now's bytes may change during the call.
func Compare(path string, before, now Side) File {
	c := compare(before, now)
	c.file.Path = path
	return c.file
}

// A comparison is a file's change with what Undo needs to take hunks back.
type comparison struct {
	file File
	// whole says the file is compared as a whole, not by lines (binary, or too large): its
	// one hunk undoes the whole file.
	whole  bool
	a, b   []string // lines (each with its "\n", the last maybe without)
	ranges []span   // each text hunk's lines, in a and b, context included
	// blocks are the changed runs of lines, in order, and each hunk's first block.
	blocks []span
	first  []int
	// removed and added mark the changed lines of a and b.
	removed, added []bool
	// lo and hi are bounds', once made.
	lo, hi []int
}

// span is a run of lines of a, [a0, a1), and of b, [b0, b1).
type span struct{ a0, a1, b0, b1 int }

// IsText reports whether data is text as Compare tells it: valid UTF-8 without NUL.
func IsText(data []byte) bool { return isText(data) }

// isText reports whether data is text: valid UTF-8 without NUL.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// compare compares before and now.
func compare(before, now Side) *comparison {
	c := &comparison{}
	f := &c.file
	f.Hunks = []Hunk{}
	f.By = []string{}
	switch {
	case before.Data == nil && now.Data == nil:
		return c
	case before.Data == nil:
		f.Change = "added"
	case now.Data == nil:
		f.Change = "deleted"
	default:
		f.Change = "modified"
	}
	switch {
	case !isText(before.Data) || !isText(now.Data):
		c.whole, f.Binary = true, true
		if !bytes.Equal(before.Data, now.Data) || f.Change != "modified" {
			f.Hunks = append(f.Hunks, Hunk{ID: wholeID(before.Data, now.Data, f.Change), Header: "Binary files differ"})
		}
	case len(before.Data) > MaxTextBytes || len(now.Data) > MaxTextBytes:
		c.whole, f.Coarse = true, true
		if !bytes.Equal(before.Data, now.Data) || f.Change != "modified" {
			f.Hunks = append(f.Hunks, Hunk{ID: wholeID(before.Data, now.Data, f.Change),
				Header: fmt.Sprintf("the file is over %d MiB: its change is one hunk, the whole file", MaxTextBytes>>20)})
		}
	default:
		c.lines(before.Data, now.Data)
	}
	if h, ok := modeHunk(before, now); ok {
		f.Hunks = append(f.Hunks, h)
	}
	for i := range f.Hunks {
		f.Hunks[i].State = Pending
	}
	return c
}

// lines diffs before and now as text and cuts the diff into hunks.
func (c *comparison) lines(before, now []byte) {
	f := &c.file
	// The lines are read in place (no copy of the contents): they live while the comparison
	// does, within one call of Compare or Undo, whose callers do not change the bytes meanwhile.
	c.a = udiff.Split(unsafe.String(unsafe.SliceData(before), len(before)))
	c.b = udiff.Split(unsafe.String(unsafe.SliceData(now), len(now)))
	ids := make(map[string]int32, len(c.a)+len(c.b))
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := diffIDs(intern(c.a), intern(c.b))
	c.removed, c.added = d.removed, d.added
	f.Coarse = d.coarse
	c.blocks = changedBlocks(d.removed, d.added)
	for _, bl := range c.blocks {
		f.Removed += bl.a1 - bl.a0
		f.Added += bl.b1 - bl.b0
	}
	c.ranges, c.first = hunkRanges(c.blocks, len(c.a))
	for _, r := range c.ranges {
		h := Hunk{
			ID:       textID(r.a0, c.a[r.a0:r.a1], c.b[r.b0:r.b1]),
			OldStart: start(r.a0, r.a1), OldLines: r.a1 - r.a0,
			NewStart: start(r.b0, r.b1), NewLines: r.b1 - r.b0,
		}
		h.Header = fmt.Sprintf("@@ -%s +%s @@", hunkRange(r.a0, r.a1), hunkRange(r.b0, r.b1))
		if f.Coarse {
			h.Header += " the file's changes are shown as one hunk: a finer diff would cost too much"
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 && f.Change != "modified" {
		// A file added or deleted empty: its one change is that it is there, or not.
		c.ranges = append(c.ranges, span{})
		c.first = append(c.first, 0)
		f.Hunks = append(f.Hunks, Hunk{ID: textID(0, nil, nil), Header: "@@ -0,0 +0,0 @@ an empty file"})
	}
}

// hunkRanges groups blocks, changes of a file of n lines before, into hunks: blocks at most
// 2*Context unchanged lines apart share one. It returns each hunk's lines, Context lines of
// context included (fewer at the file's ends), and the index of its first block.
func hunkRanges(blocks []span, n int) (ranges []span, first []int) {
	for i := 0; i < len(blocks); {
		j := i + 1
		for j < len(blocks) && blocks[j].a0-blocks[j-1].a1 <= 2*Context {
			j++
		}
		f, l := blocks[i], blocks[j-1]
		// Blocks more than 2*Context lines apart leave Context lines to each hunk.
		before := min(Context, f.a0)
		after := min(Context, n-l.a1)
		ranges = append(ranges, span{f.a0 - before, l.a1 + after, f.b0 - before, l.b1 + after})
		first = append(first, i)
		i = j
	}
	return ranges, first
}

// changedBlocks returns the runs of changed lines: a run of removed lines of a and the run
// of added lines of b at the same place, either maybe empty.
func changedBlocks(removed, added []bool) []span {
	var out []span
	i, j := 0, 0
	for i < len(removed) || j < len(added) {
		if i < len(removed) && j < len(added) && !removed[i] && !added[j] {
			i, j = i+1, j+1
			continue
		}
		a0, b0 := i, j
		for i < len(removed) && removed[i] {
			i++
		}
		for j < len(added) && added[j] {
			j++
		}
		if i == a0 && j == b0 {
			// The lines left on one side ran out before the other's: the diff is not a
			// diff. Never reached (the fuzz target checks); the rest is one change.
			i, j = len(removed), len(added)
		}
		out = append(out, span{a0, i, b0, j})
	}
	return out
}

// start returns a hunk side's start as a unified diff writes it, for the lines [from, to).
func start(from, to int) int {
	if to == from {
		return from
	}
	return from + 1
}

// hunkRange formats one side of a hunk header: "L,N", "L" when N is 1 (as GNU diff does).
func hunkRange(from, to int) string {
	if to-from == 1 {
		return fmt.Sprint(from + 1)
	}
	return fmt.Sprintf("%d,%d", start(from, to), to-from)
}

// textID returns the id of a text hunk at line from (0-based) of the before file, whose lines
// were old and are now new: "FROM+COUNT.HASH", the place and length of its lines before
// (which Undo reads back with force) and 12 hex digits of the sha256 of all three.
func textID(from int, old, new []string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	put := func(v int) { h.Write(n[:binary.PutUvarint(n[:], uint64(v))]) }
	put(from)
	for _, side := range [][]string{old, new} {
		put(len(side))
		for _, l := range side {
			put(len(l))
			h.Write([]byte(l))
		}
	}
	return fmt.Sprintf("%d+%d.%s", from, len(old), hex.EncodeToString(h.Sum(nil))[:12])
}

// wholeID returns the id of the hunk of a file compared as a whole: "bin." and 12 hex digits
// of the sha256 of the content before, the content now and the change.
func wholeID(old, new []byte, change string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write([]byte(change))
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(old)))])
	h.Write(old)
	h.Write(new)
	return "bin." + hex.EncodeToString(h.Sum(nil))[:12]
}

// modeHunk returns the hunk of a change of the file's permission bits, when both sides are
// files whose bits are known and differ. Its id names both ("mode.644.755").
func modeHunk(before, now Side) (Hunk, bool) {
	if before.Data == nil || now.Data == nil || before.Mode == 0 || now.Mode == 0 || before.Mode.Perm() == now.Mode.Perm() {
		return Hunk{}, false
	}
	o, n := before.Mode.Perm(), now.Mode.Perm()
	return Hunk{ID: fmt.Sprintf("mode.%o.%o", o, n), Header: fmt.Sprintf("old mode %04o, new mode %04o", o, n)}, true
}

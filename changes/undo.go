// This file holds Undo: chosen hunks of a file put back to their state before the prompt,
// the rest of the file left as it is, computed without touching the file.

package changes

import (
	"bytes"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Skip is a hunk an undo left as it is, and why.
type Skip struct {
	HunkID string `json:"hunkId"`
	Reason string `json:"reason"`
}

// Why a hunk is skipped.
const (
	ReasonUnknown   = "it is not one of this file's changes"
	ReasonChanged   = "its lines changed since the changes were listed (pass force to undo it anyway)"
	ReasonUnchanged = "it is no longer a change: those lines are as they were before the prompt"
	ReasonGone      = "the file was deleted since the changes were listed"
)

// UndoResult is what an undo does to the file. At most one of Write and Remove is set;
// neither when nothing is undone.
type UndoResult struct {
	// Undone are the hunks taken back, in the order asked; Skipped those left, with why.
	Undone  []string
	Skipped []Skip
	// Write says to give the file the content Data; Create that the file does not exist
	// now (it was deleted) and is made again.
	Write  bool
	Create bool
	Data   []byte
	// Remove says to remove the file: it was added, and all of it is undone.
	Remove bool
	// Mode is the permission bits to give the file (a file made again, a mode change
	// undone); 0 leaves them as they are.
	Mode fs.FileMode
	// Lines are the changes undone, for the model's Note at the next prompt.
	Lines []Undone
}

// Undo takes the hunks ids (every hunk of the file when there are none) of the file at path
// back to their state before, leaving the other hunks and any other change of the file as
// they are; now is the file as it is. The ids come from an earlier Compare: one whose hunk
// is no longer a hunk of the file (a person edited inside it, or next to it so that it
// grew) is skipped with ReasonChanged unless force, which puts back the lines its id names
// (the hunk's place in the before file) whatever they are now; not when the file is gone
// since the list (ReasonGone). An added file whose every
// hunk is undone is removed; a deleted file comes back whole, with before's Mode (0644 when
// 0). It writes nothing: the caller does what the result says (Data may be before.Data
// itself). Neither before's nor now's bytes may change during the call.
func Undo(path string, before, now Side, ids []string, force bool) UndoResult {
	c := compare(before, now)
	res := UndoResult{Undone: []string{}, Skipped: []Skip{}}
	at := map[string]int{}
	for i, h := range c.file.Hunks {
		at[h.ID] = i
	}
	if len(ids) == 0 {
		for _, h := range c.file.Hunks {
			ids = append(ids, h.ID)
		}
	}
	var (
		sel      []span // the lines of before to put back, [a0, a1)
		whole    bool   // the whole file goes back
		modeBack bool
		notes    []Undone
	)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		skip := func(reason string) { res.Skipped = append(res.Skipped, Skip{HunkID: id, Reason: reason}) }
		if i, ok := at[id]; ok {
			res.Undone = append(res.Undone, id)
			switch {
			case strings.HasPrefix(id, "mode."):
				modeBack = true
				notes = append(notes, Undone{Path: path, Kind: UndoneMode, From: int(now.Mode.Perm()), To: int(before.Mode.Perm())})
			case c.whole:
				whole = true
			default:
				r := c.ranges[i]
				sel = append(sel, span{a0: r.a0, a1: r.a1})
				notes = append(notes, c.hunkNote(path, i))
			}
			continue
		}
		switch kind, from, count, ok := parseID(id); {
		case !ok:
			skip(ReasonUnknown)
		case now.Data == nil:
			skip(ReasonGone) // not a hunk of the deletion: the file went after the list
		case kind == "mode":
			if _, still := modeHunk(before, now); !still {
				skip(ReasonUnchanged)
			} else if !force {
				skip(ReasonChanged)
			} else {
				res.Undone = append(res.Undone, id)
				modeBack = true
				notes = append(notes, Undone{Path: path, Kind: UndoneMode, From: int(now.Mode.Perm()), To: int(before.Mode.Perm())})
			}
		case !c.contentChanged():
			skip(ReasonUnchanged)
		case kind == "bin" || c.whole:
			if !force {
				skip(ReasonChanged)
				continue
			}
			res.Undone = append(res.Undone, id)
			whole = true
		case from+count > len(c.a):
			skip(ReasonUnknown)
		default:
			// The lines the id names, in the before file, and what stands in their place
			// now (the lines added at either end included).
			lo, hi := c.bounds()
			switch {
			case slices.Equal(c.a[from:from+count], c.b[lo[from]:hi[from+count]]):
				skip(ReasonUnchanged)
			case !force:
				skip(ReasonChanged)
			default:
				res.Undone = append(res.Undone, id)
				sel = append(sel, span{a0: from, a1: from + count})
				notes = append(notes, c.rangeNote(path, from, from+count, lo, hi))
			}
		}
	}
	if modeBack && before.Mode != 0 {
		res.Mode = before.Mode.Perm()
	}
	if !whole && len(sel) == 0 {
		res.Lines = notes
		return res
	}
	data := before.Data
	if !whole {
		data = c.put(sel)
	}
	switch {
	case before.Data == nil && len(data) == 0:
		res.Remove, res.Mode = true, 0
		notes = []Undone{{Path: path, Kind: UndoneAdded}}
	case now.Data == nil:
		res.Write, res.Create, res.Data = true, true, data
		if res.Mode = before.Mode.Perm(); res.Mode == 0 {
			res.Mode = 0o644
		}
		notes = []Undone{{Path: path, Kind: UndoneDeleted}}
	default:
		res.Write, res.Data = true, data
		if whole {
			notes = append(notes, Undone{Path: path, Kind: UndoneWhole})
		}
	}
	res.Lines = notes
	return res
}

// contentChanged reports whether the file's content (not its mode) differs from before.
func (c *comparison) contentChanged() bool {
	for _, h := range c.file.Hunks {
		if !strings.HasPrefix(h.ID, "mode.") {
			return true
		}
	}
	return false
}

// parseID returns what a hunk id names: its kind ("text", "bin" or "mode") and, for text,
// the place of its lines in the before file.
func parseID(id string) (kind string, from, count int, ok bool) {
	switch {
	case strings.HasPrefix(id, "bin."):
		return "bin", 0, 0, true
	case strings.HasPrefix(id, "mode."):
		return "mode", 0, 0, true
	}
	place, _, ok := strings.Cut(id, ".")
	f, n, ok2 := strings.Cut(place, "+")
	if !ok || !ok2 {
		return "", 0, 0, false
	}
	from, err1 := strconv.Atoi(f)
	count, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || from < 0 || count < 0 || from > 1<<40 || count > 1<<40 {
		return "", 0, 0, false
	}
	return "text", from, count, true
}

// bounds maps the places between lines of a to places between lines of b: the lines of b
// from lo[i] to hi[i] are added between lines i-1 and i of a (lo[i] == hi[i] when none),
// so that putting back a's lines [i, k) replaces b's lines [lo[i], hi[k]).
func (c *comparison) bounds() (lo, hi []int) {
	if c.lo != nil {
		return c.lo, c.hi
	}
	defer func() { c.lo, c.hi = lo, hi }()
	n := len(c.a)
	lo, hi = make([]int, n+1), make([]int, n+1)
	j := 0
	for i := 0; i <= n; i++ {
		lo[i] = j
		for j < len(c.b) && c.added[j] {
			j++
		}
		hi[i] = j
		if i < n && !c.removed[i] {
			j++ // line i of a is line j of b
		}
	}
	return lo, hi
}

// put returns the content now with the lines sel of before put back in place of what
// stands there now.
func (c *comparison) put(sel []span) []byte {
	slices.SortFunc(sel, func(x, y span) int { return x.a0 - y.a0 })
	merged := sel[:1]
	for _, s := range sel[1:] {
		last := &merged[len(merged)-1]
		if s.a0 <= last.a1 {
			last.a1 = max(last.a1, s.a1)
			continue
		}
		merged = append(merged, s)
	}
	lo, hi := c.bounds()
	var out bytes.Buffer
	at := 0 // the next line of b to copy
	for _, s := range merged {
		for _, l := range c.b[at:lo[s.a0]] {
			out.WriteString(l)
		}
		for _, l := range c.a[s.a0:s.a1] {
			out.WriteString(l)
		}
		at = hi[s.a1]
	}
	for _, l := range c.b[at:] {
		out.WriteString(l)
	}
	if out.Len() == 0 {
		return []byte{}
	}
	return out.Bytes()
}

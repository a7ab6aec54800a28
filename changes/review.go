// This file holds Review: which hunks of each prompt's changes the person kept, saved in the
// session file as review entries and read back from them.

package changes

import (
	"encoding/json"
	"slices"
)

// Review is what a person kept of each prompt's changes: for each checkpoint and path, the
// ids of the hunks kept. Not safe for concurrent use: the session guards it.
//
// Merge rules. A hunk's id is made from its content (Compare), so:
//   - a kept hunk stays kept while its lines stay as they are, whatever else changes in the
//     file (another hunk undone, kept or edited), and across session/load;
//   - a kept hunk whose lines change (a person's edit in it or next to it, a later prompt's
//     change that joins it) has a new id, and is pending again;
//   - a kept id that is no longer a hunk of the file is forgotten at the next keep or undo of
//     that file (Keep and Settle leave it out of the entry they return); until then, a hunk
//     that comes back exactly as it was kept (the person puts their edit back, or rewinds to
//     an undo's safety checkpoint) is kept again. Listing never forgets anything, so it
//     writes nothing.
type Review struct {
	kept map[string]map[string][]string // checkpoint -> path -> sorted ids
}

// Entry is the session file's review entry: the ids kept of one file of one checkpoint
// after a keep or an undo, which replace the ones before. One entry per change, not the
// whole review, so the append-only file grows by what changed; Replay reads them back in
// the file's order (on every branch: a review is of the files, not of the conversation).
type Entry struct {
	CheckpointID string   `json:"checkpointId"`
	Path         string   `json:"path"`
	Kept         []string `json:"kept"`
}

// Replay applies an entry read back from the session file.
func (r *Review) Replay(e Entry) {
	r.set(e.CheckpointID, e.Path, slices.Clone(e.Kept))
}

// set records ids (sorted here) as the kept hunks of path in checkpoint cp.
func (r *Review) set(cp, path string, ids []string) {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		if m := r.kept[cp]; m != nil {
			delete(m, path)
			if len(m) == 0 {
				delete(r.kept, cp)
			}
		}
		return
	}
	if r.kept == nil {
		r.kept = map[string]map[string][]string{}
	}
	if r.kept[cp] == nil {
		r.kept[cp] = map[string][]string{}
	}
	r.kept[cp][path] = ids
}

// Kept returns the ids recorded as kept for path in checkpoint cp, sorted.
func (r *Review) Kept(cp, path string) []string {
	return slices.Clone(r.kept[cp][path])
}

// Mark sets the state of f's hunks (kept or pending) and f.Reviewed (every hunk kept), for
// f a file of checkpoint cp's changes.
func (r *Review) Mark(cp string, f *File) {
	kept := r.kept[cp][f.Path]
	f.Reviewed = len(f.Hunks) > 0
	for i := range f.Hunks {
		h := &f.Hunks[i]
		h.State = Pending
		if _, ok := slices.BinarySearch(kept, h.ID); ok {
			h.State = Kept
		} else {
			f.Reviewed = false
		}
	}
}

// Keep marks the hunks ids of f (all of them when there are none) as kept, for f a file of
// checkpoint cp's changes as Compare gives it now. It returns the ids kept (those of ids
// that are hunks of f, in their order; the others are not f's hunks) and the entry to append
// to the session file, with write false when nothing changed. Kept ids that are no longer
// hunks of f are dropped. f's states are marked.
func (r *Review) Keep(cp string, f *File, ids []string) (kept []string, e Entry, write bool) {
	if len(ids) == 0 {
		for _, h := range f.Hunks {
			ids = append(ids, h.ID)
		}
	}
	has := hunkIDs(f)
	kept = []string{}
	for _, id := range ids {
		if has[id] {
			kept = append(kept, id)
			delete(has, id) // each id once
		}
	}
	old := r.kept[cp][f.Path]
	next := slices.Clone(kept)
	for _, id := range old {
		if has[id] {
			next = append(next, id)
		}
	}
	r.set(cp, f.Path, next)
	now := r.Kept(cp, f.Path)
	r.Mark(cp, f)
	return kept, Entry{CheckpointID: cp, Path: f.Path, Kept: orEmpty(now)}, !slices.Equal(old, now)
}

// Settle drops the kept ids of f that are no longer its hunks, for f a file of checkpoint
// cp's changes as Compare gives it after an undo. It returns the entry to append, with
// write false when nothing was dropped. f's states are marked.
func (r *Review) Settle(cp string, f *File) (e Entry, write bool) {
	old := r.kept[cp][f.Path]
	has := hunkIDs(f)
	var next []string
	for _, id := range old {
		if has[id] {
			next = append(next, id)
		}
	}
	r.set(cp, f.Path, next)
	now := r.Kept(cp, f.Path)
	r.Mark(cp, f)
	return Entry{CheckpointID: cp, Path: f.Path, Kept: orEmpty(now)}, !slices.Equal(old, now)
}

// hunkIDs returns the ids of f's hunks.
func hunkIDs(f *File) map[string]bool {
	out := make(map[string]bool, len(f.Hunks))
	for _, h := range f.Hunks {
		out[h.ID] = true
	}
	return out
}

// orEmpty returns ids, or an empty list for nil (a JSON [] rather than null).
func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// MarshalJSON writes the whole review: {"CHECKPOINT": {"PATH": [id, ...]}}.
func (r Review) MarshalJSON() ([]byte, error) {
	if r.kept == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(r.kept)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Review) UnmarshalJSON(data []byte) error {
	var m map[string]map[string][]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	r.kept = nil
	for cp, paths := range m {
		for path, ids := range paths {
			r.set(cp, path, ids)
		}
	}
	return nil
}

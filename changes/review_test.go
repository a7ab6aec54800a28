// This file tests Review (what was kept, and its merge rules), By and Note.

package changes

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func states(f File) []string {
	out := []string{}
	for _, h := range f.Hunks {
		out = append(out, h.State)
	}
	return out
}

func TestReview(t *testing.T) {
	before := text(numbered(40, nil))
	now := text(numbered(40, map[int]string{3: "three\n", 20: "twenty\n", 35: "thirty-five\n"}))
	f := Compare("/w/f", before, now)
	var r Review

	// A keep of one hunk: it alone is kept; the entry holds it.
	kept, e, write := r.Keep("cp1", &f, []string{f.Hunks[1].ID, "not-a-hunk"})
	if !slices.Equal(kept, []string{f.Hunks[1].ID}) || !write || !slices.Equal(e.Kept, []string{f.Hunks[1].ID}) || e.CheckpointID != "cp1" || e.Path != "/w/f" {
		t.Fatalf("keep: kept %v, entry %+v (write %v)", kept, e, write)
	}
	if !slices.Equal(states(f), []string{Pending, Kept, Pending}) || f.Reviewed {
		t.Errorf("after one keep: %v reviewed %v", states(f), f.Reviewed)
	}
	// The same keep again writes nothing.
	if _, _, write := r.Keep("cp1", &f, []string{f.Hunks[1].ID}); write {
		t.Error("a keep that changes nothing asks for an entry")
	}
	// A list afterwards: the same ids, the same states.
	again := Compare("/w/f", before, now)
	r.Mark("cp1", &again)
	if !slices.Equal(states(again), []string{Pending, Kept, Pending}) {
		t.Errorf("a second list: %v", states(again))
	}
	// Another checkpoint's review is its own.
	other := Compare("/w/f", before, now)
	r.Mark("cp2", &other)
	if !slices.Equal(states(other), []string{Pending, Pending, Pending}) {
		t.Errorf("another checkpoint: %v", states(other))
	}

	// The kept hunk's lines change (a person's edit): pending again, with a new id.
	edited := text(numbered(40, map[int]string{3: "three\n", 20: "twenty-one\n", 35: "thirty-five\n"}))
	changed := Compare("/w/f", before, edited)
	r.Mark("cp1", &changed)
	if !slices.Equal(states(changed), []string{Pending, Pending, Pending}) {
		t.Errorf("after the kept hunk changed: %v", states(changed))
	}
	// Until the next keep or undo of the file, the old id is remembered: the edit taken
	// back, the hunk is kept again.
	back := Compare("/w/f", before, now)
	r.Mark("cp1", &back)
	if back.Hunks[1].State != Kept {
		t.Errorf("the hunk as it was kept: %s", back.Hunks[1].State)
	}
	// A keep of the changed file forgets it.
	_, e, _ = r.Keep("cp1", &changed, []string{changed.Hunks[0].ID})
	if !slices.Equal(e.Kept, []string{changed.Hunks[0].ID}) {
		t.Errorf("keep after the change: entry %v, want only %s", e.Kept, changed.Hunks[0].ID)
	}
	r.Mark("cp1", &back)
	if !slices.Equal(states(back), []string{Kept, Pending, Pending}) {
		t.Errorf("after the keep forgot the changed hunk: %v", states(back))
	}

	// Keep with no ids: every hunk; reviewed.
	_, e, _ = r.Keep("cp1", &f, nil)
	if !f.Reviewed || len(e.Kept) != 3 || !slices.Equal(states(f), []string{Kept, Kept, Kept}) {
		t.Errorf("keep all: %v reviewed %v entry %v", states(f), f.Reviewed, e.Kept)
	}

	// An undo of one hunk: Settle drops its id.
	res := Undo("/w/f", before, now, []string{f.Hunks[0].ID}, false)
	left := Compare("/w/f", before, Side{Data: res.Data})
	e, write = r.Settle("cp1", &left)
	if !write || !slices.Equal(e.Kept, []string{f.Hunks[1].ID, f.Hunks[2].ID}) || !left.Reviewed {
		t.Errorf("settle after an undo: entry %v (write %v), reviewed %v", e.Kept, write, left.Reviewed)
	}
	if _, write := r.Settle("cp1", &left); write {
		t.Error("a second settle asks for an entry")
	}
}

// TestReviewEntries checks that the entries, replayed in order, give the review back, and the
// whole review's JSON.
func TestReviewEntries(t *testing.T) {
	f := Compare("/w/f", text(numbered(40, nil)), text(numbered(40, map[int]string{3: "x\n", 30: "y\n"})))
	g := Compare("/w/g", Side{}, text("new\n"))
	var r Review
	var entries []Entry
	add := func(e Entry, write bool) {
		if write {
			entries = append(entries, e)
		}
	}
	_, e, w := r.Keep("cp1", &f, []string{f.Hunks[0].ID})
	add(e, w)
	_, e, w = r.Keep("cp1", &g, nil)
	add(e, w)
	_, e, w = r.Keep("cp2", &f, nil)
	add(e, w)
	_, e, w = r.Keep("cp1", &f, []string{f.Hunks[1].ID})
	add(e, w)

	// Through JSON, as the session file holds them.
	var back Review
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var read Entry
		if err := json.Unmarshal(line, &read); err != nil {
			t.Fatal(err)
		}
		back.Replay(read)
	}
	if d := cmp.Diff(r.kept, back.kept); d != "" {
		t.Errorf("replayed (-kept +replayed):\n%s", d)
	}
	line, _ := json.Marshal(entries[0])
	if want := `{"checkpointId":"cp1","path":"/w/f","kept":["` + f.Hunks[0].ID + `"]}`; string(line) != want {
		t.Errorf("entry %s, want %s", line, want)
	}

	// An entry that keeps nothing any more removes the file's record, and says [] not null.
	h := Compare("/w/f", text(numbered(40, nil)), text(numbered(40, nil)))
	e, w = r.Settle("cp1", &h)
	if !w || e.Kept == nil || len(e.Kept) != 0 {
		t.Errorf("settle of a file with no hunks left: %+v %v", e, w)
	}
	back.Replay(e)
	if _, ok := back.kept["cp1"]["/w/f"]; ok {
		t.Error("an empty entry left the file's record")
	}

	whole, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var round Review
	if err := json.Unmarshal(whole, &round); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r.kept, round.kept); d != "" {
		t.Errorf("through its JSON %s (-before +after):\n%s", whole, d)
	}
	var empty Review
	if b, _ := json.Marshal(empty); string(b) != "{}" {
		t.Errorf("an empty review: %s", b)
	}
}

func TestBy(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{nil, []string{}},
		{[]string{"bash", "edit", "bash", ""}, []string{"edit", "bash"}},
		{[]string{"mcp__fs__write_file", "task", "write", "edit", "mcp__db__dump", "bash"}, []string{"edit", "write", "bash", "task", "mcp__db__dump", "mcp__fs__write_file"}},
		{[]string{Changer("edit", true), Changer("bash", false)}, []string{"bash", "task"}},
	} {
		if got := By(tc.in...); !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("By(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNote(t *testing.T) {
	if Note(nil) != "" {
		t.Error("a note of nothing")
	}
	got := Note([]Undone{
		{Path: "/w/a.go", Kind: UndoneLines, From: 10, To: 14},
		{Path: "/w/a.go", Kind: UndoneLines, From: 30, To: 30},
		{Path: "/w/b.go", Kind: UndoneRemoved, From: 7},
		{Path: "/w/b.go", Kind: UndoneRemoved, From: 0},
		{Path: "/w/new.go", Kind: UndoneAdded},
		{Path: "/w/old.go", Kind: UndoneDeleted},
		{Path: "/w/logo.png", Kind: UndoneWhole},
		{Path: "/w/run.sh", Kind: UndoneMode, From: 0o755, To: 0o644},
	})
	want := "The person undid these changes of yours: /w/a.go lines 10-14, /w/a.go line 30, " +
		"/w/b.go (the lines you removed after line 7 are back), /w/b.go (the lines you removed at its start are back), " +
		"/w/new.go (a file you made: it is removed), /w/old.go (a file you deleted: it is back), " +
		"/w/logo.png (the whole file is as it was before your change), /w/run.sh (its mode 0755 is back to 0644). " +
		"Line numbers are those of the files as you left them. Do not make these changes again unless the person asks for them."
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// From a real undo: the lines of the file as the model left it.
	before := text(numbered(30, nil))
	now := text(numbered(30, map[int]string{2: "l2\nadded\nadded too\n", 20: "twenty\n"}))
	f := Compare("/w/c.go", before, now)
	res := Undo("/w/c.go", before, now, ids(f), false)
	if got, want := Note(res.Lines), NotePrefix+"/w/c.go lines 3-4, /w/c.go line 22. "; got[:len(want)] != want {
		t.Errorf("note of an undo: %s", got)
	}
}

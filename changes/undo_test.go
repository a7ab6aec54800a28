// This file tests Undo: hunks put back, the others and later changes left, and what is
// skipped and why.

package changes

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUndo(t *testing.T) {
	two := numbered(20, map[int]string{3: "L3\n", 15: "L15\n"})
	for _, tc := range []struct {
		name        string
		before, now Side
		// pick chooses the ids asked from the hunks of Compare(before, now) (nil: none, all
		// of them); extra are more ids asked.
		pick  func(hunks []Hunk) []string
		extra []string
		// person, when set, is the file after a person's edit following the list: the undo
		// is of it.
		person *Side
		force  bool

		want    UndoResult
		undone  []int // indexes of the hunks undone (want.Undone is filled from them)
		skipped map[int]string
	}{
		{
			name:   "one of two hunks: the other stays",
			before: text(numbered(20, nil)), now: text(two),
			pick:   first,
			undone: []int{0},
			want: UndoResult{Write: true, Data: []byte(numbered(20, map[int]string{15: "L15\n"})),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 3, To: 3}}},
		},
		{
			name:   "every hunk, no ids given: the file as before",
			before: text(numbered(20, nil)), now: text(two),
			undone: []int{0, 1},
			want: UndoResult{Write: true, Data: []byte(numbered(20, nil)),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 3, To: 3}, {Path: "f", Kind: UndoneLines, From: 15, To: 15}}},
		},
		{
			name:   "an id asked twice is undone once",
			before: text(numbered(20, nil)), now: text(two),
			pick:   func(h []Hunk) []string { return []string{h[1].ID, h[1].ID} },
			undone: []int{1},
			want: UndoResult{Write: true, Data: []byte(numbered(20, map[int]string{3: "L3\n"})),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 15, To: 15}}},
		},
		{
			name:   "a hunk that only removed lines: they come back",
			before: text(numbered(10, nil)), now: text(numbered(10, map[int]string{4: "", 5: ""})),
			undone: []int{0},
			want: UndoResult{Write: true, Data: []byte(numbered(10, nil)),
				Lines: []Undone{{Path: "f", Kind: UndoneRemoved, From: 3}}},
		},
		{
			name:   "a person's edit in another hunk is left as it is",
			before: text(numbered(20, nil)), now: text(two),
			person: &Side{Data: []byte(numbered(20, map[int]string{3: "L3\n", 15: "person's\n"}))},
			pick:   first,
			undone: []int{0},
			want: UndoResult{Write: true, Data: []byte(numbered(20, map[int]string{15: "person's\n"})),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 3, To: 3}}},
		},
		{
			name:   "a person's edit inside the hunk: skipped",
			before: text(numbered(20, nil)), now: text(two),
			person:  &Side{Data: []byte(numbered(20, map[int]string{3: "L3 and the person's\n", 15: "L15\n"}))},
			pick:    first,
			skipped: map[int]string{0: ReasonChanged},
			want:    UndoResult{},
		},
		{
			name:   "a person's edit next to the hunk (it grew): skipped",
			before: text(numbered(20, nil)), now: text(two),
			person:  &Side{Data: []byte(numbered(20, map[int]string{3: "L3\n", 6: "person's\n", 15: "L15\n"}))},
			pick:    first,
			skipped: map[int]string{0: ReasonChanged},
			want:    UndoResult{},
		},
		{
			name:   "a person's edit inside the hunk, force: its lines as before, the other hunk left",
			before: text(numbered(20, nil)), now: text(two),
			person: &Side{Data: []byte(numbered(20, map[int]string{3: "L3 and the person's\n", 15: "L15\n"}))},
			pick:   first, force: true,
			undone: []int{0},
			want: UndoResult{Write: true, Data: []byte(numbered(20, map[int]string{15: "L15\n"})),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 3, To: 3}}},
		},
		{
			name:   "the person put the lines back themselves: nothing to undo, even with force",
			before: text(numbered(20, nil)), now: text(two),
			person: &Side{Data: []byte(numbered(20, map[int]string{15: "L15\n"}))},
			pick:   first, force: true,
			skipped: map[int]string{0: ReasonUnchanged},
			want:    UndoResult{},
		},
		{
			name:   "ids that name no hunk of the file",
			before: text(numbered(20, nil)), now: text(two),
			pick:  func([]Hunk) []string { return []string{} },
			extra: []string{"nonsense", "999+3.000000000000", "-1+2.abc", "3+x.abc"},
			want: UndoResult{Skipped: []Skip{{"nonsense", ReasonUnknown}, {"999+3.000000000000", ReasonUnknown},
				{"-1+2.abc", ReasonUnknown}, {"3+x.abc", ReasonUnknown}}},
		},
		{
			name:   "a file the person deleted after the list: skipped, even with force",
			before: text(numbered(20, nil)), now: text(two),
			person: &Side{},
			pick:   first, force: true,
			skipped: map[int]string{0: ReasonGone},
			want:    UndoResult{},
		},
		{
			name:   "an added file: removed",
			before: Side{}, now: text("new\nfile\n"),
			undone: []int{0},
			want:   UndoResult{Remove: true, Lines: []Undone{{Path: "f", Kind: UndoneAdded}}},
		},
		{
			name:   "an added file the person edited since, force: removed",
			before: Side{}, now: text("new\nfile\n"),
			person: &Side{Data: []byte("new\nfile\nperson's\n")},
			pick:   first, force: true,
			undone: []int{0},
			want:   UndoResult{Remove: true, Lines: []Undone{{Path: "f", Kind: UndoneAdded}}},
		},
		{
			name:   "an empty file added: removed",
			before: Side{}, now: text(""),
			undone: []int{0},
			want:   UndoResult{Remove: true, Lines: []Undone{{Path: "f", Kind: UndoneAdded}}},
		},
		{
			name:   "a deleted file: made again with its bytes and mode",
			before: Side{Data: []byte("#!/bin/sh\necho hi\n"), Mode: 0o755}, now: Side{},
			undone: []int{0},
			want: UndoResult{Write: true, Create: true, Data: []byte("#!/bin/sh\necho hi\n"), Mode: 0o755,
				Lines: []Undone{{Path: "f", Kind: UndoneDeleted}}},
		},
		{
			name:   "a deleted file whose mode is not known: 0644",
			before: text("x"), now: Side{},
			undone: []int{0},
			want:   UndoResult{Write: true, Create: true, Data: []byte("x"), Mode: 0o644, Lines: []Undone{{Path: "f", Kind: UndoneDeleted}}},
		},
		{
			name:   "an empty file deleted: made again, empty",
			before: Side{Data: []byte{}, Mode: 0o600}, now: Side{},
			undone: []int{0},
			want:   UndoResult{Write: true, Create: true, Data: []byte{}, Mode: 0o600, Lines: []Undone{{Path: "f", Kind: UndoneDeleted}}},
		},
		{
			name:   "CRLF lines and no final newline kept byte for byte",
			before: text("a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nk"), now: text("a\r\nB\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nK\n"),
			pick:   first,
			undone: []int{0},
			want: UndoResult{Write: true, Data: []byte("a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nK\n"),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 2, To: 2}}},
		},
		{
			name:   "the final line's newline taken back",
			before: text("a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nk"), now: text("a\r\nB\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nK\n"),
			pick:   func(h []Hunk) []string { return []string{h[1].ID} },
			undone: []int{1},
			want: UndoResult{Write: true, Data: []byte("a\r\nB\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\nk"),
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 11, To: 11}}},
		},
		{
			name:   "a binary file: back whole",
			before: text("\x00old"), now: text("\x00new"),
			undone: []int{0},
			want:   UndoResult{Write: true, Data: []byte("\x00old"), Lines: []Undone{{Path: "f", Kind: UndoneWhole}}},
		},
		{
			name:   "a binary file changed again since the list: skipped, then back whole with force",
			before: text("\x00old"), now: text("\x00new"),
			person: &Side{Data: []byte("\x00newer")},
			pick:   first, force: true,
			undone: []int{0},
			want:   UndoResult{Write: true, Data: []byte("\x00old"), Lines: []Undone{{Path: "f", Kind: UndoneWhole}}},
		},
		{
			name:   "a binary file changed again since the list, no force: skipped",
			before: text("\x00old"), now: text("\x00new"),
			person:  &Side{Data: []byte("\x00newer")},
			pick:    first,
			skipped: map[int]string{0: ReasonChanged},
			want:    UndoResult{},
		},
		{
			name:   "a binary file added: removed",
			before: Side{}, now: text("\x00"),
			undone: []int{0},
			want:   UndoResult{Remove: true, Lines: []Undone{{Path: "f", Kind: UndoneAdded}}},
		},
		{
			name:   "a mode change: the mode back, the content left",
			before: Side{Data: []byte("a\n"), Mode: 0o644}, now: Side{Data: []byte("b\n"), Mode: 0o755},
			pick:   func(h []Hunk) []string { return []string{h[1].ID} },
			undone: []int{1},
			want:   UndoResult{Mode: 0o644, Lines: []Undone{{Path: "f", Kind: UndoneMode, From: 0o755, To: 0o644}}},
		},
		{
			name:   "content and mode: both back",
			before: Side{Data: []byte("a\n"), Mode: 0o644}, now: Side{Data: []byte("b\n"), Mode: 0o755},
			undone: []int{0, 1},
			want: UndoResult{Write: true, Data: []byte("a\n"), Mode: 0o644,
				Lines: []Undone{{Path: "f", Kind: UndoneLines, From: 1, To: 1}, {Path: "f", Kind: UndoneMode, From: 0o755, To: 0o644}}},
		},
		{
			name:   "a mode changed again since the list: skipped unless force",
			before: Side{Data: []byte("a\n"), Mode: 0o644}, now: Side{Data: []byte("a\n"), Mode: 0o755},
			person:  &Side{Data: []byte("a\n"), Mode: 0o700},
			pick:    first,
			skipped: map[int]string{0: ReasonChanged},
			want:    UndoResult{},
		},
		{
			name:   "a mode put back by the person: nothing to undo",
			before: Side{Data: []byte("a\n"), Mode: 0o644}, now: Side{Data: []byte("a\n"), Mode: 0o755},
			person: &Side{Data: []byte("a\n"), Mode: 0o644},
			pick:   first, force: true,
			skipped: map[int]string{0: ReasonUnchanged},
			want:    UndoResult{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			listed := Compare("f", tc.before, tc.now)
			var asked []string
			if tc.pick != nil {
				asked = tc.pick(listed.Hunks)
			}
			asked = append(asked, tc.extra...)
			now := tc.now
			if tc.person != nil {
				now = *tc.person
			}
			want := tc.want
			want.Undone, want.Skipped = []string{}, append([]Skip{}, tc.want.Skipped...)
			for _, i := range tc.undone {
				want.Undone = append(want.Undone, listed.Hunks[i].ID)
			}
			for i, reason := range tc.skipped {
				want.Skipped = append(want.Skipped, Skip{listed.Hunks[i].ID, reason})
			}
			got := Undo("f", tc.before, now, asked, tc.force)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func first(h []Hunk) []string { return []string{h[0].ID} }

// TestUndoThenList checks an undo against the list after it: the hunks not undone, with
// their ids and their kept state, and nothing of the undone one.
func TestUndoThenList(t *testing.T) {
	before := text(numbered(60, nil))
	now := text(numbered(60, map[int]string{5: "five\n", 20: "", 35: "l35\nthirty-five and a half\n", 50: "fifty\n"}))
	f := Compare("f", before, now)
	if len(f.Hunks) != 4 {
		t.Fatalf("hunks %v", ids(f))
	}
	var r Review
	r.Keep("cp", &f, []string{f.Hunks[3].ID})
	res := Undo("f", before, now, []string{f.Hunks[1].ID, f.Hunks[2].ID}, false)
	after := Compare("f", before, Side{Data: res.Data})
	r.Mark("cp", &after)
	want := []Hunk{f.Hunks[0], f.Hunks[3]}
	if d := cmp.Diff(want, after.Hunks); d != "" {
		t.Errorf("the list after the undo (-want +got):\n%s", d)
	}
	if after.Hunks[1].State != Kept {
		t.Errorf("the kept hunk is %s after another's undo", after.Hunks[1].State)
	}
	// The undone hunks' ids from the old list: nothing to undo any more.
	again := Undo("f", before, Side{Data: res.Data}, []string{f.Hunks[1].ID}, true)
	if len(again.Undone) != 0 || again.Write || !slices.Equal(again.Skipped, []Skip{{f.Hunks[1].ID, ReasonUnchanged}}) {
		t.Errorf("undo of an undone hunk: %+v", again)
	}
}

// TestUndoMode checks that a deleted file comes back with the permission bits given, never
// with more than them.
func TestUndoMode(t *testing.T) {
	res := Undo("f", Side{Data: []byte("x"), Mode: fs.ModeSetuid | 0o4755}, Side{}, nil, false)
	if res.Mode != 0o755 {
		t.Errorf("mode %v, want the permission bits alone", res.Mode)
	}
}

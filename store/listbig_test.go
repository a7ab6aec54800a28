// This file tests what session/list reads of a big session: its header, its last line and
// the line of its title, whatever its size (every line pid writes ends with its branch's
// summary); an older file without those summaries is read through once in little memory;
// and both give the summary a full load gives, branches, rewinds, torn and damaged last
// lines included.

package store

import (
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// bigSession writes a session of about n MiB in cwd: a first question, then n exchanges of
// a 1 MiB tool result each, then a second answer to the first question (a branch: the
// current branch is the question and that answer).
func bigSession(t *testing.T, s *Store, cwd string, n int) *File {
	t.Helper()
	f := create(t, s, cwd)
	ids, err := f.Append(msg(0, userMsg("Why is the build   so slow?")))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("log line of a long build\n", 1<<20/25)
	for i := range n {
		res := resultMsg(0)
		res.Content = []llm.Content{llm.Text(big)}
		if _, err := f.Append(msg(2*i+1, assistantMsg(0)), msg(2*i+2, res)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Append(Entry{Kind: KindMessage, ParentID: ids[0], Timestamp: at(5000), Message: ptr(assistantMsg(1))}); err != nil {
		t.Fatal(err)
	}
	return f
}

// stripBranches rewrites the file at path as an older pid wrote it: no "branch" members.
func stripBranches(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := regexp.MustCompile(`,"branch":\{"messages":\d+(,"firstUser":\{"id":"[0-9a-z_-]+","offset":\d+\})?\}\}\n`).ReplaceAll(data, []byte("}\n"))
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// listOne lists s and returns the summary of id, the bytes List read and what it allocated.
func listOne(t *testing.T, s *Store, id string) (Summary, int64, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	read := s.bytesRead
	runtime.GC()
	runtime.ReadMemStats(&before)
	sums, problems, err := s.ListWithProblems("")
	runtime.ReadMemStats(&after)
	if err != nil || len(problems) > 0 {
		t.Fatalf("List: %v %v", problems, err)
	}
	for _, x := range sums {
		if x.ID == id {
			return x, s.bytesRead - read, after.TotalAlloc - before.TotalAlloc
		}
	}
	t.Fatalf("List has no %s: %v", id, sums)
	return Summary{}, 0, 0
}

func TestListReadsTheEndOfABigSession(t *testing.T) {
	s := newStore(t)
	f := bigSession(t, s, "/w", 48)
	f.Close()
	size := fileSize(t, f.Path())
	want := Summary{ID: f.ID(), Cwd: "/w", Title: "Why is the build so slow?", CreatedAt: at(0), UpdatedAt: at(5000), MessageCount: 2}
	l, err := s.Read(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Branch); n != want.MessageCount || !l.Branch[1].Timestamp.Equal(want.UpdatedAt) {
		t.Fatalf("the full load has %d entries on the branch", n)
	}
	want.CreatedAt = l.Header.CreatedAt

	got, read, alloc := listOne(t, s, f.ID())
	t.Logf("a %d-byte session: List read %d bytes and allocated %d", size, read, alloc)
	if got != want {
		t.Errorf("summary %+v,\nwant %+v", got, want)
	}
	if read > 64<<10 {
		t.Errorf("List read %d bytes of a %d-byte session, want its header, last line and title line only", read, size)
	}
	if alloc > 1<<20 {
		t.Errorf("List allocated %d bytes for a %d-byte session, want under 1 MiB", alloc, size)
	}

	// The same file as an older pid wrote it: read through once, in little memory.
	stripBranches(t, f.Path())
	got, read, alloc = listOne(t, s, f.ID())
	t.Logf("without branch summaries: List read %d bytes and allocated %d", read, alloc)
	if got != want {
		t.Errorf("older file: summary %+v,\nwant %+v", got, want)
	}
	if alloc > 8<<20 {
		t.Errorf("List allocated %d bytes for an older %d-byte session, want under 8 MiB (it must not hold the file)", alloc, size)
	}
}

// The summary from the last line is the one a full load gives: a branch, a rewind, a title
// that is not the first message, a mode entry last, an unsaved marker last, a torn last line
// and an unreadable last line (both skipped, as loading skips them); each also read as an
// older pid wrote it.
func TestListSummaryMatchesALoad(t *testing.T) {
	s := newStore(t)
	check := func(name string, f *File, tail string) {
		t.Helper()
		f.Close()
		if tail != "" {
			appendRaw(t, f.Path(), tail)
		}
		l, err := s.Read(f.ID())
		if err != nil {
			t.Fatal(err)
		}
		want := Summary{ID: f.ID(), Cwd: l.Header.Cwd, CreatedAt: l.Header.CreatedAt, UpdatedAt: l.Header.CreatedAt}
		if n := len(l.Entries); n > 0 {
			want.UpdatedAt = l.Entries[n-1].Timestamp
		}
		for _, e := range l.Branch {
			if e.Kind == KindMessage {
				want.MessageCount++
				if want.Title == "" && e.Message.Role == llm.RoleUser {
					want.Title = Title(e.Message.Text())
				}
			}
		}
		if got, _, _ := listOne(t, s, f.ID()); got != want {
			t.Errorf("%s: summary %+v,\nwant (a load) %+v", name, got, want)
		}
		stripBranches(t, f.Path())
		if got, _, _ := listOne(t, s, f.ID()); got != want {
			t.Errorf("%s, older file: summary %+v,\nwant (a load) %+v", name, got, want)
		}
	}

	f := create(t, s, "/w")
	ids, _ := f.Append(msg(1, assistantMsg(0)), msg(2, userMsg("first question")), msg(3, assistantMsg(1)), msg(4, userMsg("second")))
	f.Append(Entry{Kind: KindCheckpoint, ParentID: ids[0], Timestamp: at(5), Checkpoint: &Checkpoint{ID: "cp1"}})
	f.Append(Entry{Kind: KindRewind, Timestamp: at(6), Rewind: &Rewind{CheckpointID: "cp1", Restore: "both"}},
		msg(7, userMsg("after the rewind")), Entry{Kind: KindMode, Timestamp: at(8), Mode: "plan"})
	check("rewound, a mode last", f, "")

	f = create(t, s, "/w")
	f.Append(msg(1, userMsg("q")), msg(2, assistantMsg(0)))
	f.MarkUnsaved("disk full")
	check("an unsaved marker last", f, "")

	f = create(t, s, "/w")
	f.Append(msg(1, userMsg("q")), msg(2, assistantMsg(0)), msg(3, userMsg("r")))
	check("a torn last line", f, `{"type":"message","id":"zz12","parentId":"`)

	f = create(t, s, "/w")
	f.Append(msg(1, userMsg("q")), msg(2, assistantMsg(0)))
	check("an unreadable last line", f, "\x00\x00\x00\n")

	f = create(t, s, "/w")
	check("no entries", f, "")
}

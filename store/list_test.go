// This file tests List (order, filter, titles, counts, its cache) and session ids.

package store

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/llm"
)

func TestList(t *testing.T) {
	s := newStore(t)
	mk := func(cwd string, created int, entries ...Entry) *File {
		f, err := s.Create(Header{Cwd: cwd, CreatedAt: at(created)})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			if _, err := f.Append(entries...); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		return f
	}
	long := strings.Repeat("é", 100)
	a := mk("/src/a", 0, msg(10, userMsg("  Fix\tthe\n\nflaky   test  ")), msg(11, assistantMsg(0)))
	b := mk("/src/b", 1, msg(30, assistantMsg(0)), msg(31, userMsg(long)), msg(32, assistantMsg(1)), msg(33, resultMsg(0)))
	c := mk("/src/a", 50) // no entries: updated when created
	d := mk("/src/a", 2, msg(20, userMsg("branchy")), msg(21, assistantMsg(0)))
	// d: a second answer to the first message, and a model change: the branch has two
	// messages (and the model entry), not three.
	fd, _, _ := s.OpenSession(d.ID())
	l, _ := s.Read(d.ID())
	fd.Append(Entry{Kind: KindMessage, ParentID: l.Entries[0].ID, Timestamp: at(22), Message: ptr(assistantMsg(0))},
		Entry{Kind: KindModel, Timestamp: at(23), Model: json.RawMessage(`{"id":"m2"}`)})
	fd.Close()

	sums, err := s.List("")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, x := range sums {
		order = append(order, x.ID)
	}
	if want := []string{c.ID(), b.ID(), d.ID(), a.ID()}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v (newest update first)", order, want)
	}
	byID := map[string]Summary{}
	for _, x := range sums {
		byID[x.ID] = x
	}
	checks := []struct {
		f       *File
		cwd     string
		title   string
		count   int
		created time.Time
		updated time.Time
	}{
		{a, "/src/a", "Fix the flaky test", 2, at(0), at(11)},
		{b, "/src/b", strings.Repeat("é", TitleMax), 4, at(1), at(33)},
		{c, "/src/a", "", 0, at(50), at(50)},
		{d, "/src/a", "branchy", 2, at(2), at(23)},
	}
	for _, w := range checks {
		got := byID[w.f.ID()]
		if got.Cwd != w.cwd || got.Title != w.title || got.MessageCount != w.count || !got.CreatedAt.Equal(w.created) || !got.UpdatedAt.Equal(w.updated) {
			t.Errorf("summary %+v; want cwd %s, title %q, %d messages, created %v, updated %v", got, w.cwd, w.title, w.count, w.created, w.updated)
		}
	}
	if !utf8.ValidString(byID[b.ID()].Title) {
		t.Error("the cut title is not valid UTF-8")
	}

	only, _ := s.List("/src/b/../a/")
	if len(only) != 3 || only[0].ID != c.ID() || only[1].ID != d.ID() || only[2].ID != a.ID() {
		t.Errorf("List(/src/a) = %v, want c, d, a", only)
	}
	if none, err := s.List("/src"); err != nil || len(none) != 0 {
		t.Errorf("List of a folder with no sessions: %v, %v", none, err)
	}
}

func TestListCache(t *testing.T) {
	s := newStore(t)
	var files []*File
	for range 3 {
		f := create(t, s, "/w")
		f.Append(msg(1, userMsg("x")))
		files = append(files, f)
	}
	s.List("")
	if s.reads != 3 {
		t.Fatalf("first List read %d files, want 3", s.reads)
	}
	s.List("")
	s.List("/w")
	if s.reads != 3 {
		t.Errorf("List of unchanged files read %d more", s.reads-3)
	}
	files[1].Append(msg(2, assistantMsg(0)))
	sums, _ := s.List("")
	if s.reads != 4 {
		t.Errorf("List after one file changed read %d files, want 1", s.reads-3)
	}
	if sums[0].ID != files[1].ID() || sums[0].MessageCount != 2 {
		t.Errorf("the changed session is listed as %+v, want it first with 2 messages", sums[0])
	}
	// A broken file is read once, reported, and left out; its cache entry goes with it.
	path := writeSession(t, s, "/w", "broken", "not a header\n")
	sums, problems, _ := s.ListWithProblems("")
	_, problems2, _ := s.ListWithProblems("")
	if len(sums) != 3 || len(problems) != 1 || !strings.Contains(problems[0], path) || len(problems2) != 1 || s.reads != 5 {
		t.Errorf("with a broken file: %d sessions, problems %q then %q, %d reads; want 3, the file named twice, 5 reads", len(sums), problems, problems2, s.reads)
	}
	files[0].Close()
	s.Delete(files[0].ID())
	s.List("")
	if _, cached := s.summaries[files[0].Path()]; cached || len(s.summaries) != 3 {
		t.Errorf("the cache keeps %d entries (deleted file cached: %v), want 3", len(s.summaries), cached)
	}
}

func TestTitle(t *testing.T) {
	cases := map[string]string{
		"":                       "",
		" \n\t ":                 "",
		"a  b\n\nc":              "a b c",
		strings.Repeat("x", 81):  strings.Repeat("x", 80),
		strings.Repeat("日", 200): strings.Repeat("日", 80),
	}
	for in, want := range cases {
		if got := Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
	m := llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("look at "), {Type: llm.ContentImage, Data: "AAAA", MimeType: "image/png"}, llm.Text("this")}}
	if got := Title(m.Text()); got != "look at this" {
		t.Errorf("title of text around an image: %q", got)
	}
}

func TestNewID(t *testing.T) {
	const n = 20000
	ids := make([]string, n)
	start := time.Now().UnixMilli()
	for i := range ids {
		ids[i] = NewID()
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if len(id) != IDLen || strings.Trim(id, idDigits) != "" {
			t.Fatalf("id %q: want %d characters of [0-9a-z]", id, IDLen)
		}
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("id %s does not sort after the one made before it, %s", id, ids[i-1])
		}
	}
	// The first 9 characters are the creation time in milliseconds, base 36.
	var ms int64
	for _, c := range ids[0][:timeDigits] {
		ms = ms*36 + int64(strings.IndexRune(idDigits, c))
	}
	if ms < start || ms > time.Now().UnixMilli() {
		t.Errorf("id %s encodes time %d, want between %d and now", ids[0], ms, start)
	}
	// Fixed-width base 36 sorts as the numbers do, across digit boundaries too.
	for _, v := range []uint64{0, 35, 36*36 - 1, uint64(start), halfMax - 1} {
		var x, y [timeDigits]byte
		putBase36(x[:], v)
		putBase36(y[:], v+1)
		if string(x[:]) >= string(y[:]) {
			t.Errorf("base 36 of %d (%s) does not sort before that of %d (%s)", v, x, v+1, y)
		}
	}
}

func TestEntryIDsUniqueInFile(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	batch := make([]Entry, 100)
	for i := range batch {
		batch[i] = msg(i, userMsg("x"))
	}
	seen := map[string]bool{}
	for range 30 {
		ids, err := f.Append(batch...)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if seen[id] || len(id) != entryIDLen || strings.Trim(id, idDigits) != "" {
				t.Fatalf("entry id %q: repeated or not %d characters of [0-9a-z]", id, entryIDLen)
			}
			seen[id] = true
		}
	}
}

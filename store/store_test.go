// This file tests writing and reading session files: round trips, branches, the header, the
// folder layout and modes, damaged files and files that are not files.

package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pid-agent/pid/llm"
)

// fill sets the ids and parents Append gave entries appended one after the other.
func fill(entries []Entry, ids []string, parent string) []Entry {
	out := make([]Entry, len(entries))
	for i, e := range entries {
		e.ID, e.ParentID = ids[i], parent
		parent = ids[i]
		out[i] = e
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	s := newStore(t)
	h := Header{
		Cwd:           "/home/ann/src/shop/",
		CreatedAt:     at(0),
		Model:         json.RawMessage(`{"provider":"anthropic","id":"claude-sonnet-4-5","apiKeyEnv":"WORK_KEY"}`),
		ToolExecution: "parallel",
		Permissions:   json.RawMessage(`{"tools":{"bash":[{"pattern":"go test","decision":"allow"}]}}`),
		ScriptedTools: json.RawMessage(`[{"name":"slow"}]`),
		SystemPrompt:  "You are pid.\nBe brief.",
		Tools:         []string{"read", "edit", "bash"},
		ForkedFrom:    &Fork{SessionID: "0abc", MessageCount: 4},
		Mode:          "auto",
	}
	f, err := s.Create(h)
	if err != nil {
		t.Fatal(err)
	}
	if f.Leaf() != "" {
		t.Errorf("Leaf of a new session = %q, want \"\"", f.Leaf())
	}
	aborted := assistantMsg(0)
	aborted.StopReason, aborted.ErrorMessage = llm.StopAborted, "cancelled by the user"
	batches := [][]Entry{
		{msg(1, userMsg("Why does the checkout test fail?"))},
		{msg(2, assistantMsg(3))},
		{msg(3, resultMsg(0)), msg(3, resultMsg(1)), msg(3, resultMsg(2))}, // one write
		{{Kind: KindModel, Timestamp: at(4), Model: json.RawMessage(`{"provider":"openai","id":"gpt-4.1"}`)}},
		{msg(5, aborted)},
		{{Kind: KindMode, Timestamp: at(5), Mode: "plan"}},
		{{Kind: KindCompaction, Timestamp: at(6), Compaction: &Compaction{Summary: "Looked at the handler.", FirstKeptID: "", TokensBefore: 48000, Reason: "manual"}}},
	}
	var want []Entry
	for _, b := range batches {
		parent := f.Leaf()
		ids, err := f.Append(b...)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != len(b) || f.Leaf() != ids[len(ids)-1] {
			t.Fatalf("Append returned ids %v and leaf %s for %d entries", ids, f.Leaf(), len(b))
		}
		want = append(want, fill(b, ids, parent)...)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	f2, l, err := s.OpenSession(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	wantHeader := h
	wantHeader.ID, wantHeader.Cwd = f.ID(), "/home/ann/src/shop"
	if diff := cmp.Diff(wantHeader, l.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, l.Branch); diff != "" {
		t.Errorf("branch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, l.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if len(l.Problems) != 0 {
		t.Errorf("problems %q, want none", l.Problems)
	}
	if f2.Leaf() != want[len(want)-1].ID {
		t.Errorf("Leaf after OpenSession = %q, want the last entry %q", f2.Leaf(), want[len(want)-1].ID)
	}
	// Appending after a reopen continues the branch.
	ids, err := f2.Append(msg(7, userMsg("and now?")))
	if err != nil {
		t.Fatal(err)
	}
	l2, err := s.Read(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.Branch[len(l2.Branch)-1]; got.ID != ids[0] || got.ParentID != want[len(want)-1].ID || len(l2.Branch) != len(want)+1 {
		t.Errorf("after reopen and append, branch ends with %s (parent %s), length %d; want %s (parent %s), length %d",
			got.ID, got.ParentID, len(l2.Branch), ids[0], want[len(want)-1].ID, len(want)+1)
	}
}

func TestLayoutAndModes(t *testing.T) {
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "state", "pid", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	f := create(t, s, "/home/ann/src/shop")
	folder := filepath.Dir(f.Path())
	if got, want := filepath.Base(folder), WorkspaceFolder("/home/ann/src/shop"); got != want || !strings.HasPrefix(got, "home-ann-src-shop-") {
		t.Errorf("workspace folder %q, want %q starting with home-ann-src-shop-", got, want)
	}
	if filepath.Base(f.Path()) != f.ID()+".jsonl" || len(f.ID()) != IDLen {
		t.Errorf("session file %s for id %s", f.Path(), f.ID())
	}
	for path, want := range map[string]os.FileMode{s.Dir(): 0o700, folder: 0o700, f.Path(): 0o600, filepath.Join(base, "state", "pid"): 0o700} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	data, _ := os.ReadFile(f.Path())
	if !strings.HasPrefix(string(data), `{"type":"session","version":1,"id":"`+f.ID()+`","cwd":"/home/ann/src/shop",`) || strings.Count(string(data), "\n") != 1 {
		t.Errorf("header line %q, want type, version, id and cwd first, one line", data)
	}

	// Workspace folder names are distinct for distinct paths that read alike, and tame.
	names := map[string]string{}
	for _, cwd := range []string{"/a/b", "/a-b", "/a/b/", "/", "/.hidden/x y/ünï", "/" + strings.Repeat("long", 40)} {
		n := WorkspaceFolder(cwd)
		if prev, dup := names[n]; dup && filepath.Clean(prev) != filepath.Clean(cwd) {
			t.Errorf("WorkspaceFolder(%q) = WorkspaceFolder(%q) = %s", cwd, prev, n)
		}
		names[n] = cwd
		if len(n) > 48+9 || strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/ ü") {
			t.Errorf("WorkspaceFolder(%q) = %q: too long, hidden, or with a separator or odd character", cwd, n)
		}
	}
	if len(names) != 5 {
		t.Errorf("%d distinct folder names for 5 distinct workspaces (and /a/b/ = /a/b): %v", len(names), names)
	}
}

func TestCreateRefusesBadHeaders(t *testing.T) {
	s := newStore(t)
	cases := []struct {
		name string
		h    Header
		want string
	}{
		{"relative cwd", Header{Cwd: "src/shop"}, "not an absolute path"},
		{"a key in the model", Header{Cwd: "/w", Model: json.RawMessage(`{"provider":"openai","id":"x","apiKey":"sk-123"}`)}, `"apiKey"`},
		{"a key under another name", Header{Cwd: "/w", Model: json.RawMessage(`{"provider":"openai","API_KEY":"sk-123"}`)}, `"API_KEY"`},
		{"an id with a slash", Header{ID: "../../etc", Cwd: "/w"}, "is not a session id"},
	}
	for _, c := range cases {
		_, err := s.Create(c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Create error %v, want one containing %s", c.name, err, c.want)
		}
	}
	if sums, _ := s.List(""); len(sums) != 0 {
		t.Errorf("refused headers left %d sessions", len(sums))
	}
	f := create(t, s, "/w")
	if _, err := s.Create(Header{ID: f.ID(), Cwd: "/elsewhere"}); err == nil || !strings.Contains(err.Error(), "already has a file") {
		t.Errorf("Create with a taken id: %v, want \"already has a file\"", err)
	}
	if _, err := f.Append(Entry{Kind: KindModel, Model: json.RawMessage(`{"id":"x","token":"t"}`)}); err == nil || !strings.Contains(err.Error(), "never saves keys") {
		t.Errorf("a model entry with a token: %v, want a refusal", err)
	}
}

func TestAppendRefusesBadEntries(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	ids, err := f.Append(msg(1, userMsg("hi")))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		e    Entry
		want string
	}{
		{"no message", Entry{Kind: KindMessage}, "without a message"},
		{"unknown kind", Entry{Kind: "label"}, "unknown entry kind"},
		{"taken id", Entry{Kind: KindMessage, ID: ids[0], Message: ptr(userMsg("x"))}, "already in session"},
		{"bad id", Entry{Kind: KindMessage, ID: "a b", Message: ptr(userMsg("x"))}, "is not 1 to 64"},
		{"unknown parent", Entry{Kind: KindMessage, ParentID: "nope", Message: ptr(userMsg("x"))}, "names no entry"},
		{"bad role", Entry{Kind: KindMessage, Message: &llm.Message{Role: "wizard"}}, "cannot be written"},
		{"bad model", Entry{Kind: KindModel, Model: json.RawMessage(`{`)}, "needs the model config"},
		{"no mode", Entry{Kind: KindMode}, "without its mode"},
	}
	size := fileSize(t, f.Path())
	for _, c := range cases {
		// A bad entry after a good one: the whole batch is refused, nothing written.
		_, err := f.Append(msg(2, userMsg("fine")), c.e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Append error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if got := fileSize(t, f.Path()); got != size || f.Leaf() != ids[0] {
		t.Errorf("after refused batches: size %d (want %d), leaf %s (want %s)", got, size, f.Leaf(), ids[0])
	}
	// Ids given by the caller are kept, and a batch may name its own earlier entries.
	got, err := f.Append(
		Entry{Kind: KindMessage, ID: "q1", Message: ptr(userMsg("a"))},
		Entry{Kind: KindMessage, ID: "q2", ParentID: ids[0], Message: ptr(userMsg("b"))},
		Entry{Kind: KindMessage, ParentID: "q1", Message: ptr(userMsg("c"))},
	)
	if err != nil || got[0] != "q1" || got[1] != "q2" {
		t.Fatalf("Append with given ids = %v, %v", got, err)
	}
	l, _ := s.Read(f.ID())
	parents := map[string]string{}
	for _, e := range l.Entries {
		parents[e.ID] = e.ParentID
	}
	if parents["q1"] != ids[0] || parents["q2"] != ids[0] || parents[got[2]] != "q1" {
		t.Errorf("parents %v: want q1 and q2 under %s, %s under q1", parents, ids[0], got[2])
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestBranches(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	a, _ := f.Append(msg(1, userMsg("first question")), msg(2, assistantMsg(0)))
	// Go back to the first message and answer differently: a second branch.
	b, err := f.Append(Entry{Kind: KindMessage, ParentID: a[0], Timestamp: at(3), Message: ptr(assistantMsg(1))})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Append(msg(4, resultMsg(0)))
	f.Close()
	l, err := s.Read(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Branch {
		got = append(got, e.ID)
	}
	if want := []string{a[0], b[0], c[0]}; !cmp.Equal(got, want) || len(l.Entries) != 4 {
		t.Errorf("branch %v (of %d entries), want %v (of 4)", got, len(l.Entries), want)
	}
}

func TestRawJSONWithNewlinesStaysOneLine(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	m := assistantMsg(0)
	m.Content = append(m.Content, llm.NewToolCall("c1", "write", json.RawMessage("{\n  \"path\": \"a.txt\",\n  \"content\": \"x\\ny\"\n}")))
	r := resultMsg(0)
	r.Details = json.RawMessage("[1,\n2]")
	if _, err := f.Append(msg(1, m), msg(2, r), Entry{Kind: KindModel, Model: json.RawMessage("{\"id\":\n\"m\"}")}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.Path())
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("file has %d lines, want 4 (header and three entries)", n)
	}
	l, err := s.Read(f.ID())
	if err != nil || len(l.Entries) != 3 {
		t.Fatalf("Read: %v, %d entries", err, len(l.Entries))
	}
	var args map[string]string
	json.Unmarshal(l.Entries[0].Message.ToolCalls()[0].Arguments, &args)
	if args["content"] != "x\ny" || args["path"] != "a.txt" {
		t.Errorf("arguments read back as %v", args)
	}
}

func TestZeroTimestampIsNow(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	before := time.Now().Truncate(time.Millisecond)
	f.Append(Entry{Kind: KindMessage, Message: ptr(userMsg("x"))})
	after := time.Now()
	l, _ := s.Read(f.ID())
	if ts := l.Entries[0].Timestamp; ts.Before(before) || ts.After(after) {
		t.Errorf("timestamp %v, want between %v and %v", ts, before, after)
	}
}

func TestAppendTime(t *testing.T) {
	for _, ts := range []time.Time{at(0), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 7, 4, 9, 5, 3, 7_000_000, time.FixedZone("x", -7*3600)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if got, want := string(appendTime(nil, ts)), ts.UTC().Format(timeLayout); got != want {
			t.Errorf("appendTime(%v) = %s, want %s", ts, got, want)
		}
	}
}

// appendRaw adds text at the end of a file.
func appendRaw(t *testing.T, path, text string) {
	t.Helper()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(text); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

func TestTornLastLine(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	f.Append(msg(1, userMsg("one")), msg(2, assistantMsg(1)), msg(3, resultMsg(0)))
	f.Close()
	full := fileSize(t, f.Path())
	appendRaw(t, f.Path(), `{"type":"message","id":"zz12","parentId":"`) // cut mid-line

	l, err := s.Read(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 3 || len(l.Problems) != 1 || !strings.HasPrefix(l.Problems[0], "warning: ") || !strings.Contains(l.Problems[0], "line 5, the last, is incomplete") {
		t.Fatalf("Read of a torn file: %d entries, problems %q; want 3 entries and one warning about line 5", len(l.Entries), l.Problems)
	}
	if fileSize(t, f.Path()) == full {
		t.Fatal("Read changed the file; only OpenSession, holding the lock, may cut it")
	}

	f2, l2, err := s.OpenSession(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(l2.Problems) != 1 || !strings.HasSuffix(l2.Problems[0], "and cut off the file") || fileSize(t, f.Path()) != full {
		t.Errorf("OpenSession: problems %q, size %d; want the warning saying it cut the line off, size %d", l2.Problems, fileSize(t, f.Path()), full)
	}
	ids, _ := f2.Append(msg(4, userMsg("after the crash")))
	f2.Close()
	l3, _ := s.Read(f.ID())
	if len(l3.Problems) != 0 || len(l3.Entries) != 4 || l3.Entries[3].ID != ids[0] {
		t.Errorf("after appending to the cut file: %d entries, problems %q; want 4 and none", len(l3.Entries), l3.Problems)
	}

	// A complete but unreadable last line (zeros after a power loss, say) is a warning too.
	appendRaw(t, f.Path(), "\x00\x00\x00\x00\n")
	l4, _ := s.Read(f.ID())
	if len(l4.Entries) != 4 || len(l4.Problems) != 1 || !strings.HasPrefix(l4.Problems[0], "warning: ") || !strings.Contains(l4.Problems[0], "line 6, the last, is unreadable") {
		t.Errorf("zeros as the last line: %d entries, problems %q", len(l4.Entries), l4.Problems)
	}
}

func TestGarbageInTheMiddle(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	f.Close()
	ts := `"timestamp":"2026-03-01T12:00:00.000Z"`
	user := `{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}`
	lines := []string{
		`{"type":"message","id":"a","parentId":null,` + ts + `,"message":` + user + `}`, // 2
		`this is not JSON`, // 3
		`{"type":"label","id":"lab","parentId":"a",` + ts + `,"label":"v1"}`,                                           // 4: unknown type
		`{"type":"message","id":"b","parentId":"lab",` + ts + `,"message":` + user + `}`,                               // 5: hangs from a
		`{"type":"message","id":"c","parentId":"nope",` + ts + `,"message":` + user + `}`,                              // 6: unknown parent
		`{"type":"message","id":"b","parentId":"a",` + ts + `,"message":` + user + `}`,                                 // 7: duplicate id
		`{"type":"message","id":"d","parentId":"b",` + ts + `,"message":{"role":"wizard"}}`,                            // 8: bad message
		`{"type":"message","id":"e","parentId":"d",` + ts + `,"message":` + user + `}`,                                 // 9: hangs from b
		`{"type":"message","id":"g","parentId":"e",` + ts + `,"message":{"role":"user","content":[{"type":"text","tex`, // 10: damaged
		`{"type":"message","id":"f","parentId":"g",` + ts + `,"message":` + user + `,"mood":"new field"}`,              // 11: hangs from e
	}
	appendRaw(t, f.Path(), strings.Join(lines, "\n")+"\n")
	l, err := s.Read(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Branch {
		got = append(got, e.ID+"<"+e.ParentID)
	}
	if want := []string{"a<", "b<a", "e<b", "f<e"}; !cmp.Equal(got, want) || len(l.Entries) != 4 {
		t.Errorf("branch %v of %d entries, want %v of 4", got, len(l.Entries), want)
	}
	wantProblems := []string{"line 3: not valid JSON", "line 4: unknown entry type \"label\"", "line 6: parentId \"nope\" names no earlier entry",
		"line 7: id \"b\" is used by an earlier entry", "line 8: the message is unreadable", "line 10: not valid JSON"}
	if len(l.Problems) != len(wantProblems) {
		t.Fatalf("problems %q, want %d", l.Problems, len(wantProblems))
	}
	for i, w := range wantProblems {
		if !strings.Contains(l.Problems[i], w) || !strings.Contains(l.Problems[i], f.Path()) || strings.HasPrefix(l.Problems[i], "warning") {
			t.Errorf("problem %d = %q, want it to name the file and say %q", i, l.Problems[i], w)
		}
	}
	// Skipped lines' ids stay taken, and cannot be parents.
	f2, _, err := s.OpenSession(f.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if _, err := f2.Append(Entry{Kind: KindMessage, ID: "lab", Message: ptr(userMsg("x"))}); err == nil {
		t.Error("Append reused the id of a skipped line")
	}
	if _, err := f2.Append(Entry{Kind: KindMessage, ParentID: "d", Message: ptr(userMsg("x"))}); err == nil {
		t.Error("Append accepted a skipped line as parent")
	}
	if f2.Leaf() != "f" {
		t.Errorf("leaf %q, want f", f2.Leaf())
	}
}

// writeSession puts a file with content at the place of session id in cwd's folder.
func writeSession(t *testing.T, s *Store, cwd, id, content string) string {
	t.Helper()
	dir := filepath.Join(s.Dir(), WorkspaceFolder(cwd))
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHeaderProblems(t *testing.T) {
	s := newStore(t)
	cases := []struct {
		id, content, want string
		is                error
	}{
		{"empty", "", "no complete header line", nil},
		{"torn", `{"type":"session","ver`, "no complete header line", nil},
		{"garbage", "hello\n", "header line of", nil},
		{"nottype", `{"type":"message","version":1}` + "\n", "header line of", nil},
		{"noversion", `{"type":"session","id":"noversion"}` + "\n", "no valid version", nil},
		{"newer", `{"type":"session","version":2,"id":"newer"}` + "\n", "format version 2; this pid reads up to 1", ErrNewerVersion},
	}
	for _, c := range cases {
		path := writeSession(t, s, "/w", c.id, c.content)
		_, err := s.Read(c.id)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: Read error %v; want one naming %s and saying %q", c.id, err, path, c.want)
		}
		_, _, err = s.OpenSession(c.id)
		if err == nil {
			t.Errorf("%s: OpenSession succeeded", c.id)
		}
		if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a failed OpenSession left its lock file", c.id)
		}
	}
	// Same version, unknown header fields, a header id unlike the file name: read, reported.
	writeSession(t, s, "/w", "renamed", `{"type":"session","version":1,"id":"original","cwd":"/w","createdAt":"2026-03-01T12:00:00Z","tools":["read"],"colour":"blue"}`+"\n")
	l, err := s.Read("renamed")
	if err != nil || l.Header.ID != "renamed" || len(l.Problems) != 1 || !strings.Contains(l.Problems[0], `says session "original"`) {
		t.Errorf("renamed file: %v, id %q, problems %q", err, l.Header.ID, l.Problems)
	}
}

func TestNotARegularFile(t *testing.T) {
	s := newStore(t)
	fifo := create(t, s, "/w")
	zero := create(t, s, "/w")
	dir := create(t, s, "/w")
	for _, f := range []*File{fifo, zero, dir} {
		f.Close()
		os.Remove(f.Path())
	}
	if err := mkfifo(fifo.Path(), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", zero.Path())
	os.Mkdir(dir.Path(), 0o700)
	for _, f := range []*File{fifo, zero, dir} {
		// A plain open of the FIFO would block for ever; a read of /dev/zero never ends.
		if _, err := s.Read(f.ID()); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Read of %s: %v, want ErrNotRegular", f.Path(), err)
		}
		if _, _, err := s.OpenSession(f.ID()); !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenSession of %s: %v, want ErrNotRegular", f.Path(), err)
		}
	}
	sums, problems, err := s.ListWithProblems("")
	if err != nil || len(sums) != 0 || len(problems) != 3 {
		t.Errorf("List: %d sessions, problems %q, %v; want none and 3 problems", len(sums), problems, err)
	}
}

func TestSizeCap(t *testing.T) {
	defer func(old int64) { maxFileSize = old }(maxFileSize)
	s := newStore(t)
	f := create(t, s, "/w")
	size := fileSize(t, f.Path())
	maxFileSize = size + 500
	if _, err := f.Append(msg(1, userMsg("short"))); err != nil {
		t.Fatal(err)
	}
	size = fileSize(t, f.Path())
	if _, err := f.Append(msg(2, resultMsg(0))); !errors.Is(err, ErrTooLarge) || fileSize(t, f.Path()) != size {
		t.Errorf("Append past the cap: %v, size %d (was %d); want ErrTooLarge and nothing written", err, fileSize(t, f.Path()), size)
	}
	f.Close()
	maxFileSize = size - 1
	if _, err := s.Read(f.ID()); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), f.Path()) {
		t.Errorf("Read of a file over the cap: %v", err)
	}
}

func TestFailedWriteBreaksTheFile(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	// A descriptor that refuses writes, and truncation: what a dying disk looks like.
	ro, err := os.Open(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	rw := f.f
	f.f = ro
	f.mu.Unlock()
	if _, err := f.Append(msg(1, userMsg("x"))); err == nil {
		t.Fatal("Append through a read-only descriptor succeeded")
	}
	f.mu.Lock()
	f.f = rw
	f.mu.Unlock()
	ro.Close()
	if _, err := f.Append(msg(2, userMsg("y"))); err == nil || !strings.Contains(err.Error(), "reopen the session") {
		t.Errorf("Append after a write that could not be undone: %v, want a refusal saying to reopen", err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := f.Append(msg(i, userMsg(fmt.Sprintf("g%d-%d", g, i))), msg(i, resultMsg(i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	f.Close()
	l, err := s.Read(f.ID())
	if err != nil || len(l.Problems) != 0 || len(l.Entries) != 400 || len(l.Branch) != 400 {
		t.Errorf("after concurrent appends: %v, %d entries, %d on the branch, problems %q; want 400, 400, none", err, len(l.Entries), len(l.Branch), l.Problems)
	}
}

func TestClosedFile(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
	if _, err := f.Append(msg(1, userMsg("x"))); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v, want ErrClosed", err)
	}
	if _, err := os.Stat(lockPath(f.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the lock file: %v", err)
	}
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	f := create(t, s, "/w")
	keep := create(t, s, "/w")
	f.Append(msg(1, userMsg("x")))
	if err := s.Delete(f.ID()); !errors.Is(err, ErrLocked) {
		t.Errorf("Delete of an open session: %v, want ErrLocked", err)
	}
	f.Close()
	if err := s.Delete(f.ID()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f.Path(), lockPath(f.Path())} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Delete", p)
		}
	}
	if _, err := s.Read(f.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	for _, id := range []string{f.ID(), "../" + keep.ID(), "*"} {
		if err := s.Delete(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q): %v, want ErrNotFound", id, err)
		}
	}
	if sums, _ := s.List(""); len(sums) != 1 || sums[0].ID != keep.ID() {
		t.Errorf("List after Delete: %v, want only %s", sums, keep.ID())
	}
}

// ReadHeader reads the header alone, and refuses what Read refuses.
func TestReadHeader(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	f, err := s.Create(Header{Cwd: cwd, SystemPrompt: "sp", Tools: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	m := llm.NewUser("hello")
	if _, err := f.Append(Entry{Kind: KindMessage, Message: &m}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h, err := s.ReadHeader(f.ID())
	if err != nil || h.Cwd != cwd || h.SystemPrompt != "sp" || h.ID != f.ID() {
		t.Errorf("ReadHeader = %+v, %v", h, err)
	}
	if _, err := s.ReadHeader("0000000000000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadHeader of an unknown id: %v", err)
	}
}

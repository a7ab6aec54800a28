// Tests of the rewind's checks, its marks, the entries it appends (read back through the
// session file's branch, as a loaded session reads them) and its answer.

package rewind

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

func TestCheck(t *testing.T) {
	cases := []struct{ id, restore, want string }{
		{"c1", "files", ""},
		{"c1", "conversation", ""},
		{"c1", "both", ""},
		{"", "both", "checkpointId is required"},
		{"c1", "", `restore must be "files", "conversation" or "both", not ""`},
		{"c1", "Files", `restore must be "files", "conversation" or "both", not "Files"`},
	}
	for _, tc := range cases {
		if got := Check(tc.id, tc.restore); got != tc.want {
			t.Errorf("Check(%q, %q) = %q, want %q", tc.id, tc.restore, got, tc.want)
		}
	}
	for restore, want := range map[string][2]bool{"files": {true, false}, "conversation": {false, true}, "both": {true, true}} {
		if Files(restore) != want[0] || Conversation(restore) != want[1] {
			t.Errorf("%s: files %v, conversation %v; want %v", restore, Files(restore), Conversation(restore), want)
		}
	}
}

func TestMarks(t *testing.T) {
	var ms Marks
	if got := ms.Of("c1"); got != "" {
		t.Fatalf("the zero Marks has c1 at %q", got)
	}
	ms.Set("c1", "e1")
	loaded := map[string]string{"c0": "e0"}
	ms.Reset(loaded) // a loaded session's marks replace what was there
	if ms.Of("c0") != "e0" || ms.Of("c1") != "" {
		t.Errorf("after Reset: c0 at %q, c1 at %q", ms.Of("c0"), ms.Of("c1"))
	}
	ms.Reset(nil)
	var wg sync.WaitGroup
	for i, id := range []string{"a", "b", "c", "d"} {
		wg.Go(func() { ms.Set(id, strings.Repeat("e", i+1)) })
	}
	wg.Wait()
	if ms.Of("a") != "e" || ms.Of("d") != "eeee" {
		t.Errorf("after concurrent sets: a at %q, d at %q", ms.Of("a"), ms.Of("d"))
	}
}

// The entries a rewind appends make the branch a loaded session reads: the messages after
// the mark are left out, and the marks are found again.
func TestEntries(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	long := strings.Repeat("é", 250)
	mark := MarkEntry("c1", long, "", now)
	if got := mark.Checkpoint.Prompt; got != strings.Repeat("é", 200) {
		t.Errorf("the mark keeps %d characters of the prompt, want 200", len([]rune(got)))
	}
	for _, n := range []int{199, 200, 201} {
		want := min(n, 200)
		if got := len([]rune(MarkEntry("c1", strings.Repeat("x", n), "", now).Checkpoint.Prompt)); got != want {
			t.Errorf("a mark keeps %d characters of a prompt of %d, want %d", got, n, want)
		}
	}
	if !mark.Timestamp.Equal(now) || mark.Timestamp.Location() != time.UTC {
		t.Errorf("the mark's time is %v, want %v in UTC", mark.Timestamp, now)
	}
	if s := MarkEntry("c2", "short", "c1", now).Checkpoint; s.Prompt != "short" || s.Safety != "c1" || s.ID != "c2" {
		t.Errorf("a safety mark is %+v", s)
	}

	// A real session file: two prompts, each after its mark, then a rewind to the second's.
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.Create(store.Header{ID: "s1", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	user := func(text string) store.Entry {
		return store.Entry{Kind: store.KindMessage, Timestamp: now, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(text)}, Timestamp: 1}}
	}
	ids, err := f.Append(MarkEntry("c1", "one", "", now), user("one"), MarkEntry("c2", "two", "", now), user("two"))
	if err != nil {
		t.Fatal(err)
	}
	rw := Entry("c2", ids[2], "both", now)
	if rw.Timestamp.Location() != time.UTC || rw.Rewind.Restore != "both" {
		t.Errorf("the rewind entry is %+v", rw)
	}
	if _, err := f.Append(rw); err != nil {
		t.Fatal(err)
	}
	loaded, err := st.Read("s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := store.Marks(loaded.Entries); got["c1"] != ids[0] || got["c2"] != ids[2] {
		t.Errorf("store.Marks = %v, want c1 at %s, c2 at %s", got, ids[0], ids[2])
	}
	var texts []string
	for _, e := range loaded.Branch {
		if e.Kind == store.KindMessage {
			texts = append(texts, e.Message.Content[0].Text)
		}
	}
	if strings.Join(texts, ",") != "one" {
		t.Errorf("after the rewind to c2 the conversation is %q, want the first prompt only", texts)
	}
	if id, prompt := store.LastPromptCheckpoint(loaded.Branch); id != "c1" || prompt != "one" {
		t.Errorf("after the rewind to c2 the last prompt's checkpoint is %q (%q), want c1", id, prompt)
	}
}

func TestPromptOfAndResult(t *testing.T) {
	list := []checkpoint.Info{{ID: "c1", Prompt: "one"}, {ID: "s1", Prompt: "Rewind to c1"}}
	if got := PromptOf(list, "s1"); got != "Rewind to c1" {
		t.Errorf("PromptOf(s1) = %q", got)
	}
	if got := PromptOf(list, "c9"); got != "" {
		t.Errorf("PromptOf(c9) = %q, want none", got)
	}
	res := checkpoint.Result{Restored: []string{"a"}, Removed: []string{"b"}, Skipped: []checkpoint.Skipped{{Path: "c", Reason: "changed"}}}
	b, err := json.Marshal(ResultOf(res, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"restored":["a"],"removed":["b"],"skipped":[{"path":"c","reason":"changed"}],"safetyCheckpointId":"s1"}`
	if string(b) != want {
		t.Errorf("the answer is %s, want %s", b, want)
	}
}

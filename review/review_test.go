// This file tests the Tracker on real files recorded by a real checkpoint (package
// checkpoint) around real writes and a real sh: what it lists, sends, keeps, undoes and
// saves, what it refuses while a tool runs, and the files it hands each call's end.

package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a Tracker over a real workspace's checkpoints, with what its callbacks got.
type fixture struct {
	dir string
	rec *checkpoint.Session
	t   *Tracker

	// mu guards the fields below it (the callbacks may run on any goroutine).
	mu    sync.Mutex
	sent  []event.ChangesUpdate
	saved []store.Review
	marks [][3]string
}

// numbered returns lines "l1\n" to "ln\n", with the 1-based lines in repl replaced.
func numbered(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r)
			continue
		}
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

// newFixture makes a workspace holding files, its checkpoints, and a Tracker of session
// "s1" on them; all of it goes when the test ends.
func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "ws")
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tools.NewWorkspace(dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	st, err := checkpoint.Open(filepath.Join(root, "checkpoints"), 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Session("s1", ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	f := &fixture{dir: dir, rec: rec}
	f.t = New(Config{ID: "s1", Rec: rec,
		Emit: func(ev event.ChangesUpdate) { f.mu.Lock(); f.sent = append(f.sent, ev); f.mu.Unlock() },
		Save: func(r store.Review) { f.mu.Lock(); f.saved = append(f.saved, r); f.mu.Unlock() },
		Mark: func(id, prompt, of string) {
			f.mu.Lock()
			f.marks = append(f.marks, [3]string{id, prompt, of})
			f.mu.Unlock()
		},
	}, nil, nil)
	return f
}

// write changes the file name as the session's wrapped write tool does: inside WritingBy
// and Running.
func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(f.dir, name)
	defer f.t.Running(p)()
	defer f.rec.WritingBy(p, "write")()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A prompt's edit in two places: the update after the tool lists the file once (not again
// when nothing changed), List cuts it into two hunks by "write", Keep marks one kept and
// saves that, Undo takes the other back on disk in a safety checkpoint it marks, saves the
// undone lines, and the next prompt's Start returns the model's note about them, once.
func TestListKeepUndo(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": numbered(20, nil)})
	if err := f.rec.Begin("cp1", "change a"); err != nil {
		t.Fatal(err)
	}
	if note := f.t.Start("cp1"); note != "" {
		t.Fatalf("Start of the first prompt gave note %q, want none", note)
	}
	f.write(t, "a.txt", numbered(20, map[int]string{2: "two\n", 18: "eighteen\n"}))
	f.t.AfterTool()
	f.t.AfterTool() // nothing changed since: no second update
	f.rec.End()
	p := filepath.Join(f.dir, "a.txt")
	want := []event.ChangesUpdate{{CheckpointID: "cp1", Files: []event.ChangedFile{{Path: p, Change: "modified", Added: 2, Removed: 2, Pending: 2}}}}
	if !slices.EqualFunc(f.sent, want, func(a, b event.ChangesUpdate) bool {
		return a.CheckpointID == b.CheckpointID && slices.Equal(a.Files, b.Files)
	}) {
		t.Fatalf("updates after the tool = %+v, want %+v", f.sent, want)
	}

	got, err := f.t.List("")
	if err != nil {
		t.Fatal(err)
	}
	if got.CheckpointID != "cp1" || len(got.Files) != 1 || len(got.Files[0].Hunks) != 2 || !slices.Equal(got.Files[0].By, []string{"write"}) {
		t.Fatalf("List = %+v, want cp1's a.txt in two hunks by write", got)
	}
	h1, h2 := got.Files[0].Hunks[0].ID, got.Files[0].Hunks[1].ID

	kept, err := f.t.Keep("cp1", p, []string{h1})
	if err != nil || !slices.Equal(kept.Kept, []string{h1}) {
		t.Fatalf("Keep = %+v, %v; want %s kept", kept, err, h1)
	}
	if len(f.saved) != 1 || !slices.Equal(f.saved[0].Kept, []string{h1}) || f.saved[0].Path != p {
		t.Fatalf("saved after Keep = %+v, want the kept hunk of %s", f.saved, p)
	}
	f.t.AfterTool() // no change since Keep's update: none more
	if len(f.sent) != 2 {
		t.Fatalf("updates after Keep and a tool that changed nothing = %+v, want Keep's only", f.sent)
	}
	got, _ = f.t.List("cp1")
	if st := got.Files[0].Hunks[0].State; st != changes.Kept {
		t.Fatalf("hunk %s is %s after Keep, want kept", h1, st)
	}

	undone, err := f.t.Undo(context.Background(), "cp1", p, []string{h2}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(undone.Undone, []string{h2}) || len(undone.Skipped) != 0 || undone.SafetyCheckpointID == "" {
		t.Fatalf("Undo = %+v, want %s undone in a safety checkpoint", undone, h2)
	}
	if now, want := f.read(t, "a.txt"), numbered(20, map[int]string{2: "two\n"}); now != want {
		t.Fatalf("a.txt after the undo:\n%s\nwant:\n%s", now, want)
	}
	if len(f.marks) != 1 || f.marks[0][0] != undone.SafetyCheckpointID || f.marks[0][2] != "cp1" {
		t.Fatalf("marks = %v, want the safety checkpoint %s of cp1", f.marks, undone.SafetyCheckpointID)
	}
	last := f.saved[len(f.saved)-1]
	if len(last.Undone) != 1 || last.Undone[0].Path != p || last.Undone[0].Kind != changes.UndoneLines {
		t.Fatalf("the undo saved %+v, want the undone lines of %s", last, p)
	}
	if n := len(f.sent); n != 3 || f.sent[n-1].Files[0].Pending != 0 {
		t.Fatalf("updates after Keep and Undo = %+v, want two more, the last with nothing pending", f.sent)
	}

	note := f.t.Start("cp2")
	if !strings.HasPrefix(note, changes.NotePrefix) || !strings.Contains(note, p) {
		t.Fatalf("the next prompt's note = %q, want the undone change of %s", note, p)
	}
	if again := f.t.Start("cp3"); again != "" {
		t.Fatalf("a second Start gave note %q again", again)
	}
}

// While a tool changes the file (or any bash command runs), an undo fails, saying which,
// and changes nothing; once it ended, the undo goes through.
func TestUndoWaitsForRunningTools(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": numbered(5, nil)})
	if err := f.rec.Begin("cp1", "p"); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", numbered(5, map[int]string{3: "three\n"}))
	f.rec.End()
	p := filepath.Join(f.dir, "a.txt")
	for _, c := range []struct{ path, want string }{{p, "a tool of the running prompt is changing"}, {"", "a bash command"}} {
		done := f.t.Running(c.path)
		_, err := f.t.Undo(context.Background(), "cp1", p, nil, false)
		done()
		if err == nil || IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("Undo while %q runs: %v, want a failure saying %q", c.path, err, c.want)
		}
		if now := f.read(t, "a.txt"); now != numbered(5, map[int]string{3: "three\n"}) {
			t.Fatalf("the refused undo changed a.txt:\n%s", now)
		}
	}
	if _, err := f.t.Undo(context.Background(), "cp1", p, nil, false); err != nil {
		t.Fatal(err)
	}
	if now := f.read(t, "a.txt"); now != numbered(5, nil) {
		t.Fatalf("a.txt after the undo:\n%s", now)
	}
}

// An unknown checkpoint, and a path the checkpoint did not change, are the request's fault,
// and the messages name them.
func TestInvalidRequests(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	if err := f.rec.Begin("cp1", "p"); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "A\n")
	f.rec.End()
	if _, err := f.t.List("nope"); !IsInvalid(err) || err.Error() != `session s1 has no checkpoint "nope"` {
		t.Fatalf("List(nope) = %v", err)
	}
	if _, err := f.t.Checkpoint("nope"); !IsInvalid(err) {
		t.Fatalf("Checkpoint(nope) = %v, want invalid", err)
	}
	if cp, err := f.t.Checkpoint(""); cp != "cp1" || err != nil {
		t.Fatalf(`Checkpoint("") = %q, %v; want the latest, cp1`, cp, err)
	}
	b := filepath.Join(f.dir, "b.txt")
	if _, err := f.t.Undo(context.Background(), "cp1", b, nil, false); !IsInvalid(err) || !strings.Contains(err.Error(), "did not change "+b) {
		t.Fatalf("Undo of an unchanged path = %v", err)
	}
}

// The files a bash call changed go to its end with their texts, and to the subagent's
// parent's task call too; each end takes them once.
func TestCallFiles(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "old\n", "gone.txt": "x\n"})
	if err := f.rec.Begin("cp1", "p"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snap := f.rec.BeforeBashBy(ctx, "bash")
	cmd := exec.Command("sh", "-c", "echo new > a.txt && rm gone.txt")
	cmd.Dir = f.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	changed := f.rec.AfterBash(ctx, snap)
	f.rec.End()
	f.t.NoteBash(f.rec, CallKey("child", "c1"), CallKey("parent", "task1"), changed)
	for _, key := range []string{CallKey("child", "c1"), CallKey("parent", "task1")} {
		got := f.t.TakeCallFiles(key)
		byPath := map[string]event.FileText{}
		for _, ft := range got {
			byPath[filepath.Base(ft.Path)] = ft
		}
		a, gone := byPath["a.txt"], byPath["gone.txt"]
		if len(got) != 2 || !a.Known || a.Old == nil || *a.Old != "old\n" || a.New == nil || *a.New != "new\n" || !gone.Known || gone.New != nil {
			t.Fatalf("files of %s = %+v, want a.txt old->new and gone.txt removed", key, got)
		}
		if again := f.t.TakeCallFiles(key); again != nil {
			t.Fatalf("a second take of %s gave %+v", key, again)
		}
	}
}

// A loaded session's review: Entries keeps every review entry and the undone changes after
// the last prompt's mark only (a safety checkpoint's mark does not reset them); New replays
// what was kept, so List shows it kept, and Start returns the note of the undone ones.
func TestEntriesRestore(t *testing.T) {
	u0 := changes.Undone{Path: "/w/gone.txt", Kind: changes.UndoneDeleted}
	u1 := changes.Undone{Path: "/w/old.txt", Kind: changes.UndoneLines, From: 1, To: 2}
	u2 := changes.Undone{Path: "/w/new.txt", Kind: changes.UndoneAdded}
	entries := []store.Entry{
		{Kind: store.KindReview, Review: &store.Review{Entry: changes.Entry{CheckpointID: "cp0", Path: "/w/gone.txt"}, Undone: []changes.Undone{u0}}},
		{Kind: store.KindCheckpoint, Checkpoint: &store.Checkpoint{ID: "cp1"}},
		{Kind: store.KindMessage, Message: &llm.Message{Role: llm.RoleUser}},
		{Kind: store.KindReview, Review: &store.Review{Entry: changes.Entry{CheckpointID: "cp1", Path: "/w/old.txt"}, Undone: []changes.Undone{u1}}},
		{Kind: store.KindCheckpoint, Checkpoint: &store.Checkpoint{ID: "safe", Safety: "cp1"}},
		{Kind: store.KindReview, Review: &store.Review{Entry: changes.Entry{CheckpointID: "cp1", Path: "/w/new.txt"}, Undone: []changes.Undone{u2}}},
	}
	reviews, undone := Entries(entries)
	if len(reviews) != 3 || !slices.Equal(undone, []changes.Undone{u1, u2}) {
		t.Fatalf("Entries = %d reviews, undone %+v; want 3 and the two after cp1's mark", len(reviews), undone)
	}

	f := newFixture(t, map[string]string{"a.txt": numbered(5, nil)})
	if err := f.rec.Begin("cp1", "p"); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", numbered(5, map[int]string{1: "one\n"}))
	f.rec.End()
	first, _ := f.t.List("cp1")
	p := filepath.Join(f.dir, "a.txt")
	id := first.Files[0].Hunks[0].ID
	loaded := New(Config{ID: "s1", Rec: f.rec}, []store.Review{{Entry: changes.Entry{CheckpointID: "cp1", Path: p, Kept: []string{id}}}}, undone)
	got, err := loaded.List("cp1")
	if err != nil || got.Files[0].Hunks[0].State != changes.Kept {
		t.Fatalf("the loaded review lists %+v, %v; want hunk %s kept", got, err, id)
	}
	if note := loaded.Start(""); !strings.Contains(note, "/w/new.txt") {
		t.Fatalf("the loaded session's first note = %q, want the undone /w/new.txt", note)
	}
}

// WithNote puts the note before the first user message's content, or as a user message of
// its own; no note leaves the prompts as they are.
func TestWithNote(t *testing.T) {
	prompts := []llm.Message{{Role: llm.RoleAssistant}, llm.NewUser("do it")}
	got := WithNote(prompts, "NOTE")
	if len(got) != 2 || len(got[1].Content) != 2 || got[1].Content[0].Text != "NOTE" || got[1].Content[1].Text != "do it" {
		t.Fatalf("WithNote = %+v", got)
	}
	if len(prompts[1].Content) != 1 {
		t.Fatal("WithNote changed its input")
	}
	if got := WithNote(nil, "NOTE"); len(got) != 1 || got[0].Role != llm.RoleUser {
		t.Fatalf("WithNote without a user message = %+v", got)
	}
	if got := WithNote(prompts, ""); len(got) != 2 || len(got[1].Content) != 1 {
		t.Fatalf("an empty note changed the prompts: %+v", got)
	}
}

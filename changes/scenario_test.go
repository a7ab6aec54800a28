// This file plays the scenario on real files, recorded by a real checkpoint (package
// checkpoint) around real writes and a real sh: a prompt that edits one file in two places,
// writes a new one, and runs a command that changes a third and deletes a fourth; then the
// review of its changes, hunk by hunk, done as the session does it (session/changes.go).

package changes_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// lines returns "PREFIX1\n" to "PREFIXn\n", with the lines at the 1-based places in repl
// replaced.
func lines(prefix string, n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r)
			continue
		}
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

// journalBefores returns, for checkpoint cp of session id in store st, each path's state
// before the prompt: its content (nil when there was no file) and mode. It reads the
// journal and the blobs as they lie on disk, independently of checkpoint.Session.Befores
// (which session/changes.go uses), so that the two read the same journal alike.
func journalBefores(t *testing.T, st *checkpoint.Store, id, cp string) map[string]changes.Side {
	t.Helper()
	f, err := os.Open(filepath.Join(st.Dir(), "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]changes.Side{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			T, CP, Path string
			State       *checkpoint.State
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.T != "before" || r.CP != cp {
			continue
		}
		if _, seen := out[r.Path]; seen {
			continue
		}
		switch r.State.Kind {
		case "none":
			out[r.Path] = changes.Side{}
		case "file":
			data, err := os.ReadFile(filepath.Join(st.Dir(), "blobs", r.State.Hash[:2], r.State.Hash[2:]))
			if err != nil {
				t.Fatal(err)
			}
			out[r.Path] = changes.Side{Data: data, Mode: fs.FileMode(r.State.Mode)}
		default:
			t.Fatalf("%s: a %s before the prompt", r.Path, r.State.Kind)
		}
	}
	return out
}

// onDisk returns the file at p as it is now.
func onDisk(t *testing.T, p string) changes.Side {
	t.Helper()
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return changes.Side{}
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return changes.Side{Data: data, Mode: fi.Mode().Perm()}
}

// do does to the file at p what an undo says, inside Writing of the open checkpoint (the
// undo's safety checkpoint), as the wiring will.
func do(t *testing.T, rec *checkpoint.Session, p string, res changes.UndoResult) {
	t.Helper()
	done := rec.Writing(p)
	defer done()
	switch {
	case res.Remove:
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	case res.Write:
		mode := res.Mode
		if !res.Create {
			mode = onDisk(t, p).Mode
		}
		if err := os.WriteFile(p, res.Data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	case res.Mode != 0:
		if err := os.Chmod(p, res.Mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScenario(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	one, two, three, four := filepath.Join(ws, "one.go"), filepath.Join(ws, "two.go"), filepath.Join(ws, "three.txt"), filepath.Join(ws, "four.sh")
	oneBefore := lines("one ", 40, nil)
	fourBefore := "#!/bin/sh\necho four\n"
	for p, content := range map[string]string{one: oneBefore, three: lines("three ", 20, nil), four: fourBefore} {
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(four, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := tools.NewWorkspace(ws, []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st, err := checkpoint.Open(filepath.Join(dir, "checkpoints"), 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Session("s1", w)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()

	// The prompt: edit (two places), write (a new file), bash (a change and a deletion). by
	// records which tool changed each path, as the wiring will have the checkpoint record it.
	if err := rec.Begin("cp1", "change things"); err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	tool := func(name, p, content string) {
		done := rec.Writing(p)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		done()
		by[p] = append(by[p], changes.Changer(name, false))
	}
	oneAfter := lines("one ", 40, map[int]string{5: "five, edited\n", 30: "one 30\nthirty and a half\n"})
	tool("edit", one, oneAfter)
	tool("write", two, "package two\n\nfunc Two() {}\n")
	ctx := context.Background()
	snap := rec.BeforeBash(ctx)
	cmd := exec.Command("sh", "-c", "sed -i 's/^three 10$/ten, by sed/' three.txt && rm four.sh")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	rec.AfterBash(ctx, snap)
	by[three] = append(by[three], "bash")
	by[four] = append(by[four], "bash")
	rec.End()

	// changes/list: the checkpoint's files, each compared with what it was before.
	befores := journalBefores(t, st, "s1", "cp1")
	var infos []checkpoint.Info
	for _, in := range rec.List() {
		if in.ID == "cp1" {
			infos = append(infos, in)
		}
	}
	list := func() map[string]changes.File {
		out := map[string]changes.File{}
		for _, fc := range infos[0].Files {
			f := changes.Compare(fc.Path, befores[fc.Path], onDisk(t, fc.Path))
			f.By = changes.By(by[fc.Path]...)
			if f.Changed() {
				out[fc.Path] = f
			}
		}
		return out
	}
	files := list()
	type summary struct {
		change string
		hunks  int
		by     []string
	}
	got := map[string]summary{}
	for p, f := range files {
		got[p] = summary{f.Change, len(f.Hunks), f.By}
		if want := infos[0].Files[slices.IndexFunc(infos[0].Files, func(fc checkpoint.FileChange) bool { return fc.Path == p })].Change; want != f.Change {
			t.Errorf("%s: %s, the checkpoint says %s", p, f.Change, want)
		}
	}
	want := map[string]summary{
		one:   {"modified", 2, []string{"edit"}},
		two:   {"added", 1, []string{"write"}},
		three: {"modified", 1, []string{"bash"}},
		four:  {"deleted", 1, []string{"bash"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("list:\n got %v\nwant %v", got, want)
	}
	h := files[one].Hunks
	if h[0].Header != "@@ -2,7 +2,7 @@" || h[1].Header != "@@ -28,6 +28,7 @@" {
		t.Errorf("one.go's hunks: %q, %q", h[0].Header, h[1].Header)
	}

	// Each undo first opens a safety checkpoint, and does what Undo says inside it.
	var undone []changes.Undone
	undo := func(safety, p string, ids []string, force bool) changes.UndoResult {
		t.Helper()
		res := changes.Undo(p, befores[p], onDisk(t, p), ids, force)
		if len(res.Undone) > 0 {
			if err := rec.Begin(safety, "Before undoing changes of: change things"); err != nil {
				t.Fatal(err)
			}
			do(t, rec, p, res)
			rec.End()
		}
		undone = append(undone, res.Lines...)
		return res
	}

	// Undo of one hunk of one.go: the other hunk stays, with its id.
	res := undo("u1", one, []string{h[0].ID}, false)
	if !slices.Equal(res.Undone, []string{h[0].ID}) {
		t.Fatalf("undo: %+v", res)
	}
	if after := list()[one]; len(after.Hunks) != 1 || after.Hunks[0] != h[1] {
		t.Errorf("one.go after undoing its first hunk: %+v, want %+v", after.Hunks, h[1])
	}
	if data, _ := os.ReadFile(one); string(data) != lines("one ", 40, map[int]string{30: "one 30\nthirty and a half\n"}) {
		t.Errorf("one.go: %q", data)
	}

	// Undo of the added file: removed.
	if res := undo("u2", two, nil, false); !res.Remove {
		t.Errorf("undo of two.go: %+v", res)
	}
	if _, err := os.Lstat(two); !os.IsNotExist(err) {
		t.Errorf("two.go is still there: %v", err)
	}
	// Undo of the deleted file: its bytes and mode back.
	undo("u3", four, nil, false)
	if s := onDisk(t, four); string(s.Data) != fourBefore || s.Mode != 0o755 {
		t.Errorf("four.sh: %q, mode %v", s.Data, s.Mode)
	}
	files = list()
	if _, ok := files[two]; ok {
		t.Error("two.go still listed")
	}
	if _, ok := files[four]; ok {
		t.Error("four.sh still listed")
	}

	// A person's edit inside the hunk left, after the list: skipped, then undone with force.
	if err := os.WriteFile(one, []byte(lines("one ", 40, map[int]string{30: "one 30\nthirty and a half, said the person\n"})), 0o644); err != nil {
		t.Fatal(err)
	}
	res = undo("u4", one, []string{h[1].ID}, false)
	if len(res.Undone) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Reason != changes.ReasonChanged {
		t.Errorf("undo after the person's edit: %+v", res)
	}
	res = undo("u4", one, []string{h[1].ID}, true)
	if !slices.Equal(res.Undone, []string{h[1].ID}) {
		t.Errorf("forced undo: %+v", res)
	}
	if data, _ := os.ReadFile(one); string(data) != oneBefore {
		t.Errorf("one.go after the forced undo: %q", data)
	}

	// The safety checkpoint of an undo takes it back: rewinding to u3 deletes four.sh again,
	// and takes back the undo after it too (one.go as the person left it before u4).
	if _, err := rec.Rewind("u3", "r1", true, true, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(four); !os.IsNotExist(err) {
		t.Errorf("four.sh after rewinding its undo: %v", err)
	}
	if data, _ := os.ReadFile(one); string(data) != lines("one ", 40, map[int]string{30: "one 30\nthirty and a half, said the person\n"}) {
		t.Errorf("one.go after the rewind: %q", data)
	}

	// What the model is told at its next prompt.
	note := changes.Note(undone)
	for _, part := range []string{
		changes.NotePrefix + one + " line 5, ",
		two + " (a file you made: it is removed)",
		four + " (a file you deleted: it is back)",
		one + " line 31.",
	} {
		if !strings.Contains(note, part) {
			t.Errorf("the note %q lacks %q", note, part)
		}
	}
}

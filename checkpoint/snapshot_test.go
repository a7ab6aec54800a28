package checkpoint

// The snapshots' fast path: with the stat cache warm, a snapshot that finds nothing changed
// hands back the map it started from, and one that finds a change or a file gone makes a
// new one. Each case must still record exactly what the command did.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// changesOf returns checkpoint id's files as "change path" lines relative to dir, sorted.
func changesOf(t *testing.T, s *Session, id, dir string) []string {
	t.Helper()
	for _, c := range s.List() {
		if c.ID != id {
			continue
		}
		var out []string
		for _, f := range c.Files {
			rel, err := filepath.Rel(dir, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f.Change+" "+filepath.ToSlash(rel))
		}
		slices.Sort(out)
		return out
	}
	t.Fatalf("no checkpoint %s", id)
	return nil
}

func TestWarmSnapshotsRecordEachKindOfChange(t *testing.T) {
	ws, w := newWorkspace(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", "sub/d.txt": "d\n"})
	s := openSession(t, newStore(t, 0), "s1", w)
	steps := []struct {
		script string
		want   []string
	}{
		{"true", nil},
		{"true", nil}, // the cache is warm from here on
		{"rm sub/d.txt", []string{"deleted sub/d.txt"}},
		{"true", nil},
		{"printf A > a.txt", []string{"modified a.txt"}},
		{"echo e > sub/e.txt", []string{"added sub/e.txt"}},
		{"rm b.txt && echo f > f.txt", []string{"added f.txt", "deleted b.txt"}},
		{"true", nil},
	}
	for i, st := range steps {
		id := string(rune('a' + i))
		if err := s.Begin(id, st.script); err != nil {
			t.Fatal(err)
		}
		runBash(t, s, ws, st.script)
		s.End()
		if got := changesOf(t, s, id, ws); !slices.Equal(got, st.want) {
			t.Errorf("step %d (%s): checkpoint lists %q, want %q", i, st.script, got, st.want)
		}
	}
}

// With a workspace folder inside another, each file is seen twice: a file deleted must
// still be found gone.
func TestWarmSnapshotOfNestedFoldersFindsADeletion(t *testing.T) {
	_, w0 := newWorkspace(t, map[string]string{"top.txt": "t\n", "inner/x.txt": "x\n", "inner/y.txt": "y\n"})
	top := w0.Folders()[0]
	w := openWorkspace(t, top, filepath.Join(top, "inner"))
	s := openSession(t, newStore(t, 0), "s1", w)
	for i, script := range []string{"true", "true", "rm inner/y.txt"} {
		id := string(rune('a' + i))
		if err := s.Begin(id, script); err != nil {
			t.Fatal(err)
		}
		runBash(t, s, top, script)
		s.End()
	}
	if got, want := changesOf(t, s, "c", top), []string{"deleted inner/y.txt"}; !slices.Equal(got, want) {
		t.Errorf("checkpoint lists %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(top, "inner", "y.txt")); !os.IsNotExist(err) {
		t.Fatalf("y.txt still there: %v", err)
	}
}

// A workspace with more files than a snapshot keeps track of gets no snapshot: the
// checkpoint says why, instead of pid's memory growing with the workspace.
func TestSnapshotRefusesTooManyFiles(t *testing.T) {
	old := MaxSnapshotFiles
	MaxSnapshotFiles = 3
	t.Cleanup(func() { MaxSnapshotFiles = old })
	ws, w := newWorkspace(t, map[string]string{"a": "a", "b": "b", "c": "c", "d": "d"})
	s := openSession(t, newStore(t, 0), "s1", w)
	if err := s.Begin("one", "p"); err != nil {
		t.Fatal(err)
	}
	runBash(t, s, ws, "rm a")
	s.End()
	info := s.List()[0]
	if !info.Incomplete || !strings.Contains(info.Reason, "more than 3 files") {
		t.Errorf("checkpoint: incomplete %v, reason %q", info.Incomplete, info.Reason)
	}
}

// Tests of Recorder.Wrap on a real checkpoint store and a real workspace: what a wrapped write
// or bash changes is kept (a rewind takes it back), by whom, a subagent's conflicting write is
// refused before it runs, and what Wrap leaves alone.

package rewind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace"
)

// TestMain checks that no goroutine of the checkpoints the tests open outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bench is a workspace holding a.txt ("old"), a checkpoint store on it, and a Recorder whose
// functions note what they were asked.
type bench struct {
	dir string
	rec *checkpoint.Session
	r   Recorder

	mu       sync.Mutex
	running  []string // "+path" when marked running, "-path" when done
	resolved []string
	bash     map[string][]string // call id -> the paths NoteBash got
}

func newBench(t *testing.T, child bool, conflict error) *bench {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	st, err := checkpoint.Open(filepath.Join(t.TempDir(), "checkpoints"), 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Session("s1", ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	b := &bench{dir: dir, rec: rec, bash: map[string][]string{}}
	b.r = Recorder{
		Rec:   func() *checkpoint.Session { return b.rec },
		Child: func() bool { return child },
		Resolve: func(p string) (string, error) {
			b.note(&b.resolved, p)
			return ws.Resolve(p)
		},
		Conflict: func(string) error { return conflict },
		Running: func(p string) func() {
			b.note(&b.running, "+"+p)
			return func() { b.note(&b.running, "-"+p) }
		},
		NoteBash: func(_ *checkpoint.Session, id string, changed []checkpoint.Changed) {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, c := range changed {
				b.bash[id] = append(b.bash[id], c.Path)
			}
		},
	}
	return b
}

func (b *bench) note(to *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*to = append(*to, s)
}

// tool is a tool named name that writes text to the workspace's file, counting its runs.
func (b *bench) tool(name, file, text string, runs *int) toolexec.Tool {
	return toolexec.Tool{Name: name, Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		*runs++
		return toolexec.TextResult("done"), os.WriteFile(filepath.Join(b.dir, file), []byte(text), 0o644)
	}}
}

func call(id, args string) toolexec.Call {
	return toolexec.Call{ID: id, Args: []byte(args)}
}

// read returns the workspace file's content.
func (b *bench) read(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, file))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

func TestWrapKeepsAWrite(t *testing.T) {
	for _, child := range []bool{false, true} {
		b := newBench(t, child, nil)
		if err := b.rec.Begin("c1", "change a"); err != nil {
			t.Fatal(err)
		}
		runs := 0
		w := b.r.Wrap(b.tool("write", "a.txt", "new", &runs))
		if _, err := w.Execute(context.Background(), call("t1", `{"path":"a.txt","content":"new"}`), nil); err != nil || runs != 1 {
			t.Fatalf("the wrapped write: %v, %d runs", err, runs)
		}
		b.rec.End()
		if want := []string{"+" + filepath.Join(b.dir, "a.txt"), "-" + filepath.Join(b.dir, "a.txt")}; !slices.Equal(b.running, want) {
			t.Errorf("running marks %q, want %q", b.running, want)
		}
		befores, err := b.rec.Befores("c1")
		if err != nil {
			t.Fatal(err)
		}
		wantBy := "write"
		if child {
			wantBy = "task" // a subagent's changes are its task call's
		}
		if len(befores) != 1 || string(befores[0].Data) != "old" || !slices.Equal(befores[0].By, []string{wantBy}) {
			t.Fatalf("child %v: the checkpoint kept %+v, want a.txt as it was (old), by %s", child, befores, wantBy)
		}
		if _, err := b.rec.Rewind("c1", "s1", true, false, nil); err != nil {
			t.Fatal(err)
		}
		if got := b.read(t, "a.txt"); got != "old" {
			t.Errorf("child %v: after the rewind a.txt holds %q, want old", child, got)
		}
	}
}

func TestWrapRefusesAConflict(t *testing.T) {
	refusal := errors.New("another task is changing a.txt")
	b := newBench(t, true, refusal)
	runs := 0
	w := b.r.Wrap(b.tool("edit", "a.txt", "new", &runs))
	if _, err := w.Execute(context.Background(), call("t1", `{"path":"a.txt"}`), nil); err != refusal || runs != 0 {
		t.Errorf("a conflicting edit: %v after %d runs, want the refusal and no run", err, runs)
	}
	// A subagent in its own worktree records nothing, but is still asked about conflicts.
	b.rec = nil
	if _, err := w.Execute(context.Background(), call("t2", `{"path":"a.txt"}`), nil); err != refusal || runs != 0 {
		t.Errorf("a conflicting edit without checkpoints: %v after %d runs", err, runs)
	}
}

func TestWrapLeavesAlone(t *testing.T) {
	b := newBench(t, false, errors.New("never"))
	runs := 0
	// Without checkpoints, and not a subagent: the write runs as it is, its path unread.
	b.rec = nil
	w := b.r.Wrap(b.tool("write", "a.txt", "new", &runs))
	if _, err := w.Execute(context.Background(), call("t1", `{"path":"a.txt"}`), nil); err != nil || runs != 1 || len(b.resolved) != 0 {
		t.Errorf("a write without checkpoints: %v, %d runs, resolved %q", err, runs, b.resolved)
	}
	// A tool that changes no file is not wrapped, whatever its arguments.
	r := b.r.Wrap(b.tool("read", "a.txt", "x", &runs))
	if _, err := r.Execute(context.Background(), call("t2", `{"path":"a.txt"}`), nil); err != nil || runs != 2 || len(b.resolved) != 0 || len(b.running) != 0 {
		t.Errorf("a read: %v, %d runs, resolved %q, running %q", err, runs, b.resolved, b.running)
	}
}

func TestWrapKeepsABash(t *testing.T) {
	b := newBench(t, false, nil)
	if err := b.rec.Begin("c1", "run"); err != nil {
		t.Fatal(err)
	}
	runs := 0
	w := b.r.Wrap(b.tool("bash", "b.txt", "made", &runs))
	if _, err := w.Execute(context.Background(), call("t1", `{"command":"echo made > b.txt"}`), nil); err != nil || runs != 1 {
		t.Fatalf("the wrapped bash: %v, %d runs", err, runs)
	}
	b.rec.End()
	if !slices.Equal(b.running, []string{"+", "-"}) {
		t.Errorf("running marks %q, want the workspace's (\"\")", b.running)
	}
	if got := b.bash["t1"]; !slices.Equal(got, []string{filepath.Join(b.dir, "b.txt")}) {
		t.Errorf("NoteBash got %q for t1, want b.txt", got)
	}
	if _, err := b.rec.Rewind("c1", "s1", true, false, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.read(t, "b.txt"); got != "" {
		t.Errorf("after the rewind b.txt holds %q, want it gone", got)
	}
}

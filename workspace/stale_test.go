package workspace

// The stale-edit guard on real files and the process's real file watcher: what it refuses
// (Check, RefuseUnread), what it reports changed (Changed), and the partial fingerprint's
// comparison. The watcher's hook (onEvent) tells the tests when an event has been handled,
// so nothing sleeps for ordering.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/internal/testfs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// guarded returns a workspace on a fresh folder holding files (name -> content), with its
// guard; both are closed when the test ends.
func guarded(t *testing.T, files map[string]string) (*Workspace, *StaleGuard, string) {
	t.Helper()
	dir := testfs.RealTemp(t)
	testfs.WriteFiles(t, dir, files)
	ws, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := NewStaleGuard(ws)
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
		ws.Close()
	})
	return ws, g, dir
}

// seeRead records that the agent read the file at p whole, as the read tool does.
func seeRead(t *testing.T, g *StaleGuard, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	g.Record(p, WholeFingerprint(SumString(string(b))))
}

// hook makes g send each path a watcher event touched on the returned channel.
func hook(g *StaleGuard) <-chan string {
	events := make(chan string, 64)
	g.mu.Lock()
	g.onEvent = func(p string) {
		select {
		case events <- p:
		default:
		}
	}
	g.mu.Unlock()
	return events
}

// Check refuses a file never read, and one whose content is no longer what was read
// (worded for the disk or for the editor); it lets the same content through.
func TestCheckRefusesUnreadAndChanged(t *testing.T) {
	_, g, dir := guarded(t, map[string]string{"x.go": "one\n"})
	p := filepath.Join(dir, "x.go")
	cur := Observed{Content: "one\n", Sum: SumString("one\n")}
	if err := g.Check(p, "x.go", cur, false); err == nil || err.Error() != "x.go exists but you have not read it in this session; read it before changing it" {
		t.Errorf("Check of an unread file: %v", err)
	}
	seeRead(t, g, p)
	if err := g.Check(p, "x.go", cur, false); err != nil {
		t.Errorf("Check of the content read: %v", err)
	}
	two := Observed{Content: "two\n", Sum: SumString("two\n")}
	if err := g.Check(p, "x.go", two, false); err == nil || !strings.Contains(err.Error(), "x.go changed on disk since you last read it") {
		t.Errorf("Check of changed content: %v", err)
	}
	if err := g.Check(p, "x.go", two, true); err == nil || !strings.Contains(err.Error(), "x.go changed in the editor since you last read it") {
		t.Errorf("Check of changed content in the editor: %v", err)
	}
}

// RefuseUnread refuses an existing file not read, and lets through a file that does not
// exist, a path outside, a file read, and one whose read is expected earlier in the batch.
func TestRefuseUnread(t *testing.T) {
	_, g, dir := guarded(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	if err := g.RefuseUnread("a.txt"); err == nil || err.Error() != "a.txt exists but you have not read it in this session; read it before changing it" {
		t.Errorf("RefuseUnread of an unread file: %v", err)
	}
	seeRead(t, g, filepath.Join(dir, "b.txt"))
	g.Expect(filepath.Join(dir, "c.txt"))
	for _, path := range []string{"new.txt", "/etc/passwd", "b.txt", "c.txt", "."} {
		if err := g.RefuseUnread(path); err != nil {
			t.Errorf("RefuseUnread(%q) = %v, want nil", path, err)
		}
	}
}

// The watcher marks a file the agent read as touched when it changes, and Changed
// confirms with the hash; a file rewritten with the same content is not reported, a
// deleted one is. Once the workspace is closed, Changed reports nothing.
func TestChangedReportsWhatChanged(t *testing.T) {
	ws, g, dir := guarded(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	events := hook(g)
	a, b, c := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "c.txt")
	for _, p := range []string{a, b, c} {
		seeRead(t, g, p)
	}
	if got := g.Changed(); len(got) != 0 {
		t.Fatalf("Changed before any change: %v", got)
	}
	if err := os.WriteFile(a, []byte("A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("b\n"), 0o644); err != nil { // same content
		t.Fatal(err)
	}
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !seen[a] || !seen[b] {
		select {
		case p := <-events:
			seen[p] = true
		case <-deadline:
			t.Fatalf("no watcher event for a.txt and b.txt; got %v", seen)
		}
	}
	if got := g.Changed(); !slices.Equal(got, []string{a}) {
		t.Errorf("Changed = %v, want [%s]", got, a)
	}
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, 10*time.Second, "c.txt reported", func() bool { return slices.Contains(g.Changed(), c) })
	ws.Close()
	if got := g.Changed(); got != nil {
		t.Errorf("Changed after the workspace closed = %v, want nil", got)
	}
}

// A file the agent read that became a FIFO counts as changed, without blocking.
func TestChangedDoesNotBlockOnFIFO(t *testing.T) {
	_, g, dir := guarded(t, map[string]string{"x.txt": "x\n"})
	p := filepath.Join(dir, "x.txt")
	events := hook(g)
	seeRead(t, g, p)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(p); err != nil {
		t.Fatal(err)
	}
	// Once the watcher has marked it, Changed hashes what is there now: the FIFO.
	select {
	case <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("no watcher event for x.txt")
	}
	done := make(chan []string, 1)
	go func() { done <- g.Changed() }()
	select {
	case got := <-done:
		if len(got) != 1 || got[0] != p {
			t.Errorf("Changed = %v, want [%s]", got, p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Changed blocked on a FIFO")
	}
}

// A change inside the part read is seen by its hash even when the stamp is the same (a
// stamp copied back by a tool that preserves times cannot make it pass).
func TestPartialFingerprintComparesThePartRead(t *testing.T) {
	fp := Fingerprint{Sum: SumString("abc"), N: 3, Stamp: Stamp{Mtime: 6}}
	same := Observed{Content: "abcdef", Stamp: Stamp{Mtime: 6}, HasStamp: true}
	if !fp.Matches(same) {
		t.Error("the same part and stamp do not match")
	}
	for name, o := range map[string]Observed{
		"part changed":  {Content: "abXdef", Stamp: Stamp{Mtime: 6}, HasStamp: true},
		"stamp changed": {Content: "abcdef", Stamp: Stamp{Mtime: 6, Ctime: 1}, HasStamp: true},
		"no stamp":      {Content: "abcdef"},
		"shorter":       {Content: "ab", Stamp: Stamp{Mtime: 6}, HasStamp: true},
	} {
		if fp.Matches(o) {
			t.Errorf("%s: matches", name)
		}
	}
}

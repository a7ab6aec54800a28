package workspace

// The stale-edit guards of every workspace share the process's one inotify instance
// (package internal/watch): with one each, about 126 sessions would exhaust the user's
// limit of 128 and the user's editor would get EMFILE for its own watchers.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
)

// 300 guards that have each recorded a file (so each watches its folder) hold one inotify
// instance; once they are all closed, none is left (and goleak sees no goroutine).
func TestGuardsShareOneInotifyInstance(t *testing.T) {
	const n = 300
	guards := make([]*StaleGuard, n)
	files := make([]string, n)
	for i := range guards {
		_, g, dir := guarded(t, map[string]string{"f.txt": "x\n"})
		guards[i], files[i] = g, filepath.Join(dir, "f.txt")
		seeRead(t, g, files[i])
	}
	if got := proctest.InotifyInstances(t); got != 1 {
		t.Errorf("%d guards watching their folders hold %d inotify instances, want 1", n, got)
	}
	// Each still hears about its own files.
	last, p := guards[n-1], files[n-1]
	if err := os.WriteFile(p, []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, 10*time.Second, "the change reported", func() bool {
		ch := last.Changed()
		return len(ch) == 1 && ch[0] == p
	})
	for _, g := range guards {
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := proctest.InotifyInstances(t); got != 0 {
		t.Errorf("after every guard closed, %d inotify instances are open, want 0", got)
	}
}

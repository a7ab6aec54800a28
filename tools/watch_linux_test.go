package tools_test

// The stale-edit trackers of every workspace share the process's one inotify instance
// (package internal/watch): with one each, about 126 sessions would exhaust the user's
// limit of 128 and the user's editor would get EMFILE for its own watchers.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/tools"
)

// 300 workspaces that have each read a file (so each watches its folder) hold one inotify
// instance; once they are all closed, none is left (and goleak sees no goroutine).
func TestWorkspacesShareOneInotifyInstance(t *testing.T) {
	const n = 300
	spaces := make([]*tools.Workspace, n)
	for i := range spaces {
		dir := realTemp(t)
		writeFiles(t, dir, map[string]string{"f.txt": "x\n"})
		ws, err := tools.NewWorkspace(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		spaces[i] = ws
		readThen(t, ws, "f.txt")
	}
	if got := proctest.InotifyInstances(t); got != 1 {
		t.Errorf("%d workspaces watching their folders hold %d inotify instances, want 1", n, got)
	}
	// Each still hears about its own files.
	last := spaces[n-1]
	p := filepath.Join(last.Cwd(), "f.txt")
	if err := os.WriteFile(p, []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, 10*time.Second, "the change reported", func() bool {
		ch := last.ChangedFiles()
		return len(ch) == 1 && ch[0] == p
	})
	for _, ws := range spaces {
		if err := ws.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := proctest.InotifyInstances(t); got != 0 {
		t.Errorf("after every workspace closed, %d inotify instances are open, want 0", got)
	}
}

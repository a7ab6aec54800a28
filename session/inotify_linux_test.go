package session_test

// The sessions of many hosts share the process's one inotify instance (internal/watch),
// counted in /proc/self/fd.

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/session"
)

// 300 hosts (as the ACP face makes, one per cwd), each with a session that has read a file,
// watch their settings folders and their files' folders through one inotify instance;
// closing them all leaves none.
func TestManySessionsShareOneWatcher(t *testing.T) {
	isolate(t)
	const n = 300
	hosts := make([]*session.Host, n)
	defer func() {
		for _, h := range hosts {
			if h != nil {
				h.Close()
			}
		}
	}()
	for i := range hosts {
		root := filepath.Join(t.TempDir(), "w"+strconv.Itoa(i))
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		h := session.NewHost(session.HostOptions{})
		hosts[i] = h
		h.SetUp([]string{root})
		s, err := h.New(session.Config{Cwd: root}, session.Options{Face: face{}})
		if err != nil {
			t.Fatal(err)
		}
		readIn(t, s, "f.txt")
	}
	if got := proctest.InotifyInstances(t); got != 1 {
		t.Errorf("%d hosts with a session each hold %d inotify instances, want 1", n, got)
	}
	for i, h := range hosts {
		h.Close()
		hosts[i] = nil
	}
	if got := proctest.InotifyInstances(t); got != 0 {
		t.Errorf("after every host closed, %d inotify instances are open, want 0", got)
	}
}

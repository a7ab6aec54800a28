package settings_test

// Every Loader watches through the process's one inotify instance (internal/watch): with one
// each, a daemon with many workspaces would exhaust the user's limit (often 128), and the
// user's editor would then get EMFILE for its own watchers.

import (
	"testing"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/settings"
)

// 300 Loaders, each with a workspace folder of its own, hold one inotify instance, and each
// still reloads its own settings; once all are closed, none is left.
func TestLoadersShareOneInotifyInstance(t *testing.T) {
	xdgtest.Isolate(t)
	const n = 300
	var e errs
	loaders := make([]*settings.Loader, n)
	roots := make([]string, n)
	for i := range loaders {
		roots[i] = t.TempDir()
		loaders[i] = settings.NewLoader(settings.LoaderOptions{WorkspaceRoots: []string{roots[i]}, OnError: e.add, Trusted: trustAll})
	}
	defer func() {
		for _, l := range loaders {
			l.Close()
		}
	}()
	if got := proctest.InotifyInstances(t); got != 1 {
		t.Errorf("%d Loaders hold %d inotify instances, want 1", n, got)
	}
	if got := e.all(); len(got) != 0 {
		t.Fatalf("%d errors, the first: %s", len(got), got[0])
	}
	l, root := loaders[n-1], roots[n-1]
	writeFile(t, settings.WorkspacePath(root), `{"permissions":{"default":"deny"}}`)
	proctest.WaitUntil(t, reloadTimeout, "the last Loader to reload", func() bool { return bashDecision(l, root, "ls") == permissions.Deny })
	if d := bashDecision(loaders[0], roots[0], "ls"); d != permissions.Ask {
		t.Errorf("another Loader's folder changed its policy: %s", d)
	}
	for _, l := range loaders {
		l.Close()
	}
	if got := proctest.InotifyInstances(t); got != 0 {
		t.Errorf("after every Loader closed, %d inotify instances are open, want 0", got)
	}
}

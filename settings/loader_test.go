package settings_test

// Tests of the Loader with real files: sources and precedence, reload on change, broken files,
// files and folders appearing later, and Close.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/permissions/permtest"
	"github.com/pid-agent/pid/settings"
)

// errs collects OnError calls.
type errs struct {
	mu   sync.Mutex
	list []string // "path: error"
}

func (e *errs) add(path string, err error) {
	e.mu.Lock()
	e.list = append(e.list, path+": "+err.Error())
	e.mu.Unlock()
}

func (e *errs) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.list...)
}

// bashDecision returns what the loader's policy for folder decides for `bash {command}`.
func bashDecision(l *settings.Loader, folder, command string) permissions.Decision {
	return l.Policy(folder).Decide(permtest.Call("bash", permtest.ArgsJSON("command", command))).Decision
}

// trustAll trusts every workspace root: these tests are about sources and reloading, where
// a trusted workspace's settings are a layer like any other. loader_trust_test.go covers
// untrusted folders.
func trustAll(string) bool { return true }

func newLoader(t *testing.T, roots []string, e *errs) *settings.Loader {
	t.Helper()
	l := settings.NewLoader(settings.LoaderOptions{WorkspaceRoots: roots, OnError: e.add, Trusted: trustAll})
	t.Cleanup(func() { l.Close() })
	return l
}

func TestLoaderSourcesAndPrecedence(t *testing.T) {
	env := xdgtest.Isolate(t)
	user := filepath.Join(env.Config, "pid", "settings.json")
	writeFile(t, user, `{"theme":"ignored","permissions":{"default":"deny","tools":{"bash":"allow","write":"allow"}},"redact":{"patterns":["user-[0-9]+"]}}`)
	rootA := filepath.Join(t.TempDir(), "a")
	rootB := filepath.Join(t.TempDir(), "b")
	writeFile(t, settings.WorkspacePath(rootA), `{"permissions":{"tools":{"bash":[{"pattern":"git status","decision":"allow"}]}},"redact":{"patterns":["ws-[a-z]+"]}}`)
	if err := os.MkdirAll(rootB, 0o755); err != nil {
		t.Fatal(err)
	}
	var e errs
	l := newLoader(t, []string{rootA, rootB}, &e)
	if got := e.all(); len(got) != 0 {
		t.Fatalf("errors: %v", got)
	}

	// Root A: the workspace's bash list replaces the user's "allow" whole; the user's
	// default applies to what the list does not match.
	if d := bashDecision(l, rootA, "git status"); d != permissions.Allow {
		t.Errorf("A git status: %s", d)
	}
	if d := bashDecision(l, filepath.Join(rootA, "sub", "dir"), "ls"); d != permissions.Deny {
		t.Errorf("A (sub folder) ls: %s, want the user's default deny", d)
	}
	// Root B has no file: the user settings alone.
	if d := bashDecision(l, rootB, "ls"); d != permissions.Allow {
		t.Errorf("B ls: %s", d)
	}
	// A folder in no root: the user settings alone.
	if d := bashDecision(l, "/elsewhere", "ls"); d != permissions.Allow {
		t.Errorf("elsewhere ls: %s", d)
	}
	// The session's own permissions come last and win.
	sess := l.Policy(rootA).With(nil, permissions.Layer{Source: "session", Spec: permtest.Spec(t, `{"tools":{"bash":"ask"}}`)})
	if v := sess.Decide(permtest.Call("bash", `{"command":"git status"}`)); v.Decision != permissions.Ask || v.Source != "session" {
		t.Errorf("session layer: %+v", v)
	}
	if v := l.Policy(rootA).Decide(permtest.Call("bash", `{"command":"git status"}`)); !strings.Contains(v.Source, settings.WorkspacePath(rootA)) {
		t.Errorf("source should name the workspace file: %+v", v)
	}

	// Redaction patterns of every file, user first.
	var srcs []string
	for _, re := range l.RedactPatterns() {
		srcs = append(srcs, re.String())
	}
	if strings.Join(srcs, ",") != "user-[0-9]+,ws-[a-z]+" {
		t.Errorf("redact patterns: %v", srcs)
	}
}

func TestLoaderReloadsOnChange(t *testing.T) {
	env := xdgtest.Isolate(t)
	root := t.TempDir()
	wsFile := settings.WorkspacePath(root)
	writeFile(t, wsFile, `{"permissions":{"tools":{"bash":"deny"}}}`)
	var e errs
	reloads := make(chan struct{}, 100)
	l := settings.NewLoader(settings.LoaderOptions{
		WorkspaceRoots: []string{root},
		OnError:        e.add,
		OnReload:       func() { reloads <- struct{}{} },
		Trusted:        trustAll,
	})
	defer l.Close()
	if d := bashDecision(l, root, "ls"); d != permissions.Deny {
		t.Fatalf("initial: %s", d)
	}
	old := l.Policy(root)

	// Saved by rename, as editors do.
	writeFile(t, wsFile, `{"permissions":{"tools":{"bash":"allow"}}}`)
	proctest.WaitUntil(t, reloadTimeout, "workspace change to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Allow })
	if d := old.Decide(permtest.Call("bash", `{}`)).Decision; d != permissions.Deny {
		t.Errorf("a policy handed out before must not change: %s", d)
	}
	<-reloads // OnReload was called (the policy changed, so it must have been)

	// Written in place.
	if err := os.WriteFile(wsFile, []byte(`{"permissions":{"tools":{"bash":"deny"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, reloadTimeout, "in-place write to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Deny })

	// The user file appears later in a folder that does not exist yet (XDG_CONFIG_HOME/pid).
	user := filepath.Join(env.Config, "pid", "settings.json")
	writeFile(t, user, `{"permissions":{"tools":{"write":"deny"}}}`)
	proctest.WaitUntil(t, reloadTimeout, "new user file to take effect", func() bool {
		return l.Policy(root).Decide(permtest.Call("write", `{"path":"a"}`)).Decision == permissions.Deny
	})

	// Deleting a file removes its rules.
	if err := os.Remove(wsFile); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, reloadTimeout, "deletion to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Ask })
	if v := l.Policy(root).Decide(permtest.Call("bash", `{}`)); v.Source != "built-in" {
		t.Errorf("after deletion: %+v", v)
	}
	if got := e.all(); len(got) != 0 {
		t.Fatalf("errors: %v", got)
	}
}

func TestLoaderWorkspaceFolderAppearsLater(t *testing.T) {
	xdgtest.Isolate(t)
	root := t.TempDir() // exists; root/.pid does not
	var e errs
	l := newLoader(t, []string{root}, &e)
	if d := bashDecision(l, root, "ls"); d != permissions.Ask {
		t.Fatalf("initial: %s", d)
	}
	writeFile(t, settings.WorkspacePath(root), `{"permissions":{"default":"allow"}}`) // creates .pid too
	proctest.WaitUntil(t, reloadTimeout, "file in a new folder to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Allow })

	// The folder removed and made again: still watched.
	if err := os.RemoveAll(filepath.Join(root, ".pid")); err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, reloadTimeout, "removed folder to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Ask })
	writeFile(t, settings.WorkspacePath(root), `{"permissions":{"default":"deny"}}`)
	proctest.WaitUntil(t, reloadTimeout, "re-created folder to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Deny })
}

func TestLoaderBrokenFileKeepsPreviousPolicy(t *testing.T) {
	env := xdgtest.Isolate(t)
	user := filepath.Join(env.Config, "pid", "settings.json")
	writeFile(t, user, `{"permissions":{"tools":{"bash":"deny"}}}`)
	var e errs
	reloads := make(chan struct{}, 100)
	l := settings.NewLoader(settings.LoaderOptions{OnError: e.add, OnReload: func() { reloads <- struct{}{} }})
	defer l.Close()

	bad := []struct{ content, want string }{
		{`{"permissions":{"tools":{"bash":"allow"`, "not a JSON object"},
		{`{"permissions":{"tools":{"bash":"sometimes"}}}`, `permissions.tools["bash"] must be "allow", "ask" or "deny", not "sometimes"`},
		{`{"permissions":{"tools":{"bash":[{"pattern":"ls"}]}}}`, `permissions.tools["bash"][0].decision is missing`},
		{`{"redact":{"patterns":["(unclosed"]}}`, "redact.patterns[0]"},
		{`{"redact":{"patterns":["x*"]}}`, "matches the empty string"},
	}
	for i, b := range bad {
		writeFile(t, user, b.content)
		proctest.WaitUntil(t, reloadTimeout, "the error to be reported", func() bool { return len(e.all()) == i+1 })
		got := e.all()[i]
		if !strings.HasPrefix(got, user+": ") || !strings.Contains(got, b.want) {
			t.Errorf("error %q, want the file's path and %q", got, b.want)
		}
		if d := bashDecision(l, "/x", "ls"); d != permissions.Deny {
			t.Fatalf("after %q the previous policy must stay: %s", b.content, d)
		}
	}
	select {
	case <-reloads:
		t.Fatal("OnReload called for a broken file")
	default:
	}
	// Fixed: the new content applies, and the error is not reported again.
	writeFile(t, user, `{"permissions":{"tools":{"bash":"allow"}}}`)
	proctest.WaitUntil(t, reloadTimeout, "the fix to take effect", func() bool { return bashDecision(l, "/x", "ls") == permissions.Allow })
	if n := len(e.all()); n != len(bad) {
		t.Fatalf("%d errors after the fix, want %d", n, len(bad))
	}
}

func TestLoaderBrokenFileAtStart(t *testing.T) {
	env := xdgtest.Isolate(t)
	user := filepath.Join(env.Config, "pid", "settings.json")
	writeFile(t, user, `{"permissions":{"default":"nope"}}`)
	var e errs
	l := newLoader(t, nil, &e)
	// Reported synchronously by NewLoader; nothing from the file is in force.
	if got := e.all(); len(got) != 1 || !strings.Contains(got[0], "permissions.default") {
		t.Fatalf("errors: %v", got)
	}
	if d := bashDecision(l, "/x", "ls"); d != permissions.Ask {
		t.Fatalf("%s", d)
	}
}

func TestLoaderExplicitUserFileAndClose(t *testing.T) {
	xdgtest.Isolate(t)
	dir := t.TempDir()
	user := filepath.Join(dir, "custom.json")
	writeFile(t, user, `{"permissions":{"default":"allow"},"redact":{"patterns":["abc"]}}`)
	l := settings.NewLoader(settings.LoaderOptions{UserFile: user})
	if d := bashDecision(l, "/x", "ls"); d != permissions.Allow {
		t.Fatalf("%s", d)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	// The last policy stays readable after Close; goleak (TestMain) checks the goroutine ended.
	if d := bashDecision(l, "/x", "ls"); d != permissions.Allow {
		t.Fatalf("after close: %s", d)
	}
	if got := l.RedactPatterns(); len(got) != 1 || got[0].String() != regexp.MustCompile("abc").String() {
		t.Fatalf("redact after close: %v", got)
	}
}

func TestLoaderDecidesWhileReloading(t *testing.T) {
	xdgtest.Isolate(t)
	root := t.TempDir()
	wsFile := settings.WorkspacePath(root)
	writeFile(t, wsFile, `{"permissions":{"default":"deny"}}`)
	l := newLoader(t, []string{root}, &errs{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if d := bashDecision(l, root, "ls"); d != permissions.Deny && d != permissions.Allow {
					t.Errorf("decision %q", d)
					return
				}
			}
		}()
	}
	for i := range 20 {
		content := `{"permissions":{"default":"deny"}}`
		if i%2 == 0 {
			content = `{"permissions":{"default":"allow"}}`
		}
		writeFile(t, wsFile, content)
	}
	writeFile(t, wsFile, `{"permissions":{"default":"allow"}}`)
	proctest.WaitUntil(t, reloadTimeout, "last write to take effect", func() bool { return bashDecision(l, root, "ls") == permissions.Allow })
	close(stop)
	wg.Wait()
}

// A root added to a running Loader (a face whose sessions each bring their own folder) is
// read at once, as a root given to NewLoader is, and reloaded when its file changes; the
// roots it had keep their own settings.
func TestLoaderAddRoot(t *testing.T) {
	xdgtest.Isolate(t)
	first, second := t.TempDir(), t.TempDir()
	writeFile(t, settings.WorkspacePath(first), `{"permissions":{"tools":{"bash":"deny"}}}`)
	writeFile(t, settings.WorkspacePath(second), `{"permissions":{"tools":{"bash":"allow"}}}`)
	var e errs
	l := settings.NewLoader(settings.LoaderOptions{WorkspaceRoots: []string{first}, OnError: e.add, Trusted: trustAll})
	defer l.Close()
	if d := bashDecision(l, second, "ls"); d == permissions.Allow {
		t.Fatalf("a folder that is not a root yet: %s, want the user settings' default", d)
	}
	l.AddRoot(second)
	l.AddRoot(second) // a root it has: nothing changes
	if d := bashDecision(l, second, "ls"); d != permissions.Allow {
		t.Errorf("the added root, right after AddRoot: %s, want allow (its own file)", d)
	}
	if d := bashDecision(l, first, "ls"); d != permissions.Deny {
		t.Errorf("the first root after another was added: %s, want deny", d)
	}
	writeFile(t, settings.WorkspacePath(second), `{"permissions":{"tools":{"bash":"deny"}}}`)
	proctest.WaitUntil(t, reloadTimeout, "the added root's change to take effect", func() bool { return bashDecision(l, second, "ls") == permissions.Deny })
	if got := e.all(); len(got) > 0 {
		t.Errorf("errors: %v", got)
	}
}

// "acp" is about the person's editor: a workspace's settings file cannot turn the client's
// terminals off (or back on), even in a trusted folder; the user's file can, and a change to
// it takes effect without a restart.
func TestLoaderACPFromTheUserFileOnly(t *testing.T) {
	env := xdgtest.Isolate(t)
	user := filepath.Join(env.Config, "pid", "settings.json")
	root := t.TempDir()
	writeFile(t, settings.WorkspacePath(root), `{"acp":{"terminals":false}}`)
	var e errs
	l := newLoader(t, []string{root}, &e)
	if got := e.all(); len(got) != 0 {
		t.Fatalf("errors: %v", got)
	}
	if l.ACP().NoTerminals {
		t.Fatal(`a trusted workspace's "acp": {"terminals": false} turned the client's terminals off`)
	}
	writeFile(t, user, `{"acp":{"terminals":false}}`)
	proctest.WaitUntil(t, reloadTimeout, "the user's acp setting to take effect", func() bool { return l.ACP().NoTerminals })
	writeFile(t, settings.WorkspacePath(root), `{"acp":{"terminals":true},"permissions":{"tools":{"bash":"allow"}}}`)
	proctest.WaitUntil(t, reloadTimeout, "the workspace's second write to take effect", func() bool {
		return bashDecision(l, root, "ls") == permissions.Allow
	})
	if !l.ACP().NoTerminals {
		t.Error(`a workspace's "acp": {"terminals": true} turned the client's terminals back on`)
	}
}

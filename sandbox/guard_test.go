package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Observe finds every repository's .git (at any depth, a gitfile's folder too), the
// protected names of the roots, and what git's configuration names inside the writable
// places; Protected lists the existing ones outermost first, without what a listed folder
// holds already.
func TestObserveFindsWhatToProtect(t *testing.T) {
	ws := realDir(t)
	write(t, ws, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		".git/config":              "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared.gitconfig\n[filter \"x\"]\n\tclean = ./tools/clean.sh %f\n\tsmudge = cat\n[includeIf \"gitdir:~/\"]\n\tpath = /etc/elsewhere\n",
		".githooks/pre-commit":     "",
		"shared.gitconfig":         "[core]\n\tfsmonitor = \"scripts/fsmon.sh\" # a comment\n",
		"scripts/fsmon.sh":         "",
		"tools/clean.sh":           "",
		"a/b/c/.git/HEAD":          "ref: refs/heads/main\n",
		"sub/.git":                 "gitdir: ../elsewhere/sub.git\n",
		"elsewhere/sub.git/HEAD":   "ref: refs/heads/main\n",
		".vscode/settings.json":    "{}",
		"d/.vscode/tasks.json":     "{}", // not a root's: left to the editor that opens d
		"node_modules/x/.git/HEAD": "",
	})
	var g Guard
	w := g.Observe([]string{ws}, []string{ws}, "")
	want := []string{".git", ".githooks", ".vscode", "elsewhere/sub.git", "shared.gitconfig", "sub/.git", "scripts/fsmon.sh", "tools/clean.sh", "a/b/c/.git", "node_modules/x/.git"}
	var got []string
	for _, p := range w.Protected() {
		got = append(got, strings.TrimPrefix(p, ws+"/"))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Protected %q\nwant      %q", got, want)
	}
	if w.Incomplete != "" || len(w.Dangling()) != 0 {
		t.Errorf("incomplete %q, dangling %v", w.Incomplete, w.Dangling())
	}
}

// Check removes the .git a command made where there was none (any depth, any case), a
// protected name made in a root, and a missing path git's configuration names; it puts
// back a protected link the command replaced, and says what it did.
func TestCheckRevertsWhatACommandMade(t *testing.T) {
	ws := realDir(t)
	write(t, ws, map[string]string{".git/HEAD": "", ".git/config": "[core]\n\thooksPath = .husky\n", "src/a.go": ""})
	if err := os.Symlink("shared/envrc", filepath.Join(ws, ".envrc")); err != nil {
		t.Fatal(err)
	}
	write(t, ws, map[string]string{"shared/envrc": "x"})
	var g Guard
	before := g.Observe([]string{ws}, []string{ws}, "")
	// What a command could do that no mount stops.
	write(t, ws, map[string]string{"src/deep/.git/config": "evil", "src/.GIT": "gitdir: x", ".husky/pre-commit": "evil", ".MCP.json": "{}", "kept.txt": "k"})
	os.Remove(filepath.Join(ws, ".envrc"))
	os.WriteFile(filepath.Join(ws, ".envrc"), []byte("evil"), 0o644)
	got, incomplete := g.Check(before)
	if incomplete != "" {
		t.Errorf("incomplete: %s", incomplete)
	}
	var paths []string
	for _, r := range got {
		paths = append(paths, strings.TrimPrefix(r.Path, ws+"/")+" "+r.What)
		if !r.Restored {
			t.Errorf("%s: not put back: %s", r.Path, r.Why)
		}
	}
	want := []string{".MCP.json created", ".envrc changed", ".husky created", "src/.GIT created", "src/deep/.git created"}
	if !slices.Equal(paths, want) {
		t.Errorf("Check %q\nwant  %q", paths, want)
	}
	if l, err := os.Readlink(filepath.Join(ws, ".envrc")); err != nil || l != "shared/envrc" {
		t.Errorf(".envrc is %q (%v)", l, err)
	}
	for _, p := range []string{"src/deep/.git", "src/.GIT", ".husky", ".MCP.json"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "kept.txt")); err != nil {
		t.Error("Check removed what is not protected")
	}
	// Nothing changed since: nothing to say.
	if got, _ := g.Check(g.Observe([]string{ws}, []string{ws}, "")); len(got) != 0 {
		t.Errorf("second Check %+v", got)
	}
}

// A repository that was there before is never taken for a new one, even past Observe's
// bound (the check's walk reaches further): its change time is older than the command.
func TestCheckKeepsRepositoriesItDidNotSeeBefore(t *testing.T) {
	ws := realDir(t)
	write(t, ws, map[string]string{"a/x": "", "b/x": "", "c/.git/HEAD": ""})
	defer setFor(t, &MaxGuardDirs, 3)() // the root, a, b: c is not reached
	defer setFor(t, &ctimeMargin, 0)()  // c/.git was made just before
	var g Guard
	before := g.Observe([]string{ws}, []string{ws}, "")
	if before.Incomplete == "" {
		t.Fatal("the walk was not cut")
	}
	if got, _ := g.Check(before); len(got) != 0 {
		t.Errorf("Check %+v", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "c/.git/HEAD")); err != nil {
		t.Error("a repository the first walk did not reach was removed")
	}
}

// A command that makes more folders than Observe looks at, to hide a .git past them, does
// not hide it from the check.
func TestCheckFindsAGitHiddenPastTheBound(t *testing.T) {
	ws := realDir(t)
	defer setFor(t, &MaxGuardDirs, 5)()
	var g Guard
	before := g.Observe([]string{ws}, []string{ws}, "")
	for i := range 20 {
		write(t, ws, map[string]string{filepath.Join("a", string(rune('a'+i)), "x"): ""})
	}
	write(t, ws, map[string]string{"z/deep/.git": "gitdir: evil"})
	got, _ := g.Check(before)
	if len(got) != 1 || got[0].Path != filepath.Join(ws, "z/deep/.git") || !got[0].Restored {
		t.Errorf("Check %+v", got)
	}
}

// The check's removal follows no link: a folder on the way swapped for a link to elsewhere
// (by a command running beside it) leaves elsewhere alone; a folder whose write permission a
// command took is given it back for the removal, and gets its permission back after.
func TestRemovalFollowsNoLink(t *testing.T) {
	ws, outside := realDir(t), realDir(t)
	write(t, outside, map[string]string{".git/HEAD": "mine"})
	if err := os.Symlink(outside, filepath.Join(ws, "x")); err != nil {
		t.Fatal(err)
	}
	if err := removeIn([]string{ws}, filepath.Join(ws, "x", ".git")); err == nil {
		t.Error("removal through a link succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, ".git/HEAD")); err != nil {
		t.Error("a .git outside the workspace was removed through a link")
	}
	write(t, ws, map[string]string{"sub/.git/config": "evil"})
	os.Chmod(filepath.Join(ws, "sub/.git"), 0o500)
	os.Chmod(filepath.Join(ws, "sub"), 0o500)
	if err := removeIn([]string{ws}, filepath.Join(ws, "sub", ".git")); err != nil {
		t.Errorf("removal under a read-only folder: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "sub")); err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("sub's mode after: %v, %v", fi.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "sub/.git")); err == nil {
		t.Error("sub/.git is still there")
	}
}

// setFor sets *v to x until the returned function restores it.
func setFor[T any](t *testing.T, v *T, x T) func() {
	old := *v
	*v = x
	return func() { *v = old }
}

// The memory of listed folders: a folder changed since (a .git made in it) is listed again
// even when its change time is old by the clock (it is compared, not trusted).
func TestGuardRelistsChangedFolders(t *testing.T) {
	ws := realDir(t)
	write(t, ws, map[string]string{"a/b/x": ""})
	var g Guard
	g.Observe([]string{ws}, []string{ws}, "")
	before := g.Observe([]string{ws}, []string{ws}, "")
	write(t, ws, map[string]string{"a/b/.git": "gitdir: y"})
	got, _ := g.Check(before)
	if len(got) != 1 || got[0].Path != filepath.Join(ws, "a/b/.git") {
		t.Errorf("Check %+v", got)
	}
}

// A protected link that leads nowhere is said, with its target, and not mounted.
func TestObserveDanglingLinks(t *testing.T) {
	ws := realDir(t)
	os.Symlink("nowhere", filepath.Join(ws, ".mcp.json"))
	var g Guard
	w := g.Observe([]string{ws}, []string{ws}, "")
	if d := w.Dangling(); d[filepath.Join(ws, ".mcp.json")] != "nowhere" || len(w.Protected()) != 0 {
		t.Errorf("dangling %v, protected %v", d, w.Protected())
	}
}

func TestParseGitConfig(t *testing.T) {
	in := "# comment\n[core]\n\tHooksPath = \"a b\" ; trailing\n\tbare\n[Include]\n\tpath = x\\\n.cfg\n[remote \"Origin\"]\n\turl = u\n[alias.Sub]\n\tk = \"q\\\"t\"\n[s] k = v\n"
	got := parseGitConfig([]byte(in))
	want := [][2]string{{"core.hookspath", "a b"}, {"core.bare", "true"}, {"include.path", "x.cfg"}, {"remote.Origin.url", "u"}, {"alias.sub.k", `q"t`}, {"s.k", "v"}}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The secret-looking variables, and those that are not.
func TestSecretEnv(t *testing.T) {
	for _, n := range []string{"GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AZURE_CLIENT_SECRET",
		"GOOGLE_APPLICATION_CREDENTIALS", "MY_DB_PASSWORD", "stripe_api_key", "OPENAI_API_KEY", "SOME_KEY", "HF_TOKEN", "DATABASE_URL", "VAULT_ADDR"} {
		if !SecretEnv(n) {
			t.Errorf("%s is not taken for a secret", n)
		}
	}
	for _, n := range []string{"PATH", "HOME", "GOPATH", "GOFLAGS", "LANG", "TERM", "SSH_AUTH_SOCK", "KEYBOARD", "MONKEY_PATCH", "EDITOR", "NODE_OPTIONS"} {
		if SecretEnv(n) {
			t.Errorf("%s is taken for a secret", n)
		}
	}
}

// Parse and Resolve: limits and env.allow; a workspace only lowers limits and cannot let
// a secret through.
func TestLimitsAndEnvSettings(t *testing.T) {
	s, err := Parse([]byte(`{"limits": {"memoryMB": 2048, "processes": 512}, "env": {"allow": ["GITHUB_TOKEN"]}}`))
	if err != nil || *s.Limits.MemoryMB != 2048 || *s.Limits.Processes != 512 || s.Env.Allow[0] != "GITHUB_TOKEN" {
		t.Fatalf("Parse: %+v, %v", s, err)
	}
	for _, bad := range []string{`{"limits": {"memoryMB": 10}}`, `{"limits": {"processes": 0}}`, `{"limits": {"cpu": 1}}`, `{"env": {"allow": ["A=B"]}}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
	ws, _ := Parse([]byte(`{"limits": {"memoryMB": 100000, "processes": 100}, "env": {"allow": ["NPM_TOKEN"]}}`))
	r := Resolve(s, Settings{}, ws, true)
	if r.MemoryMB != 2048 || r.Processes != 100 || !slices.Equal(r.EnvAllow, []string{"GITHUB_TOKEN"}) || len(r.Ignored) != 2 {
		t.Errorf("Resolve: %+v", r)
	}
	mem, procs := DefaultLimits()
	if d := Default(); d.MemoryMB != mem || d.Processes != procs || procs != DefaultProcesses || mem < MinMemoryMB || mem > 8192 {
		t.Errorf("Default %+v", d)
	}
	editor, _ := Parse([]byte(`{"limits": {"processes": 9000}}`))
	if r := Resolve(s, editor, Settings{}, false); r.Processes != 9000 || r.MemoryMB != 2048 {
		t.Errorf("the editor's limits over the user's, key by key: %+v", r)
	}
}

// With inotify (Linux), a walk of a tree that did not change looks at no folder again;
// a folder made, or moved in, since is looked at, and a .git made there is found.
func TestWalkLooksOnlyAtWhatChanged(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	ws := realDir(t)
	for i := range 30 {
		write(t, ws, map[string]string{filepath.Join("a", strconv.Itoa(i), "b", "x"): ""})
	}
	write(t, ws, map[string]string{"elsewhere/deep/x": ""})
	var g Guard
	defer g.Close()
	g.Observe([]string{ws}, []string{ws}, "")
	before := lstats.Load()
	w := g.Observe([]string{ws}, []string{ws}, "")
	if n := lstats.Load() - before; n != 0 {
		t.Errorf("a walk of an unchanged tree looked at %d folders", n)
	}
	// A .git made deep down, and a folder holding one moved in from elsewhere.
	write(t, ws, map[string]string{"a/17/b/new/.git/config": "evil", "elsewhere/deep/.git": "gitdir: x"})
	if err := os.Rename(filepath.Join(ws, "elsewhere/deep"), filepath.Join(ws, "a/3/moved")); err != nil {
		t.Fatal(err)
	}
	before = lstats.Load()
	got, _ := g.Check(w)
	var paths []string
	for _, r := range got {
		paths = append(paths, strings.TrimPrefix(r.Path, ws+"/"))
	}
	if want := []string{"a/17/b/new/.git", "a/3/moved/.git"}; !slices.Equal(paths, want) {
		t.Errorf("Check %q, want %q", paths, want)
	}
	if n := lstats.Load() - before; n > 10 {
		t.Errorf("the check looked at %d folders for two changes", n)
	}
}

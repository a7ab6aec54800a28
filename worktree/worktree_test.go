package worktree

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// isolate keeps the machine's git configuration out of a test.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home
}

// run runs plain git (no safety configuration: the test's own commands) in dir.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo makes a repository at base/repo with files committed, and returns its real path.
func newRepo(t *testing.T, base string, files map[string]string) string {
	t.Helper()
	repo := filepath.Join(base, "repo")
	os.MkdirAll(repo, 0o755)
	run(t, repo, "init", "-q", "-b", "main")
	for p, text := range files {
		write(t, filepath.Join(repo, p), text)
	}
	run(t, repo, "add", "-A")
	run(t, repo, "commit", "-q", "-m", "start")
	real, _ := filepath.EvalSymlinks(repo)
	return real
}

// clean checks that the repository has no worktree, branch or ref of pid's left, and that
// the worktree folders are gone.
func clean(t *testing.T, repo string, dirs ...string) {
	t.Helper()
	list := run(t, repo, "worktree", "list", "--porcelain")
	if n := strings.Count(list, "worktree "); n != 1 {
		t.Errorf("git worktree list has %d worktrees, want the main one only:\n%s", n, list)
	}
	if b := run(t, repo, "branch", "--list", "pid/*"); b != "" {
		t.Errorf("pid's branches are left: %s", b)
	}
	if r := run(t, repo, "for-each-ref", "refs/pid/"); r != "" {
		t.Errorf("pid's refs are left: %s", r)
	}
	if e, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees")); len(e) != 0 {
		t.Errorf(".git/worktrees holds %d entries", len(e))
	}
	for _, d := range dirs {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the worktree folder %s is left (%v)", d, err)
		}
	}
}

// state returns a file's content, mode and link target, or "absent".
func state(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	b, _ := os.ReadFile(p)
	target, _ := os.Readlink(p)
	return fi.Mode().String() + " " + target + " " + string(b)
}

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteByte(byte('0' + i%10))
		b.WriteString("\n")
	}
	return b.String()
}

func TestWorktreeStartsFromTheMainTreeAsItIs(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{
		"a.txt": "a\n", "staged.txt": "s\n", "gone.txt": "g\n", "script.sh": "echo\n", ".gitignore": "build/\n",
		"bin.dat": "\x00\x01old",
	})
	write(t, filepath.Join(repo, "a.txt"), "a changed, not staged\n")
	write(t, filepath.Join(repo, "staged.txt"), "s staged\n")
	run(t, repo, "add", "staged.txt")
	os.Remove(filepath.Join(repo, "gone.txt"))
	write(t, filepath.Join(repo, "new.txt"), "untracked\n")
	write(t, filepath.Join(repo, "dir/deep.txt"), "untracked deep\n")
	write(t, filepath.Join(repo, "build/out.o"), "ignored\n")
	os.WriteFile(filepath.Join(repo, "bin.dat"), []byte("\x00\x02new\xff"), 0o644)
	os.Chmod(filepath.Join(repo, "script.sh"), 0o755)
	os.Symlink("a.txt", filepath.Join(repo, "link"))
	status := run(t, repo, "status", "--porcelain")
	index := filepath.Join(repo, ".git", "index")
	before, _ := os.ReadFile(index)
	beforeFi, _ := os.Stat(index)

	dir := filepath.Join(base, "state", "worktrees", "s1", "c1")
	tr, err := Create(context.Background(), Options{Folder: repo, Dir: dir, ID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	// The main tree's index and files are as they were.
	after, _ := os.ReadFile(index)
	afterFi, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !beforeFi.ModTime().Equal(afterFi.ModTime()) {
		t.Error("Create changed the main tree's index")
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "a changed, not staged\n" {
		t.Errorf("main a.txt = %q", got)
	}
	if tr.Path != dir || tr.Folder != dir || tr.Branch != "pid/c1" {
		t.Errorf("Tree = %+v", tr)
	}
	for p, want := range map[string]string{
		"a.txt": "a changed, not staged\n", "staged.txt": "s staged\n", "new.txt": "untracked\n",
		"dir/deep.txt": "untracked deep\n", "bin.dat": "\x00\x02new\xff", "script.sh": "echo\n",
	} {
		if got := read(t, filepath.Join(dir, p)); got != want {
			t.Errorf("worktree %s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"gone.txt", "build/out.o"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("worktree has %s (%v): deleted and ignored files must not be there", p, err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "script.sh")); fi == nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("script.sh lost its exec bit in the worktree: %v", fi)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "a.txt" {
		t.Errorf("link = %q, %v", target, err)
	}
	// git status in the worktree shows what it shows in the main tree (the staged change
	// staged, the others not), and the branch is at HEAD.
	if got := run(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("status in the worktree:\n%s\nwant the main tree's:\n%s", got, status)
	}
	if h, m := run(t, dir, "rev-parse", "HEAD"), run(t, repo, "rev-parse", "HEAD"); h != m {
		t.Errorf("worktree HEAD %s, main HEAD %s", h, m)
	}
	if b := run(t, dir, "branch", "--show-current"); b != "pid/c1\n" {
		t.Errorf("worktree branch %q", b)
	}
	if err := tr.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	clean(t, repo, dir)
	if got := run(t, repo, "status", "--porcelain"); got != status {
		t.Errorf("main status after all:\n%s\nwant\n%s", got, status)
	}
}

// child makes a child's worktree of repo.
func child(t *testing.T, repo, base, id string) *Tree {
	t.Helper()
	tr, err := Create(context.Background(), Options{Folder: repo, Dir: filepath.Join(base, "state", "worktrees", "s1", id), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTwoChildrenMergeBothChanges(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{"f.txt": lines(10), "old.txt": "old\n", "run.sh": "echo\n"})
	write(t, filepath.Join(repo, "wip.txt"), "uncommitted in main\n")
	a, b := child(t, repo, base, "a"), child(t, repo, base, "b")
	// Each child edits its part of f.txt; a adds a file in a new folder and makes run.sh
	// executable; b deletes old.txt, adds a link and edits the main tree's uncommitted file.
	fa := strings.Replace(lines(10), "line 2\n", "line 2 by a\n", 1)
	write(t, filepath.Join(a.Path, "f.txt"), fa)
	write(t, filepath.Join(a.Path, "pkg/new.go"), "package pkg\n")
	os.Chmod(filepath.Join(a.Path, "run.sh"), 0o755)
	fb := strings.Replace(lines(10), "line 8\n", "line 8 by b\n", 1)
	write(t, filepath.Join(b.Path, "f.txt"), fb)
	os.Remove(filepath.Join(b.Path, "old.txt"))
	os.Symlink("f.txt", filepath.Join(b.Path, "f-link"))
	write(t, filepath.Join(b.Path, "wip.txt"), "uncommitted in main\nand b's line\n")

	var seen []string
	hook := MergeOptions{Writing: func(p string) func() {
		// The checkpoint keeps the state before: the file must not be changed yet.
		before := state(p)
		seen = append(seen, p)
		return func() {
			if state(p) == before {
				t.Errorf("%s is the same after the write as before it: Writing was told after the change", p)
			}
		}
	}}
	ra, err := a.Merge(context.Background(), hook)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Merge(context.Background(), hook)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(fa, "line 8\n", "line 8 by b\n", 1)
	if got := read(t, filepath.Join(repo, "f.txt")); got != want {
		t.Errorf("f.txt = %q, want both children's changes %q", got, want)
	}
	if got := read(t, filepath.Join(repo, "pkg/new.go")); got != "package pkg\n" {
		t.Errorf("pkg/new.go = %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(repo, "run.sh")); fi == nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v, want 0755", fi.Mode())
	}
	if _, err := os.Lstat(filepath.Join(repo, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.txt is still there: %v", err)
	}
	if target, _ := os.Readlink(filepath.Join(repo, "f-link")); target != "f.txt" {
		t.Errorf("f-link -> %q", target)
	}
	if got := read(t, filepath.Join(repo, "wip.txt")); got != "uncommitted in main\nand b's line\n" {
		t.Errorf("wip.txt = %q", got)
	}
	p := func(s string) string { return filepath.Join(repo, s) }
	if d := cmp.Diff([]Change{{p("f.txt"), "modified"}, {p("pkg/new.go"), "added"}, {p("run.sh"), "modified"}}, ra.Applied); d != "" {
		t.Errorf("a applied (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Change{{p("f-link"), "added"}, {p("f.txt"), "modified"}, {p("old.txt"), "deleted"}, {p("wip.txt"), "modified"}}, rb.Applied); d != "" {
		t.Errorf("b applied (-want +got):\n%s", d)
	}
	if len(ra.Conflicts)+len(rb.Conflicts) != 0 || ra.Kept || rb.Kept {
		t.Errorf("conflicts %+v %+v, kept %v %v", ra.Conflicts, rb.Conflicts, ra.Kept, rb.Kept)
	}
	wantSeen := []string{p("f.txt"), p("pkg/new.go"), p("run.sh"), p("f-link"), p("f.txt"), p("old.txt"), p("wip.txt")}
	if !slices.Equal(seen, wantSeen) {
		t.Errorf("Writing was told %q, want %q", seen, wantSeen)
	}
	clean(t, repo, a.Path, b.Path)
}

func TestSameLineConflicts(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{"f.txt": lines(10)})
	a, b := child(t, repo, base, "a"), child(t, repo, base, "b")
	write(t, filepath.Join(a.Path, "f.txt"), strings.Replace(lines(10), "line 5\n", "line 5 by a\n", 1))
	write(t, filepath.Join(b.Path, "f.txt"), strings.Replace(lines(10), "line 5\n", "line 5 by b\n", 1))
	write(t, filepath.Join(b.Path, "other.txt"), "b's other file\n")
	if _, err := a.Merge(context.Background(), MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	rb, err := b.Merge(context.Background(), MergeOptions{Writing: func(p string) func() { seen = append(seen, p); return func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, filepath.Join(repo, "f.txt")), strings.Replace(lines(10), "line 5\n", "line 5 by a\n", 1); got != want {
		t.Errorf("f.txt = %q, want a's change kept: %q", got, want)
	}
	wantC := []Conflict{{
		Path:   filepath.Join(repo, "f.txt"),
		Reason: "changed in the main tree since the subagent started, and by the subagent, in the same places (1 conflicting hunks)",
		Hunks:  []Hunk{{Main: "line 5 by a\n", Start: "line 5\n", Subagent: "line 5 by b\n"}},
	}}
	if d := cmp.Diff(wantC, rb.Conflicts); d != "" {
		t.Errorf("conflicts (-want +got):\n%s", d)
	}
	// The rest of b's work is applied; the worktree is kept, and says where.
	if d := cmp.Diff([]Change{{filepath.Join(repo, "other.txt"), "added"}}, rb.Applied); d != "" {
		t.Errorf("applied (-want +got):\n%s", d)
	}
	if !slices.Equal(seen, []string{filepath.Join(repo, "other.txt")}) {
		t.Errorf("Writing told of %q: a conflicting file is not written", seen)
	}
	if !rb.Kept || rb.Path != b.Path {
		t.Errorf("result %+v: want the worktree kept at %s", rb, b.Path)
	}
	if got := read(t, filepath.Join(b.Path, "f.txt")); !strings.Contains(got, "line 5 by b") {
		t.Errorf("the kept worktree lost b's version: %q", got)
	}
	if list := run(t, repo, "worktree", "list"); !strings.Contains(list, b.Path) {
		t.Errorf("the kept worktree is not listed:\n%s", list)
	}
	text := rb.Text()
	for _, s := range []string{"added " + filepath.Join(repo, "other.txt"), "NOT applied", "line 5 by a\n||||||| when the subagent started\nline 5\n=======\nline 5 by b\n>>>>>>> subagent", "kept at " + b.Path + " (branch pid/b)"} {
		if !strings.Contains(text, s) {
			t.Errorf("Text() does not say %q:\n%s", s, text)
		}
	}
	if err := b.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	clean(t, repo, a.Path, b.Path)
}

func TestOtherConflictsAndOutsideTheFolder(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{"sub/x.txt": "x\n", "sub/del.txt": "d\n", "sub/bin": "\x00a", "top.txt": "t\n"})
	tr, err := Create(context.Background(), Options{Folder: filepath.Join(repo, "sub"), Dir: filepath.Join(base, "wt", "c"), ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Folder != filepath.Join(tr.Path, "sub") {
		t.Errorf("Folder %s, want the worktree's sub", tr.Folder)
	}
	// The child deletes del.txt, which the main tree changed; changes bin, which the main
	// tree changed too; writes outside its folder; adds a file the main tree added too.
	os.Remove(filepath.Join(tr.Path, "sub/del.txt"))
	os.WriteFile(filepath.Join(tr.Path, "sub/bin"), []byte("\x00child"), 0o644)
	write(t, filepath.Join(tr.Path, "top.txt"), "child\n")
	write(t, filepath.Join(tr.Path, "sub/both.txt"), "child's\n")
	write(t, filepath.Join(repo, "sub/del.txt"), "d changed in main\n")
	os.WriteFile(filepath.Join(repo, "sub/bin"), []byte("\x00main"), 0o644)
	write(t, filepath.Join(repo, "sub/both.txt"), "main's\n")
	res, err := tr.Merge(context.Background(), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, c := range res.Conflicts {
		rel, _ := filepath.Rel(repo, c.Path)
		reasons[rel] = c.Reason
	}
	for p, want := range map[string]string{
		"sub/del.txt":  "deleted by the subagent, and changed in the main tree",
		"sub/bin":      "a binary file changed",
		"top.txt":      "outside the subagent's workspace folder",
		"sub/both.txt": "in the same places",
	} {
		if !strings.Contains(reasons[p], want) {
			t.Errorf("%s: reason %q, want %q", p, reasons[p], want)
		}
	}
	if len(res.Applied) != 0 || !res.Kept {
		t.Errorf("applied %+v kept %v", res.Applied, res.Kept)
	}
	for p, want := range map[string]string{"sub/del.txt": "d changed in main\n", "sub/bin": "\x00main", "top.txt": "t\n", "sub/both.txt": "main's\n"} {
		if got := read(t, filepath.Join(repo, p)); got != want {
			t.Errorf("main %s = %q, want it kept: %q", p, got, want)
		}
	}
	if err := tr.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	clean(t, repo, tr.Path)
}

func TestOutsideARepository(t *testing.T) {
	base := isolate(t)
	plain := filepath.Join(base, "plain")
	os.MkdirAll(plain, 0o755)
	dir := filepath.Join(base, "wt", "c")
	if _, err := Create(context.Background(), Options{Folder: plain, Dir: dir, ID: "c"}); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Create outside a repository = %v, want ErrNotRepo", err)
	}
	unborn := filepath.Join(base, "unborn")
	os.MkdirAll(unborn, 0o755)
	run(t, unborn, "init", "-q")
	if _, err := Create(context.Background(), Options{Folder: unborn, Dir: dir, ID: "c"}); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Create in a repository without a commit = %v, want ErrNotRepo", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "wt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was made: %v", err)
	}
}

// TestRepositoryConfigNeverRuns: a repository whose own configuration names hooks, an
// fsmonitor and a filter driver, each of which would leave a marker file: plain git runs
// them (checked first), pid's git commands never do.
func TestRepositoryConfigNeverRuns(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{"f.txt": lines(4), ".gitattributes": "*.txt filter=evil\n"})
	markers := filepath.Join(base, "markers")
	os.MkdirAll(markers, 0o755)
	script := func(name string) string {
		p := filepath.Join(base, "scripts", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(markers, name)+"\ncat\n"), 0o755)
		return p
	}
	hooks := filepath.Join(base, "hooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-commit", "post-commit", "post-index-change", "pre-auto-gc"} {
		os.Symlink(script("hook-"+h), filepath.Join(hooks, h))
		os.Symlink(script("hook-"+h), filepath.Join(repo, ".git", "hooks", h))
	}
	run(t, repo, "config", "core.hooksPath", hooks)
	run(t, repo, "config", "core.fsmonitor", script("fsmonitor"))
	run(t, repo, "config", "filter.evil.clean", script("clean"))
	run(t, repo, "config", "filter.evil.smudge", script("smudge"))
	run(t, repo, "config", "filter.evil.required", "true")
	write(t, filepath.Join(repo, "f.txt"), lines(4)+"uncommitted\n")

	// Plain git runs each of them.
	run(t, repo, "status")
	run(t, repo, "update-ref", "refs/heads/probe", "HEAD")
	run(t, repo, "update-ref", "-d", "refs/heads/probe")
	run(t, repo, "hash-object", "--path=f.txt", "f.txt")
	run(t, repo, "cat-file", "--filters", "HEAD:f.txt")
	got, _ := os.ReadDir(markers)
	var names []string
	for _, e := range got {
		names = append(names, e.Name())
	}
	if want := []string{"clean", "fsmonitor", "hook-post-index-change", "hook-reference-transaction", "smudge"}; !slices.Equal(names, want) {
		t.Fatalf("plain git left markers %q, want %q: the test's configuration is not what it should be", names, want)
	}
	os.RemoveAll(markers)
	os.MkdirAll(markers, 0o755)

	tr := child(t, repo, base, "c")
	if got := read(t, filepath.Join(tr.Path, "f.txt")); got != lines(4)+"uncommitted\n" {
		t.Errorf("worktree f.txt = %q", got)
	}
	write(t, filepath.Join(tr.Path, "f.txt"), "changed by the child\n"+lines(4)+"uncommitted\n")
	write(t, filepath.Join(tr.Path, "g.txt"), "new\n")
	res, err := tr.Merge(context.Background(), MergeOptions{})
	if err != nil || len(res.Applied) != 2 || len(res.Conflicts) != 0 {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(repo, "f.txt")); got != "changed by the child\n"+lines(4)+"uncommitted\n" {
		t.Errorf("f.txt = %q", got)
	}
	if left, _ := os.ReadDir(markers); len(left) != 0 {
		t.Errorf("pid's git commands ran the repository's programs: markers %v", left)
	}
	clean(t, repo, tr.Path)
}

func TestLockTurnsInTheOrderAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f fifo
		unlock, err := f.lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i := range 3 {
			go func() {
				u, err := f.lock(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				got = append(got, i)
				u()
			}()
			synctest.Wait() // waiter i is queued before i+1 asks
		}
		// A waiter whose context ends leaves the queue without the lock.
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error)
		go func() { _, err := f.lock(ctx); ended <- err }()
		synctest.Wait()
		cancel()
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("lock with an ended context = %v", err)
		}
		unlock()
		synctest.Wait()
		if !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("turns %v, want 0 1 2", got)
		}
		if f.held || len(f.queue) != 0 {
			t.Errorf("after all: held %v, queue %d", f.held, len(f.queue))
		}
	})
}

// TestChildIgnoringAFileDoesNotDeleteIt: a file of the start state that the child's
// .gitignore comes to ignore is still the child's (changed here), not a deletion; a file
// the child makes that is ignored (a build's output) is not brought back.
func TestChildIgnoringAFileDoesNotDeleteIt(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{".gitignore": "*.log\n", "kept.txt": "k\n"})
	write(t, filepath.Join(repo, "notes.txt"), "untracked notes\n")
	tr := child(t, repo, base, "c")
	write(t, filepath.Join(tr.Path, ".gitignore"), "*.log\nnotes.txt\nkept.txt\n")
	write(t, filepath.Join(tr.Path, "notes.txt"), "untracked notes\nmore\n")
	write(t, filepath.Join(tr.Path, "build.log"), "ignored output\n")
	res, err := tr.Merge(context.Background(), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := func(s string) string { return filepath.Join(repo, s) }
	if d := cmp.Diff([]Change{{p(".gitignore"), "modified"}, {p("notes.txt"), "modified"}}, res.Applied); d != "" {
		t.Errorf("applied (-want +got):\n%s", d)
	}
	if got := read(t, p("notes.txt")); got != "untracked notes\nmore\n" {
		t.Errorf("notes.txt = %q", got)
	}
	if got := read(t, p("kept.txt")); got != "k\n" {
		t.Errorf("kept.txt = %q", got)
	}
	if _, err := os.Lstat(p("build.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an ignored file of the child's came back: %v", err)
	}
	clean(t, repo, tr.Path)
}

func TestDiscardDirAfterTheTreeIsGone(t *testing.T) {
	base := isolate(t)
	repo := newRepo(t, base, map[string]string{"f.txt": "x\n"})
	tr := child(t, repo, base, "kept")
	write(t, filepath.Join(tr.Path, "f.txt"), "child\n")
	// Neither the main tree nor a worktree of another branch is discarded.
	if err := DiscardDir(context.Background(), repo); err == nil {
		t.Fatal("DiscardDir of the main tree did not fail")
	}
	other := filepath.Join(base, "other")
	run(t, repo, "worktree", "add", "-q", "-b", "feature", other)
	if err := DiscardDir(context.Background(), other); err == nil || !strings.Contains(err.Error(), "not on a branch pid/") {
		t.Fatalf("DiscardDir of another worktree = %v", err)
	}
	run(t, repo, "worktree", "remove", other)
	run(t, repo, "branch", "-D", "feature")
	if err := DiscardDir(context.Background(), tr.Path); err != nil {
		t.Fatal(err)
	}
	clean(t, repo, tr.Path)
	if got := read(t, filepath.Join(repo, "f.txt")); got != "x\n" {
		t.Errorf("f.txt = %q: discarding applies nothing", got)
	}
}

package tools_test

// grep, find and ls on real trees (the .gitignore, glob and line matching under them is
// tested in package search).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// searchTree is a small repository with .gitignore files at two levels.
func searchTree(t *testing.T) (*tools.Workspace, string) {
	t.Helper()
	ws, dir := newWorkspace(t, map[string]string{
		".gitignore":            "*.log\nbuild/\n/secret.txt\n!important.log\n",
		"main.go":               "package main\n\nfunc main() { Hello() }\n",
		"hello.go":              "package main\n\nfunc Hello() {}\n// hello again\n",
		"notes.md":              "Hello notes\n",
		"app.log":               "Hello from a log\n",
		"important.log":         "Hello important\n",
		"secret.txt":            "Hello secret\n",
		"build/out.go":          "package build // Hello\n",
		"sub/.gitignore":        "gen_*.go\n!gen_keep.go\n",
		"sub/gen_a.go":          "Hello generated\n",
		"sub/gen_keep.go":       "Hello kept\n",
		"sub/secret.txt":        "Hello not anchored here\n",
		"sub/deep/x_test.go":    "Hello test\n",
		".git/config":           "Hello git\n",
		"bin.dat":               "Hello\x00binary\n",
		"sub/deep/testdata/t.x": "Hello testdata\n",
	})
	return ws, dir
}

func TestGrep(t *testing.T) {
	ws, dir := searchTree(t)
	r := call(t, ws, "grep", `{"pattern":"Hello"}`)
	got := mustOK(t, r)
	want := strings.Join([]string{
		"hello.go:3: func Hello() {}",
		"important.log:1: Hello important",
		"main.go:3: func main() { Hello() }",
		"notes.md:1: Hello notes",
		"sub/deep/testdata/t.x:1: Hello testdata",
		"sub/deep/x_test.go:1: Hello test",
		"sub/gen_keep.go:1: Hello kept",
		"sub/secret.txt:1: Hello not anchored here",
	}, "\n") + "\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	d := r.details.(tools.GrepDetails)
	if d.Matches != 8 || d.FilesWithMatches != 8 || d.BinarySkipped != 1 || d.Truncated {
		t.Errorf("details %+v", d)
	}
	// ignoreCase, glob, path (folder and file).
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"hello","ignoreCase":true,"glob":"*.go"}`)); got != "hello.go:3: func Hello() {}\nhello.go:4: // hello again\nmain.go:3: func main() { Hello() }\nsub/deep/x_test.go:1: Hello test\nsub/gen_keep.go:1: Hello kept\n" {
		t.Errorf("ignoreCase+glob: %q", got)
	}
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"Hello","glob":"sub/**/*_test.go"}`)); got != "sub/deep/x_test.go:1: Hello test\n" {
		t.Errorf("path glob: %q", got)
	}
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"Hello","path":"sub"}`)); !strings.HasPrefix(got, "sub/deep/testdata/t.x:1:") || strings.Contains(got, "gen_a") {
		t.Errorf("path sub: %q", got)
	}
	// The parent's .gitignore applies when searching a subfolder.
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"Hello","path":"sub/deep"}`)); !strings.Contains(got, "x_test.go") {
		t.Errorf("path sub/deep: %q", got)
	}
	testfs.WriteFiles(t, dir, map[string]string{"sub/deep/debug.log": "Hello debug\n"})
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"Hello","path":"sub/deep"}`)); strings.Contains(got, "debug.log") {
		t.Errorf("the root .gitignore did not apply below: %q", got)
	}
	// A file named explicitly is searched even if ignored.
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"Hello","path":"app.log"}`)); got != "app.log:1: Hello from a log\n" {
		t.Errorf("explicit file: %q", got)
	}
}

func TestGrepNoMatchIsNotAnError(t *testing.T) {
	ws, _ := searchTree(t)
	r := call(t, ws, "grep", `{"pattern":"nothing[0-9]+here"}`)
	if got := mustOK(t, r); got != `No matches for "nothing[0-9]+here" in . (1 binary file skipped)` {
		t.Errorf("got %q", got)
	}
	mustFail(t, call(t, ws, "grep", `{"pattern":"("}`), "invalid regular expression", "RE2")
	mustFail(t, call(t, ws, "grep", `{"pattern":"x","path":"nope"}`), "path not found: nope")
}

func TestGrepLimits(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sb, "match %d\n", i)
	}
	ws, _ := newWorkspace(t, map[string]string{"many.txt": sb.String(), "long.txt": "match " + strings.Repeat("y", 1000) + "\n"})
	r := call(t, ws, "grep", `{"pattern":"match","path":"many.txt"}`)
	got := mustOK(t, r)
	if strings.Count(got, "\n") != 102 || !strings.Contains(got, "many.txt:100: match 100\n") || strings.Contains(got, "match 101") ||
		!strings.Contains(got, "[Stopped after 100 matches (limit 100") {
		t.Errorf("default limit: %q", got[len(got)-200:])
	}
	if d := r.details.(tools.GrepDetails); !d.Truncated || d.Matches != 100 {
		t.Errorf("details %+v", d)
	}
	// Exactly limit matches is not "stopped".
	r = call(t, ws, "grep", `{"pattern":"match 1..$","path":"many.txt","limit":100}`)
	if d := r.details.(tools.GrepDetails); d.Truncated || d.Matches != 100 || strings.Contains(r.text, "Stopped") {
		t.Errorf("exact limit: %+v", d)
	}
	got = mustOK(t, call(t, ws, "grep", `{"pattern":"y{100}","path":"long.txt"}`))
	if got != "long.txt:1: match "+strings.Repeat("y", 494)+" …\n" {
		t.Errorf("long line: %q", got)
	}
	mustFail(t, call(t, ws, "grep", `{"pattern":"x","limit":5000}`), "Validation failed")
}

func TestFind(t *testing.T) {
	ws, _ := searchTree(t)
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"*.go"}`)); got != "hello.go\nmain.go\nsub/deep/x_test.go\nsub/gen_keep.go\n" {
		t.Errorf("*.go: %q", got)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"**/testdata"}`)); got != "sub/deep/testdata/\n" {
		t.Errorf("folders end in /: %q", got)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"deep/*","path":"sub"}`)); got != "sub/deep/testdata/\nsub/deep/x_test.go\n" {
		t.Errorf("path: %q", got)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"*.{log,txt}"}`)); got != "important.log\nsub/secret.txt\n" {
		t.Errorf("braces and ignores: %q", got)
	}
	r := call(t, ws, "find", `{"pattern":"*","limit":3}`)
	if got := mustOK(t, r); got != ".gitignore\nbin.dat\nhello.go\n\n[Stopped after 3 paths (limit). Narrow the pattern or path, or raise limit.]\n" {
		t.Errorf("limit: %q", got)
	}
	if d := r.details.(tools.FindDetails); !d.Truncated || d.Count != 3 {
		t.Errorf("details %+v", d)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"config"}`)); got != `No files match "config" in .` {
		t.Errorf(".git must be skipped: %q", got)
	}
	mustFail(t, call(t, ws, "find", `{"pattern":"*","path":"main.go"}`), "main.go is not a folder")
}

func TestLs(t *testing.T) {
	ws, dir := searchTree(t)
	symlink(t, "hello.go", filepath.Join(dir, "link.go"))
	r := call(t, ws, "ls", `{}`)
	want := ".git/\n.gitignore\napp.log\nbin.dat\nbuild/\nhello.go\nimportant.log\nlink.go -> hello.go\nmain.go\nnotes.md\nsecret.txt\nsub/\n"
	if got := mustOK(t, r); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := mustOK(t, call(t, ws, "ls", `{"path":"sub/deep","limit":1}`)); got != "testdata/\n\n[Showing 1 of 2 entries. Raise limit to see more.]\n" {
		t.Errorf("limit: %q", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, call(t, ws, "ls", `{"path":"empty"}`)); got != "empty is empty." {
		t.Errorf("empty: %q", got)
	}
	mustFail(t, call(t, ws, "ls", `{"path":"main.go"}`), "not a folder")
	mustFail(t, call(t, ws, "ls", `{"path":"nope"}`), "path not found")
}

// ignoreTree is a repository holding every kind of ignore file, a nested repository, and
// a global excludes file in a home of its own.
func ignoreTree(t *testing.T) (*tools.Workspace, string) {
	t.Helper()
	home := testfs.RealTemp(t)
	testfs.WriteFiles(t, home, map[string]string{".gitconfig": "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-excludes\n", "my-excludes": "*.global\n"})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv(tools.GlobalExcludesEnv, "1")
	return newWorkspace(t, map[string]string{
		".git/info/exclude":     "*.excluded\n",
		".gitignore":            "*.log\n*.tmp\n",
		".ignore":               "!keep.log\n",
		"a.log":                 "x",
		"keep.log":              "x",
		"a.excluded":            "x",
		"a.global":              "x",
		"a.go":                  "x",
		"sub/.ignore":           "*.go\n",
		"sub/b.go":              "x",
		"sub/b.txt":             "x",
		"inner/.git/HEAD":       "x",
		"inner/c.log":           "x",
		"inner/c.excluded":      "x",
		"inner/c.global":        "x",
		"inner/.gitignore":      "*.md\n",
		"inner/c.md":            "x",
		"inner/deep/keep.log":   "x",
		"inner/deep/x.tmp":      "x",
		"inner/deep/.gitignore": "!*.md\n",
		"inner/deep/d.md":       "x",
	})
}

func TestIgnoreFileKinds(t *testing.T) {
	ws, _ := ignoreTree(t)
	got := mustOK(t, call(t, ws, "find", `{"pattern":"*"}`))
	want := ".gitignore\n.ignore\na.go\ninner/\ninner/.gitignore\ninner/c.excluded\ninner/c.log\n" +
		"inner/deep/\ninner/deep/.gitignore\ninner/deep/d.md\ninner/deep/keep.log\ninner/deep/x.tmp\n" +
		"keep.log\nsub/\nsub/.ignore\nsub/b.txt\n"
	// Left out: a.log, a.tmp (.gitignore), a.excluded (exclude), a.global and inner/c.global
	// (the global file, in both repositories), sub/b.go (sub/.ignore), inner/c.md (inner's
	// .gitignore). Kept: keep.log (.ignore re-includes it over .gitignore), everything in
	// inner that only the outer repository's .gitignore and exclude left out, and
	// inner/deep/d.md (re-included deeper).
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Starting below, the parents' files apply the same way.
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"*","path":"inner/deep"}`)); got != "inner/deep/.gitignore\ninner/deep/d.md\ninner/deep/keep.log\ninner/deep/x.tmp\n" {
		t.Errorf("from inner/deep: %q", got)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"*","path":"sub"}`)); got != "sub/.ignore\nsub/b.txt\n" {
		t.Errorf("from sub: %q", got)
	}
}

// Results come in walk order however the pool's goroutines interleave, and a limit stops
// at the same place every time.
func TestGrepOrderIsStable(t *testing.T) {
	files := map[string]string{}
	var want []string
	for i := range 12 {
		for j := range 12 {
			p := fmt.Sprintf("d%02d/e%02d/f.txt", i, j)
			files[p] = strings.Repeat("filler\n", (i*7+j*13)%50) + "needle\n"
			want = append(want, fmt.Sprintf("%s:%d: needle", p, (i*7+j*13)%50+1))
		}
		files[fmt.Sprintf("d%02d/top.txt", i)] = "needle\n"
		want = append(want, fmt.Sprintf("d%02d/top.txt:1: needle", i))
	}
	ws, _ := newWorkspace(t, files)
	slices.Sort(want) // d00/e00/... sorts before d00/top.txt, as the walk goes
	full := strings.Join(want, "\n") + "\n"
	for range 5 {
		if got := mustOK(t, call(t, ws, "grep", `{"pattern":"needle","limit":1000}`)); got != full {
			t.Fatalf("got\n%s\nwant\n%s", got, full)
		}
		r := call(t, ws, "grep", `{"pattern":"needle","limit":20}`)
		if got := mustOK(t, r); !strings.HasPrefix(got, strings.Join(want[:20], "\n")+"\n\n[Stopped after 20 matches") {
			t.Fatalf("limit 20: %q", got)
		}
		if d := r.details.(tools.GrepDetails); d.Matches != 20 || d.FilesSearched != 21 || d.FilesWithMatches != 20 || !d.Truncated {
			t.Fatalf("details %+v", d)
		}
	}
}

// grepExec runs the grep tool's Execute directly, so the test controls ctx and onUpdate.
func grepExec(ws *tools.Workspace, ctx context.Context, args string, onUpdate func(event.Result)) (toolexec.Result, error) {
	for _, tool := range tools.New(ws) {
		if tool.Name == tools.NameGrep {
			return tool.Execute(ctx, toolexec.Call{ID: "g", Name: tools.NameGrep, Args: json.RawMessage(args)}, onUpdate)
		}
	}
	panic("no grep tool")
}

// A search still running reports how far it got; a search cancelled returns the context's
// error once its goroutines are done.
func TestGrepProgressAndCancel(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = "needle\n"
	}
	ws, dir := newWorkspace(t, files)
	gate := make(chan struct{})
	blocked := make(chan struct{}, 1)
	tools.SetGrepFileHook(t, func(real string) {
		if real == filepath.Join(dir, "f00.txt") {
			blocked <- struct{}{}
			<-gate
		}
	})
	updates := make(chan event.Result, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res toolexec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := grepExec(ws, ctx, `{"pattern":"needle"}`, func(u event.Result) { updates <- u })
		done <- outcome{r, err}
	}()
	<-blocked
	select {
	case u := <-updates:
		text := u.Content[0].Text
		if !strings.HasPrefix(text, "[Still searching: searched ") {
			t.Errorf("progress text %q", text)
		}
		if _, ok := u.Details.(tools.SearchProgress); !ok {
			t.Errorf("progress details %T", u.Details)
		}
	case <-time.After(20 * tools.SearchProgressInterval):
		t.Fatal("no progress update while the search was held")
	}
	cancel()
	close(gate)
	o := <-done
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancelled grep: %v, %v", o.res, o.err)
	}
}

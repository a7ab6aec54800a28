package tools_test

// grep, find and ls, and the .gitignore and glob matching under them.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/tools"
)

func TestGitignoreMatching(t *testing.T) {
	const gi = `# comment
*.log
!keep.log
build/
/root-only.txt
docs/*.tmp
**/cache
a/**/z
out/**
\#hash
trailing   
\!bang
`
	cases := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"x.log", false, true},
		{"deep/er/x.log", false, true},
		{"keep.log", false, false}, // negated
		{"sub/keep.log", false, false},
		{"build", true, true},
		{"src/build", true, true}, // no slash but the trailing one: any depth
		{"build", false, false},   // folder-only pattern, this is a file
		{"root-only.txt", false, true},
		{"sub/root-only.txt", false, false}, // anchored
		{"docs/a.tmp", false, true},
		{"docs/sub/a.tmp", false, false}, // * does not cross /
		{"cache", true, true},
		{"x/y/cache", false, true},
		{"a/z", false, true},
		{"a/b/c/z", false, true},
		{"b/a/z", false, false},
		{"out/x", false, true},
		{"out/x/y", false, true},
		{"out", true, false}, // out/** matches what is inside, not out itself
		{"#hash", false, true},
		{"comment", false, false},
		{"trailing", false, true},
		{"!bang", false, true},
		{"x.go", false, false},
	}
	for _, c := range cases {
		if got := tools.Ignored(gi, c.rel, c.isDir); got != c.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.want)
		}
	}
	// The last matching pattern wins.
	if !tools.Ignored("!a.txt\n*.txt\n", "a.txt", false) || tools.Ignored("*.txt\n!a.txt\n", "a.txt", false) {
		t.Error("last match must win")
	}
	if !tools.Ignored("[a-c]?.md\n", "b1.md", false) || tools.Ignored("[a-c]?.md\n", "d1.md", false) || tools.Ignored("[!a]*\n", "abc", false) {
		t.Error("classes")
	}
}

func TestGlobMatching(t *testing.T) {
	cases := []struct {
		glob, rel string
		want      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true}, // no slash: matched against the name at any depth
		{"*.go", "main.go.txt", false},
		{"*_test.{go,ts}", "x/y_test.ts", true},
		{"*.{go,md}", "README.md", true},
		{"*.{go,md}", "a.txt", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/x/a.go", false},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"**/testdata/*", "a/testdata/f", true},
		{"**/testdata/*", "testdata/f", true},
		{"./src/*.go", "src/a.go", true},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"{a,b{c,d}}.txt", "bd.txt", true},
		{"{x}.txt", "{x}.txt", true}, // no comma: literal braces
	}
	for _, c := range cases {
		got, err := tools.GlobMatch(c.glob, c.rel)
		if err != nil || got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v, %v; want %v", c.glob, c.rel, got, err, c.want)
		}
	}
}

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
	writeFiles(t, dir, map[string]string{"sub/deep/debug.log": "Hello debug\n"})
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

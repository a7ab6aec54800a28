//go:build unix

package tools_test

// Files that are not regular files: FIFOs, links to devices, oversized or odd .gitignore
// files. No tool may block on them, read a device, or apply an ignore file that is not a
// small regular file inside the workspace; each refusal says what and why.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/tools"
)

// promptly runs f in a goroutine and returns its value, failing the test if f has not
// returned within a generous bound, so a tool that blocks on a FIFO fails the test instead
// of hanging it. f must not call t.Fatal; the caller checks what it returns.
func promptly[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s blocked", what)
		panic("unreachable")
	}
}

// callPromptly is call, bounded by promptly.
func callPromptly(t *testing.T, ws *tools.Workspace, name, args string) result {
	t.Helper()
	return promptly(t, name+" "+args, func() result { return call(t, ws, name, args) })
}

// specialTree is a workspace holding a FIFO, a link to /dev/zero and a regular file with a
// match, in the top folder and in a subfolder.
func specialTree(t *testing.T) (*tools.Workspace, string) {
	t.Helper()
	ws, dir := newWorkspace(t, map[string]string{
		"a.txt":     "needle one\n",
		"sub/b.txt": "needle two\n",
	})
	for _, p := range []string{"fifo", "sub/fifo"} {
		if err := mkfifo(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, "/dev/zero", filepath.Join(dir, "zero"))
	symlink(t, "/dev/zero", filepath.Join(dir, "sub", "zero"))
	return ws, dir
}

func TestReadWriteEditRefuseSpecialFiles(t *testing.T) {
	ws, dir := specialTree(t)
	mustFail(t, callPromptly(t, ws, "read", `{"path":"fifo"}`), "fifo is not a regular file but a named pipe (FIFO)")
	mustFail(t, callPromptly(t, ws, "read", `{"path":"zero"}`), "outside the workspace folders", "/dev/zero")
	mustFail(t, callPromptly(t, ws, "write", `{"path":"fifo","content":"x"}`), "not a regular file but a named pipe")
	mustFail(t, callPromptly(t, ws, "edit", `{"path":"sub/fifo","edits":[{"oldText":"a","newText":"b"}]}`), "not a regular file but a named pipe")
	mustFail(t, callPromptly(t, ws, "write", `{"path":"zero","content":"x"}`), "outside the workspace folders")
	if fi, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
	// grep of the FIFO named directly is refused, not opened.
	mustFail(t, callPromptly(t, ws, "grep", `{"pattern":"x","path":"fifo"}`), "not a regular file but a named pipe")
}

// The opening itself never blocks: what was opened is checked, so a FIFO swapped in after
// the listing or the stat is refused too.
func TestOpenRegularRefusesFIFOWithoutBlocking(t *testing.T) {
	dir := testfs.RealTemp(t)
	testfs.WriteFiles(t, dir, map[string]string{"f": "x"})
	if err := mkfifo(filepath.Join(dir, "p")); err != nil {
		t.Fatal(err)
	}
	if err := promptly(t, "opening a FIFO", func() error { return tools.OpenRegularIn(dir, "p") }); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("FIFO: %v", err)
	}
	if err := tools.OpenRegularIn(dir, "."); err == nil || !strings.Contains(err.Error(), "a folder") {
		t.Errorf("folder: %v", err)
	}
	if err := tools.OpenRegularIn(dir, "f"); err != nil {
		t.Errorf("regular file: %v", err)
	}
}

func TestGrepAndFindSkipSpecialFiles(t *testing.T) {
	ws, _ := specialTree(t)
	g := callPromptly(t, ws, "grep", `{"pattern":"needle|\\x00"}`)
	if got := mustOK(t, g); got != "a.txt:1: needle one\nsub/b.txt:1: needle two\n" {
		t.Errorf("grep: %q", got)
	}
	if d := g.details.(tools.GrepDetails); d.FilesSearched != 2 {
		t.Errorf("grep searched %d files, want the 2 regular ones: %+v", d.FilesSearched, d)
	}
	f := callPromptly(t, ws, "find", `{"pattern":"*"}`)
	// find lists them (it opens nothing) and descends into neither.
	if got := mustOK(t, f); got != "a.txt\nfifo\nsub/\nsub/b.txt\nsub/fifo\nsub/zero\nzero\n" {
		t.Errorf("find: %q", got)
	}
}

// Every .gitignore pid reads must be a regular file of at most 1 MB, inside the workspace
// (through a link or not); any other is left out, and the result says which and why.
func TestIgnoreFilesMustBeSmallRegularFiles(t *testing.T) {
	big := strings.Repeat("# padding\n", search.MaxIgnoreFileBytes/10+1)
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		reason string // "" when the .gitignore applies
	}{
		{"FIFO", func(t *testing.T, dir string) {
			if err := mkfifo(filepath.Join(dir, "sub", ".gitignore")); err != nil {
				t.Fatal(err)
			}
		}, "it is a named pipe (FIFO), not a regular file"},
		{"link to /dev/zero", func(t *testing.T, dir string) {
			symlink(t, "/dev/zero", filepath.Join(dir, "sub", ".gitignore"))
		}, "it is a symbolic link to /dev/zero, outside the workspace folders"},
		{"link to /dev/stdin", func(t *testing.T, dir string) {
			symlink(t, "/dev/stdin", filepath.Join(dir, "sub", ".gitignore"))
		}, "it is a symbolic link to /dev/stdin, outside the workspace folders"},
		{"relative link out", func(t *testing.T, dir string) {
			symlink(t, "../../../../../../../../../../dev/zero", filepath.Join(dir, "sub", ".gitignore"))
		}, "outside the workspace folders"},
		{"link to a FIFO inside", func(t *testing.T, dir string) {
			if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
				t.Fatal(err)
			}
			symlink(t, "../pipe", filepath.Join(dir, "sub", ".gitignore"))
		}, "it is a symbolic link to ../pipe, which is a named pipe (FIFO), not a regular file"},
		{"folder", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "sub", ".gitignore"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "it is a folder, not a regular file"},
		{"over 1 MB", func(t *testing.T, dir string) {
			testfs.WriteFiles(t, dir, map[string]string{"sub/.gitignore": big + "*.log\n"})
		}, "it is larger than 1.0 MB (1.0 MB)"},
		{"dangling link", func(t *testing.T, dir string) {
			symlink(t, "nowhere", filepath.Join(dir, "sub", ".gitignore"))
		}, "it is a symbolic link to nowhere, which does not exist"},
		{"link to a regular file inside applies", func(t *testing.T, dir string) {
			testfs.WriteFiles(t, dir, map[string]string{"shared.ignore": "*.log\n"})
			symlink(t, "../shared.ignore", filepath.Join(dir, "sub", ".gitignore"))
		}, ""},
		{"absolute link to a regular file inside applies", func(t *testing.T, dir string) {
			testfs.WriteFiles(t, dir, map[string]string{"shared.ignore": "*.log\n"})
			symlink(t, filepath.Join(dir, "shared.ignore"), filepath.Join(dir, "sub", ".gitignore"))
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, dir := newWorkspace(t, map[string]string{"sub/x.log": "needle\n", "sub/y.txt": "needle\n"})
			c.setup(t, dir)
			g := callPromptly(t, ws, "grep", `{"pattern":"needle"}`)
			f := callPromptly(t, ws, "find", `{"pattern":"*.log"}`)
			gd, fd := g.details.(tools.GrepDetails), f.details.(tools.FindDetails)
			if c.reason == "" {
				if got := mustOK(t, g); got != "sub/y.txt:1: needle\n" {
					t.Errorf("grep with the .gitignore applied: %q", got)
				}
				if got := mustOK(t, f); !strings.HasPrefix(got, "No files match") {
					t.Errorf("find with the .gitignore applied: %q", got)
				}
				if gd.IgnoreFilesSkipped != nil || fd.IgnoreFilesSkipped != nil {
					t.Errorf("skipped: %+v %+v", gd.IgnoreFilesSkipped, fd.IgnoreFilesSkipped)
				}
				return
			}
			// Left out: x.log is not ignored, and both results say why.
			const line = "[sub/.gitignore was not applied: "
			if got := mustOK(t, g); !strings.HasPrefix(got, "sub/x.log:1: needle\nsub/y.txt:1: needle\n\n"+line) || !strings.Contains(got, c.reason+".]\n") {
				t.Errorf("grep: %q", got)
			}
			if got := mustOK(t, f); !strings.HasPrefix(got, "sub/x.log\n\n"+line) || !strings.Contains(got, c.reason+".]\n") {
				t.Errorf("find: %q", got)
			}
			for _, sk := range [][]tools.SkippedFile{gd.IgnoreFilesSkipped, fd.IgnoreFilesSkipped} {
				if len(sk) != 1 || sk[0].Path != "sub/.gitignore" || !strings.Contains(sk[0].Reason, c.reason) {
					t.Errorf("details: %+v", sk)
				}
			}
		})
	}
}

// The .gitignore of a parent folder is read through the root as well, and refused the
// same way when the search starts below it.
func TestParentIgnoreFileMustBeRegular(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"sub/deep/x.log": "needle\n"})
	if err := mkfifo(filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	g := callPromptly(t, ws, "grep", `{"pattern":"needle","path":"sub/deep"}`)
	want := "sub/deep/x.log:1: needle\n\n[.gitignore was not applied: it is a named pipe (FIFO), not a regular file.]\n"
	if got := mustOK(t, g); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

package tools_test

// Workspace confinement: a corpus of escape attempts that Resolve and the file tools must
// refuse, and legitimate paths that must work.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/tools"
)

// confinementFixture builds
//
//	base/ws        first workspace folder and cwd
//	base/ws2       second workspace folder
//	base/outside   not in the workspace, holds secret.txt
//
// with symbolic links inside ws that lead out, stay in, chain and loop.
func confinementFixture(t *testing.T) (ws *tools.Workspace, base string) {
	t.Helper()
	base = testfs.RealTemp(t)
	testfs.WriteFiles(t, base, map[string]string{
		"ws/sub/a.txt":       "alpha\n",
		"ws2/b.txt":          "beta\n",
		"outside/secret.txt": "TOP SECRET\n",
	})
	w := filepath.Join(base, "ws")
	out := filepath.Join(base, "outside")
	symlink(t, out, filepath.Join(w, "link_out"))                              // dir link, absolute
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(w, "file_out")) // file link
	symlink(t, "chain2", filepath.Join(w, "chain1"))                           // chain: chain1 -> chain2 -> ../outside
	symlink(t, "../outside", filepath.Join(w, "chain2"))
	symlink(t, filepath.Join(out, "new.txt"), filepath.Join(w, "dangling")) // dangling, leads out
	symlink(t, "../..", filepath.Join(w, "sub", "up"))                      // relative link with ..
	symlink(t, "../outside/secret.txt", filepath.Join(w, "rel_escape"))
	symlink(t, "link_out", filepath.Join(w, "in_then_out")) // inside link to a link that leads out
	symlink(t, "sub", filepath.Join(w, "link_in"))          // stays inside
	symlink(t, filepath.Join(w, "sub", "a.txt"), filepath.Join(w, "abs_in"))
	symlink(t, filepath.Join(base, "ws2"), filepath.Join(w, "to_ws2")) // into the other root
	symlink(t, "loop2", filepath.Join(w, "loop1"))
	symlink(t, "loop1", filepath.Join(w, "loop2"))
	var err error
	ws, err = tools.NewWorkspace(w, []string{w, filepath.Join(base, "ws2")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, base
}

func TestResolveRefusesEscapes(t *testing.T) {
	ws, base := confinementFixture(t)
	roots := filepath.Join(base, "ws") + ", " + filepath.Join(base, "ws2")
	cases := []struct {
		name, path string
		viaLink    bool // the error must say a symbolic link leads out
	}{
		{"dotdot", "../outside/secret.txt", false},
		{"dotdot twice", "../../etc/passwd", false},
		{"dotdot through a subfolder", "sub/../../outside/secret.txt", false},
		{"deep dotdot", "a/b/../../../x", false},
		{"absolute system file", "/etc/passwd", false},
		{"absolute outside file", filepath.Join(base, "outside", "secret.txt"), false},
		{"the folder above the root", base, false},
		{"filesystem root", "/", false},
		{"root name prefix is not a parent", filepath.Join(base, "wsx", "f"), false},
		{"symlinked folder", "link_out/secret.txt", true},
		{"symlink as the last component (folder)", "link_out", true},
		{"symlink as the last component (file)", "file_out", true},
		{"symlink chain", "chain1/secret.txt", true},
		{"new file under a symlinked folder", "link_out/newdir/new.txt", true},
		{"dangling symlink leading out", "dangling", true},
		{"relative symlink with ..", "rel_escape", true},
		{"symlink whose target holds ..", "sub/up/outside/secret.txt", true},
		{"inside link to an outside link", "in_then_out/secret.txt", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			real, err := ws.Resolve(c.path)
			if err == nil {
				t.Fatalf("Resolve(%q) = %s, want it refused", c.path, real)
			}
			if !errors.Is(err, tools.ErrOutsideWorkspace) {
				t.Fatalf("Resolve(%q) error %v does not wrap ErrOutsideWorkspace", c.path, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "path "+c.path+" is outside the workspace folders") || !strings.Contains(msg, roots) {
				t.Errorf("error does not say why and name the folders: %s", msg)
			}
			if c.viaLink != strings.Contains(msg, "symbolic link") {
				t.Errorf("error mentions a symbolic link: %v, want %v: %s", !c.viaLink, c.viaLink, msg)
			}
		})
	}
	// The exact wording of the simplest case.
	_, err := ws.Resolve("../x")
	if want := "path ../x is outside the workspace folders: " + roots; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestResolveRefusesMalformedPaths(t *testing.T) {
	ws, _ := confinementFixture(t)
	cases := []struct{ path, want string }{
		{"", "path is empty"},
		{"sub/a\x00.txt", "NUL byte"},
		{"\x00", "NUL byte"},
		{"~", "not expanded"},
		{"~/.ssh/id_rsa", "not expanded"},
		{"~root/.bashrc", "not expanded"},
		{"loop1", "too many levels of symbolic links"},
		{"loop1/x", "too many levels of symbolic links"},
	}
	for _, c := range cases {
		real, err := ws.Resolve(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q) = %q, %v; want an error saying %q", c.path, real, err, c.want)
		}
		if errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("Resolve(%q): %v should not count as outside", c.path, err)
		}
	}
}

func TestResolveAcceptsPathsInside(t *testing.T) {
	ws, base := confinementFixture(t)
	w := filepath.Join(base, "ws")
	a := filepath.Join(w, "sub", "a.txt")
	cases := []struct{ path, want string }{
		{"sub/a.txt", a},
		{"./sub/a.txt", a},
		{"sub//a.txt", a},
		{a, a},
		{"sub/../sub/a.txt", a},
		{".", w},
		{w, w},
		{"link_in/a.txt", a}, // symlink inside pointing inside
		{"abs_in", a},        // absolute symlink pointing inside
		{"to_ws2/b.txt", filepath.Join(base, "ws2", "b.txt")}, // symlink into the other root
		{filepath.Join(base, "ws2", "b.txt"), filepath.Join(base, "ws2", "b.txt")},
		{"sub/new/deeper/file.txt", filepath.Join(w, "sub", "new", "deeper", "file.txt")}, // not there yet
		{"link_in/new.txt", filepath.Join(w, "sub", "new.txt")},
		// Cleaned lexically before anything is looked up: link_out/.. is the cwd again.
		{"link_out/../sub/a.txt", a},
		{"./~", filepath.Join(w, "~")},
		{"~$report.docx", filepath.Join(w, "~$report.docx")}, // not a ~user form
		{"sub/a.txt/../a.txt", a},
	}
	for _, c := range cases {
		got, err := ws.Resolve(c.path)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

// The file tools go through Resolve: none of them may read, create or change anything
// outside, and each says why it refused.
func TestFileToolsStayInside(t *testing.T) {
	ws, base := confinementFixture(t)
	out := filepath.Join(base, "outside")
	mustFail(t, call(t, ws, "read", `{"path":"link_out/secret.txt"}`), "outside the workspace folders", "symbolic link")
	mustFail(t, call(t, ws, "read", `{"path":"file_out"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "read", `{"path":"../outside/secret.txt"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "ls", `{"path":"link_out"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "grep", `{"pattern":"SECRET","path":"link_out"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "find", `{"pattern":"*","path":"/etc"}`), "outside the workspace folders")

	mustFail(t, call(t, ws, "write", `{"path":"link_out/new.txt","content":"x"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "write", `{"path":"link_out/deep/er/new.txt","content":"x"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "write", `{"path":"dangling","content":"x"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "write", `{"path":"`+filepath.Join(out, "new.txt")+`","content":"x"}`), "outside the workspace folders")
	mustFail(t, call(t, ws, "edit", `{"path":"file_out","edits":[{"oldText":"TOP","newText":"NO"}]}`), "outside the workspace folders")
	for _, p := range []string{"new.txt", "deep"} {
		if _, err := os.Lstat(filepath.Join(out, p)); err == nil {
			t.Errorf("a tool created %s outside the workspace", p)
		}
	}
	if got := readFile(t, filepath.Join(out, "secret.txt")); got != "TOP SECRET\n" {
		t.Errorf("secret.txt changed: %q", got)
	}

	// Walking the workspace does not follow links out: no secret, no outside paths.
	g := call(t, ws, "grep", `{"pattern":"SECRET"}`)
	if mustOK(t, g); !strings.HasPrefix(g.text, "No matches") {
		t.Errorf("grep found the secret through a link: %s", g.text)
	}
	f := mustOK(t, call(t, ws, "find", `{"pattern":"secret*"}`))
	if !strings.HasPrefix(f, "No files match") {
		t.Errorf("find listed files through a link: %s", f)
	}
	// Legitimate: a read through an inside link works.
	if r := mustOK(t, call(t, ws, "read", `{"path":"link_in/a.txt"}`)); !strings.Contains(r, "alpha") {
		t.Errorf("read link_in/a.txt: %s", r)
	}
}

// os.Root never follows an absolute link, but Resolve does when it leads inside: the tools
// then act on the resolved target, through the root of the folder holding it (here, for
// to_ws2, the second workspace folder).
func TestToolsFollowLinksThatStayInside(t *testing.T) {
	ws, base := confinementFixture(t)
	if r := mustOK(t, call(t, ws, "read", `{"path":"abs_in"}`)); !strings.Contains(r, "1\talpha") {
		t.Errorf("read abs_in: %s", r)
	}
	mustOK(t, call(t, ws, "edit", `{"path":"abs_in","edits":[{"oldText":"alpha","newText":"ALPHA"}]}`))
	if got := readFile(t, filepath.Join(base, "ws", "sub", "a.txt")); got != "ALPHA\n" {
		t.Errorf("edit through an absolute inside link wrote %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(base, "ws", "abs_in")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	mustOK(t, call(t, ws, "write", `{"path":"to_ws2/new.txt","content":"via link\n"}`))
	if got := readFile(t, filepath.Join(base, "ws2", "new.txt")); got != "via link\n" {
		t.Errorf("write through a link into the other folder wrote %q", got)
	}
	if got := mustOK(t, call(t, ws, "ls", `{"path":"to_ws2"}`)); got != "b.txt\nnew.txt\n" {
		t.Errorf("ls to_ws2: %q", got)
	}
	if got := mustOK(t, call(t, ws, "grep", `{"pattern":"beta|via","path":"to_ws2"}`)); got != filepath.Join(base, "ws2", "b.txt")+":1: beta\n"+filepath.Join(base, "ws2", "new.txt")+":1: via link\n" {
		t.Errorf("grep to_ws2: %q", got)
	}
	if got := mustOK(t, call(t, ws, "find", `{"pattern":"*.txt","path":"link_in"}`)); got != "sub/a.txt\n" {
		t.Errorf("find link_in: %q", got)
	}
}

func TestNewWorkspaceChecksFolders(t *testing.T) {
	base := testfs.RealTemp(t)
	testfs.WriteFiles(t, base, map[string]string{"a/x": "", "b/y": "", "file": ""})
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	bad := []struct {
		cwd   string
		roots []string
		want  string
	}{
		{"a", nil, "not an absolute path"},
		{a, []string{"b"}, "not an absolute path"},
		{filepath.Join(base, "missing"), nil, "no such file"},
		{a, []string{filepath.Join(base, "file")}, "not a folder"},
		{a, []string{b}, "outside the workspace folders"},
	}
	for _, c := range bad {
		ws, err := tools.NewWorkspace(c.cwd, c.roots)
		if err == nil {
			ws.Close()
			t.Errorf("NewWorkspace(%q, %q) succeeded, want %q", c.cwd, c.roots, c.want)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewWorkspace(%q, %q) = %v, want %q", c.cwd, c.roots, err, c.want)
		}
	}
	ws, err := tools.NewWorkspace(a+"/", []string{b, a})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if ws.Cwd() != a || strings.Join(ws.Roots(), ",") != b+","+a {
		t.Errorf("Cwd %q Roots %q", ws.Cwd(), ws.Roots())
	}
	// No roots: the cwd is the workspace.
	ws2, err := tools.NewWorkspace(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.Close()
	if _, err := ws2.Resolve("../b/y"); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("with no roots, ../b/y resolved: %v", err)
	}
}

// A workspace folder given through a symbolic link confines to where it really is.
func TestRootGivenThroughSymlink(t *testing.T) {
	base := testfs.RealTemp(t)
	testfs.WriteFiles(t, base, map[string]string{"real/f.txt": "f\n", "other/g.txt": "g\n"})
	symlink(t, filepath.Join(base, "real"), filepath.Join(base, "alias"))
	alias := filepath.Join(base, "alias")
	ws, err := tools.NewWorkspace(alias, []string{alias})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	got, err := ws.Resolve("f.txt")
	if want := filepath.Join(base, "real", "f.txt"); err != nil || got != want {
		t.Errorf("Resolve(f.txt) = %q, %v; want %q", got, err, want)
	}
	if _, err := ws.Resolve("../other/g.txt"); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("../other/g.txt: %v", err)
	}
	if r := mustOK(t, call(t, ws, "read", `{"path":"f.txt"}`)); !strings.Contains(r, "1\tf") {
		t.Errorf("read: %s", r)
	}
}

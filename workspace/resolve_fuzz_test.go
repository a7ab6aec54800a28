package workspace_test

// The fuzz target of path confinement (Workspace.Resolve) on a real tree full of symbolic
// links: links inside, absolute links back in, links out (relative, absolute, to /), loops,
// dangling links inside and out, a link to the parent. For any input path, a result is an
// absolute, clean path inside a workspace folder whose existing part has no link left in
// it; and for a path that exists, Resolve agrees with filepath.EvalSymlinks: it refuses
// exactly the paths whose real location is outside, and returns that real location
// otherwise. Seeds: testdata/fuzz/FuzzResolve and the rows below.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/workspace"
)

// confinementTree builds base/{root,root2,outside} with links everywhere and returns the
// real paths of the two workspace folders and of the outside folder.
func confinementTree(f *testing.F) (root, root2, outside string) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root, root2, outside = filepath.Join(base, "root"), filepath.Join(base, "root2"), filepath.Join(base, "outside")
	for _, d := range []string{root + "/a/b", root2 + "/c", outside + "/o"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{root + "/a/b/file.txt", root2 + "/c/two.txt", outside + "/o/secret.txt"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		root + "/in":           "a",
		root + "/a/up":         "..",
		root + "/a/b/upup":     "../../..",
		root + "/abs_in":       root + "/a/b",
		root + "/to_root2":     root2 + "/c",
		root + "/out":          "../outside",
		root + "/abs_out":      outside + "/o",
		root + "/slash":        "/",
		root + "/loop1":        "loop2",
		root + "/loop2":        "loop1",
		root + "/self":         ".",
		root + "/dangling":     "nothere/x",
		root + "/dangling_out": "../outside/new",
		root + "/chain":        "in/b/../../out",
		root + "/a/b/back":     "../../in/b/file.txt",
		root2 + "/c/to_root":   "../../root/a",
		outside + "/o/in_root": root + "/a",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			f.Fatal(err)
		}
	}
	return root, root2, outside
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"a/b/file.txt", "in/b/file.txt", "abs_in/file.txt", "to_root2/two.txt", "out/o/secret.txt",
		"abs_out/secret.txt", "slash/etc/passwd", "loop1", "self/self/in", "dangling", "dangling_out",
		"chain/o", "a/up/a/up/out", "a/b/upup/outside", "a/b/back", "../outside/o", "/", "~/x", "~",
		"./~x", "a\x00b", "", ".", "..", "in/../../root/a", "to_root2/to_root/b/file.txt", "new/dir/file",
		"out/o/in_root/b", "a//b///file.txt", "a/b/file.txt/x", "a/up/../../outside", "a/b/upup/root2/c",
	} {
		f.Add(s)
	}
	root, root2, _ := confinementTree(f)
	ws, err := workspace.New(root, []string{root, root2})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ws.Close() })
	inside := func(p string) bool {
		for _, r := range []string{root, root2} {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
	f.Fuzz(func(t *testing.T, path string) {
		got, err := ws.Resolve(path)
		if err == nil {
			if !filepath.IsAbs(got) || filepath.Clean(got) != got {
				t.Fatalf("Resolve(%q) = %q: not absolute and clean", path, got)
			}
			if !inside(got) {
				t.Fatalf("Resolve(%q) = %q: outside the workspace folders", path, got)
			}
			// Its longest existing part is its own real path: no link is left to follow.
			existing := got
			for {
				if _, err := os.Lstat(existing); err == nil {
					break
				}
				existing = filepath.Dir(existing)
			}
			if real, err := filepath.EvalSymlinks(existing); err != nil || real != existing {
				t.Fatalf("Resolve(%q) = %q, whose existing part %s really is %s (%v)", path, got, existing, real, err)
			}
		}
		if path == "" || strings.ContainsRune(path, 0) || strings.HasPrefix(path, "~") {
			return
		}
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, abs)
		}
		real, rerr := filepath.EvalSymlinks(abs)
		if rerr != nil {
			return // does not exist (or a loop): only the invariants above apply
		}
		switch {
		case inside(real) && (err != nil || got != real):
			t.Fatalf("Resolve(%q) = %q, %v; its real location %s is inside", path, got, err, real)
		case !inside(real) && err == nil:
			t.Fatalf("Resolve(%q) = %q; its real location %s is outside", path, got, real)
		case !inside(real) && !errors.Is(err, workspace.ErrOutside):
			t.Fatalf("Resolve(%q): %v, which does not wrap ErrOutside", path, err)
		}
	})
}

package search_test

// Walk on a real tree through a real fence (package workspace's): every entry once, in walk
// order (depth first, in name order, a folder before its content), .git and what the ignore
// files exclude skipped, links not followed, Work's typed result handed to Visit for the
// files Want chose (the zero value for the rest), the same results whether Work runs inline
// or as tasks, and fs.SkipAll ending the walk without error.

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/workspace"
)

func walkTree(t *testing.T) (*workspace.Workspace, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"b.txt": "bb", "a/z.go": "zzz", "a/y/x.txt": "x", ".gitignore": "*.log\nbuild/\n",
		"skip.log": "no", "build/out": "no", ".git/HEAD": "ref", "a/.ignore": "secret*\n", "a/secret.txt": "no",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return ws, dir
}

func TestWalkOrderAndTypedResults(t *testing.T) {
	ws, dir := walkTree(t)
	want := []string{".gitignore=13", "a/", "a/.ignore=8", "a/y/", "a/y/x.txt=1", "a/z.go=3", "b.txt=2", "link@"}
	for _, inline := range []bool{false, true} {
		var got []string
		skipped, err := search.Walk(context.Background(), ws, dir, search.Spec[*int64]{
			Want:   func(n *search.Node) bool { return n.Type().IsRegular() },
			Inline: inline,
			Work: func(d search.Dir, n *search.Node) *int64 {
				fi, err := d.Root.Lstat(n.Name())
				if err != nil {
					t.Errorf("%s: %v", n.Rel(), err)
					return nil
				}
				size := fi.Size()
				return &size
			},
			Visit: func(n *search.Node, size *int64) error {
				switch {
				case n.IsDir() && size == nil:
					got = append(got, n.Rel()+"/")
				case n.Type()&fs.ModeSymlink != 0 && size == nil:
					got = append(got, n.Rel()+"@")
				case size != nil && n.Path() == filepath.Join(dir, n.Rel()):
					got = append(got, n.Rel()+"="+strconv.FormatInt(*size, 10))
				default:
					t.Errorf("visit of %s (path %s) got %v", n.Rel(), n.Path(), size)
				}
				return nil
			},
		})
		if err != nil || len(skipped) != 0 {
			t.Fatalf("inline %v: Walk: %v, skipped %v", inline, err, skipped)
		}
		if !slices.Equal(got, want) {
			t.Errorf("inline %v: visited\n%q\nwant\n%q", inline, got, want)
		}
	}
}

func TestWalkSkipAllStopsWithoutError(t *testing.T) {
	ws, dir := walkTree(t)
	visits := 0
	_, err := search.Walk(context.Background(), ws, dir, search.Spec[struct{}]{
		Visit: func(*search.Node, struct{}) error {
			visits++
			if visits == 2 {
				return fs.SkipAll
			}
			return nil
		},
	})
	if err != nil || visits != 2 {
		t.Errorf("Walk after SkipAll on the second visit: %v after %d visits, want nil after 2", err, visits)
	}
}

func TestWalkReportsAnIgnoreFileLeadingOutside(t *testing.T) {
	ws, dir := walkTree(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "ig"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "ig"), filepath.Join(dir, "a", "y", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	var got []string
	skipped, err := search.Walk(context.Background(), ws, filepath.Join(dir, "a"), search.Spec[struct{}]{
		Visit: func(n *search.Node, _ struct{}) error { got = append(got, n.Rel()); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0].Path != "a/y/.gitignore" || skipped[0].Reason != "it is a symbolic link to "+filepath.Join(outside, "ig")+", outside the workspace folders" {
		t.Errorf("skipped %+v, want a/y/.gitignore as a link outside", skipped)
	}
	// Its "*" did not apply: x.txt is still visited.
	if want := []string{".ignore", "y", "y/.gitignore", "y/x.txt", "z.go"}; !slices.Equal(got, want) {
		t.Errorf("visited %q, want %q", got, want)
	}
}

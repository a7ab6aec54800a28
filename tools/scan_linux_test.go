package tools_test

// search.Scan over a Workspace, which the checkpoints' snapshots walk it with: every file grep
// would search and nothing else, in walk order, each with the stat os.Lstat gives (links
// not followed), and a prompt stop when the context ends.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/search"
)

type scanned struct {
	path string
	st   search.ScanStat
	err  error
}

func TestScanVisitsEachFileInWalkOrderWithItsLstat(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{
		"b.txt": "bee\n", "a/z.go": "package z\n", "a/y/x.txt": "deep\n", "c/big.bin": string(make([]byte, 5000)),
		".gitignore": "ignored.log\nbuild/\n", "ignored.log": "no\n", "build/out": "no\n",
		".git/HEAD": "ref: refs/heads/main\n",
	})
	outside := testfs.RealTemp(t)
	testfs.WriteFiles(t, outside, map[string]string{"secret": "outside\n"})
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "link"))
	symlink(t, outside, filepath.Join(dir, "dirlink"))
	if err := os.Chmod(filepath.Join(dir, "a", "z.go"), 0o751); err != nil {
		t.Fatal(err)
	}

	var got []string
	err := search.Scan(context.Background(), ws, func(f search.ScanFile) *scanned {
		st, err := f.Lstat()
		return &scanned{f.Path, st, err}
	}, func(path string, s *scanned) error {
		if s == nil || s.path != path {
			t.Errorf("visit of %s got %#v: not its own file's work", path, s)
			return nil
		}
		if s.err != nil {
			t.Errorf("%s: Lstat: %v", path, s.err)
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		sys := fi.Sys().(*syscall.Stat_t)
		want := search.ScanStat{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano(),
			CTime: int64(sys.Ctim.Sec)*1e9 + int64(sys.Ctim.Nsec), Dev: uint64(sys.Dev), Ino: uint64(sys.Ino)}
		if s.st != want {
			t.Errorf("%s: Lstat = %+v, os.Lstat says %+v", path, s.st, want)
		}
		got = append(got, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range []string{".gitignore", "a/y/x.txt", "a/z.go", "b.txt", "c/big.bin", "dirlink", "link"} {
		want = append(want, filepath.Join(dir, p))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan visited\n%q\nwant (walk order; no .git, nothing ignored, links not followed)\n%q", got, want)
	}
}

func TestScanStopsWhenItsContextEnds(t *testing.T) {
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c", "d"} {
		for _, f := range []string{"1", "2", "3"} {
			files[d+"/"+f] = f
		}
	}
	ws, _ := newWorkspace(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	visits := 0
	err := search.Scan(ctx, ws, func(search.ScanFile) struct{} { return struct{}{} }, func(string, struct{}) error {
		visits++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || visits != 1 {
		t.Errorf("Scan after its context ended in the first visit: %v after %d visits, want context.Canceled after 1", err, visits)
	}
}

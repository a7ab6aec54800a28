//go:build linux

package tools_test

// The check-then-use race: while the file tools run, another goroutine keeps swapping a
// folder on their paths for a symbolic link to a folder outside the workspace (absolute
// and relative links, exchanged atomically with renameat2). Whenever the swap lands
// between Resolve's check and the use, the use must fail or stay inside: no result may
// hold the outside content, and nothing outside may be created or changed.

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/tools"
)

// snapshot returns every file under dir with its content (links as "-> target").
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSymlinkSwapRace(t *testing.T) {
	const (
		workers    = 4
		iterations = 1000 // per worker: 4,000 tool calls in all
		maxFlips   = 50_000_000
	)
	base := testfs.RealTemp(t)
	testfs.WriteFiles(t, base, map[string]string{
		"ws/d/f.txt":         "inside f\n",
		"ws/d/g.txt":         "inside g\n",
		"ws/keep.txt":        "inside keep\n",
		"ws/e/.keep":         "",
		"ws/.gitignore":      "/e/\n", // where the creates go: the walks stay small
		"outside/f.txt":      "OUTSIDE SECRET f\n",
		"outside/g.txt":      "OUTSIDE SECRET g\n",
		"outside/secret.txt": "OUTSIDE SECRET\n",
	})
	w, out := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	d, e := filepath.Join(w, "d"), filepath.Join(w, "e")
	alts := []string{filepath.Join(w, ".abs"), filepath.Join(w, ".rel")}
	symlink(t, out, alts[0])          // absolute link out
	symlink(t, "../outside", alts[1]) // relative link out
	symlink(t, "d", filepath.Join(w, "in"))
	ws, err := tools.NewWorkspace(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call := newCaller(t, ws)
	before := snapshot(t, out)

	// The flipper exchanges d or e with a link out and back, until the workers are done.
	// It always leaves them as it found them: real folders.
	stop := make(chan struct{})
	flips := make(chan int, 1)
	flipErr := make(chan error, 1)
	go func() {
		n := 0
		defer func() { flips <- n }()
		for ; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if n == maxFlips {
				<-stop
				return
			}
			target, alt := []string{d, e}[n%2], alts[n/2%len(alts)]
			for range 2 {
				if err := unix.Renameat2(unix.AT_FDCWD, target, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
					flipErr <- err
					<-stop
					return
				}
			}
		}
	}()

	ops := []func(wk, i int) []result{
		func(wk, i int) []result { return []result{call("read", `{"path":"d/f.txt"}`)} },
		func(wk, i int) []result { return []result{call("read", `{"path":"in/g.txt"}`)} },
		func(wk, i int) []result { return []result{call("ls", `{"path":"d"}`)} },
		func(wk, i int) []result { return []result{call("find", `{"pattern":"*","path":"d"}`)} },
		func(wk, i int) []result { return []result{call("find", `{"pattern":"*.txt"}`)} },
		func(wk, i int) []result { return []result{call("ls", `{"path":"e"}`)} },
		func(wk, i int) []result { return []result{call("grep", `{"pattern":"SECRET","path":"d"}`)} },
		func(wk, i int) []result { return []result{call("grep", `{"pattern":"SECRET|inside"}`)} },
		func(wk, i int) []result {
			return []result{call("write", fmt.Sprintf(`{"path":"e/new-%d-%d.txt","content":"mine"}`, wk, i))}
		},
		func(wk, i int) []result {
			return []result{call("write", fmt.Sprintf(`{"path":"e/sub%d/new-%d.txt","content":"mine"}`, wk, i))}
		},
		func(wk, i int) []result {
			return []result{
				call("read", `{"path":"d/g.txt"}`),
				call("edit", `{"path":"d/g.txt","edits":[{"oldText":" g","newText":" g."}]}`),
			}
		},
		func(wk, i int) []result {
			return []result{
				call("read", `{"path":"d/f.txt"}`),
				call("write", `{"path":"d/f.txt","content":"inside f\n"}`),
			}
		},
	}
	var mu sync.Mutex
	leaks := map[string]int{}
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Go(func() {
			for i := range iterations {
				for _, r := range ops[(wk+i)%len(ops)](wk, i) {
					// The outside files' content says OUTSIDE; no pattern or path does.
					if strings.Contains(r.text, "OUTSIDE") || strings.Contains(r.text, "secret.txt") {
						mu.Lock()
						leaks[r.text]++
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	n := <-flips
	select {
	case err := <-flipErr:
		t.Fatalf("flipping: %v", err)
	default:
	}
	t.Logf("%d tool calls of %d kinds against %d flips", workers*iterations, len(ops), n)
	if n == 0 {
		t.Fatal("the folder was never swapped: the race was not exercised")
	}
	for text, count := range leaks {
		t.Errorf("%d results showed what is outside the workspace:\n%s", count, text)
	}
	if after := snapshot(t, out); !maps.Equal(before, after) {
		t.Errorf("the outside folder changed:\nbefore %v\nafter  %v", before, after)
	}
	for _, p := range []string{d, e} {
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			t.Fatalf("%s is not the real folder at the end: %v %v", p, fi, err)
		}
	}
	// Every write cleaned up after itself, whatever happened to it.
	for p := range snapshot(t, w) {
		if strings.Contains(p, ".pid-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
	// And the tools still work on what is inside.
	if got := mustOK(t, call("read", `{"path":"keep.txt"}`)); !strings.Contains(got, "inside keep") {
		t.Errorf("read after the race: %q", got)
	}
}

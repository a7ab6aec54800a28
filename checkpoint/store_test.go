// This file tests the store's bound: past checkpoints.maxBytes the oldest closed sessions'
// checkpoints are given up (and say so), never a live session's, and nothing of a session
// given up is left behind; and the store's files are the user's alone.

package checkpoint

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// storedBlobs returns the hashes of the blobs in the store.
func storedBlobs(t *testing.T, st *Store) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(filepath.Join(st.Dir(), "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out[filepath.Base(filepath.Dir(p))+d.Name()] = true
		}
		return nil
	})
	return out
}

func TestBoundGivesUpOldClosedSessionsFirstNeverLiveOnes(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wsA, wsB := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeFiles(t, wsA, map[string]string{"big.txt": randomText(3000), "small.txt": "a small\n"})
	bigC := randomText(8000)
	bigB := randomText(3000)
	writeFiles(t, wsB, map[string]string{"big.txt": bigB, "small.txt": "b small\n"})
	st := newStore(t, 8000)

	// Session A runs a command, and is closed.
	a := openSession(t, st, "a", openWorkspace(t, wsA))
	must(t, a.Begin("a1", "change a"))
	runBash(t, a, wsA, "echo more >> small.txt && echo more >> big.txt")
	a.End()
	a.Close()
	if used, _ := st.blobBytes(); used > 8000 {
		t.Fatalf("session A alone takes %d bytes: the test's sizes are wrong", used)
	}

	// Session B, live, runs one too: together past the bound, A's checkpoints go.
	b := openSession(t, st, "b", openWorkspace(t, wsB))
	must(t, b.Begin("b1", "change b"))
	runBash(t, b, wsB, "echo more >> small.txt && echo more >> big.txt")
	used, err := st.Enforce()
	if err != nil || used > 8000 {
		t.Fatalf("Enforce: %d bytes, %v; want at most 8000", used, err)
	}
	if in := info(t, b, "b1"); in.Incomplete {
		t.Errorf("the live session's checkpoint was given up: %+v", in)
	}
	// Nothing of A is left: every blob still stored is one B may read; and all B may read
	// is still there (its files' states before its command, its stat cache).
	refB := b.hashes()
	stored := storedBlobs(t, st)
	for h := range stored {
		if !refB[h] {
			t.Errorf("blob %s is left in the store, though only the given-up session used it", h)
		}
	}
	b.mu.Lock()
	for _, f := range b.byID["b1"].files {
		if f.before.Hash != "" && !stored[f.before.Hash] {
			t.Errorf("the live session's %s: its content before was removed", f.path)
		}
	}
	b.mu.Unlock()
	for p, c := range b.cache {
		if c.st.Hash != "" && !stored[c.st.Hash] {
			t.Errorf("the live session's stat cache names %s, whose blob was removed", p)
		}
	}

	// A opened again says so, and its rewind names what it cannot restore.
	a = openSession(t, st, "a", openWorkspace(t, wsA))
	in := info(t, a, "a1")
	if !in.Incomplete || !strings.Contains(in.Reason, "checkpoints.maxBytes") {
		t.Errorf("the given-up checkpoint: incomplete=%v reason=%q, want the size limit named", in.Incomplete, in.Reason)
	}
	res, err := a.Rewind("a1", "a-rw", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := skippedReason(res, filepath.Join(wsA, "small.txt")); !strings.Contains(r, "checkpoints.maxBytes") {
		t.Errorf("small.txt of the given-up session skipped with %q, want the size limit named (%+v)", r, res)
	}
	a.Close()

	// B alone past the bound: nothing of it goes; what cannot be kept any more says so.
	writeFiles(t, wsB, map[string]string{"c.txt": bigC, "d.txt": randomText(100)})
	writeTool(t, b, filepath.Join(wsB, "c.txt"), "c changed\n")
	if used, err := st.Enforce(); err != nil || used <= 8000 {
		t.Fatalf("Enforce: %d bytes, %v; the live session alone should be past the bound", used, err)
	}
	if j, err := readJournal(b.path); err != nil || j.evicted {
		t.Errorf("the live session's journal was marked given up (%v)", err)
	}
	writeTool(t, b, filepath.Join(wsB, "d.txt"), "d changed\n")
	b.End()
	in = info(t, b, "b1")
	if !in.Incomplete || !strings.Contains(in.Reason, "d.txt") || !strings.Contains(in.Reason, "checkpoints.maxBytes") {
		t.Errorf("a file not kept because the store is full: incomplete=%v reason=%q", in.Incomplete, in.Reason)
	}
	res, err = b.Rewind("b1", "b-rw", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 3 {
		t.Errorf("rewind of the live session past the bound: %+v, want c.txt, small.txt and big.txt restored", res)
	}
	fileIs(t, filepath.Join(wsB, "c.txt"), bigC, 0o644)
	fileIs(t, filepath.Join(wsB, "small.txt"), "b small\n", 0o644)
	fileIs(t, filepath.Join(wsB, "big.txt"), bigB, 0o644)
	if r := skippedReason(res, filepath.Join(wsB, "d.txt")); !strings.Contains(r, "not kept") {
		t.Errorf("d.txt skipped with %q, want its content not kept", r)
	}

	// The store is the user's alone: folders 0700, files 0600.
	filepath.WalkDir(st.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// This file tests the checkpoints of the cases issue 23 names beside the main run: a nested
// repository, a file too big to keep, a symbolic link to a folder outside the workspace, a
// file a command makes unreadable, paths that became links or left the workspace, and
// parallel tool calls recording into one checkpoint.

package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestNestedRepositoryIsRecordedButNotItsGit(t *testing.T) {
	ws, w := newWorkspace(t, map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		"nested/.git/HEAD":   "ref: refs/heads/dev\n",
		"nested/.git/config": "[core]\n",
		"nested/src.go":      "package nested\n",
	})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	if err := s.Begin("cp1", "change the nested repository"); err != nil {
		t.Fatal(err)
	}
	runBash(t, s, ws, "echo '// changed' >> nested/src.go && echo new > nested/new.go && echo ref > nested/.git/ORIG_HEAD && echo x >> nested/.git/HEAD")
	s.End()

	want := map[string]string{filepath.Join(ws, "nested/src.go"): "modified", filepath.Join(ws, "nested/new.go"): "added"}
	if got := changes(info(t, s, "cp1")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the checkpoint lists %v, want %v (never a path in a .git folder)", got, want)
	}
	res, err := s.Rewind("cp1", "rw1", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	fileIs(t, filepath.Join(ws, "nested/src.go"), "package nested\n", 0o644)
	if _, err := os.Lstat(filepath.Join(ws, "nested/new.go")); !os.IsNotExist(err) {
		t.Errorf("nested/new.go was not removed: %v (%+v)", err, res)
	}
	// The nested .git is as the command left it: pid neither kept nor restored it.
	fileIs(t, filepath.Join(ws, "nested/.git/HEAD"), "ref: refs/heads/dev\nx\n", 0o644)
	fileIs(t, filepath.Join(ws, "nested/.git/ORIG_HEAD"), "ref\n", 0o644)
	fileIs(t, filepath.Join(ws, "nested/.git/config"), "[core]\n", 0o644)
}

func TestFileTooBigIsNotKeptAndSaysSo(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB
	ws, w := newWorkspace(t, map[string]string{"big.dat": big, "small.txt": "small\n"})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	if err := s.Begin("cp1", "append"); err != nil {
		t.Fatal(err)
	}
	runBash(t, s, ws, "echo more >> big.dat && echo more >> small.txt")
	s.End()

	in := info(t, s, "cp1")
	bigPath := filepath.Join(ws, "big.dat")
	if !in.Incomplete || !strings.Contains(in.Reason, bigPath) || !strings.Contains(in.Reason, "larger than 2 MiB") {
		t.Errorf("checkpoint: incomplete=%v reason=%q, want incomplete naming big.dat as larger than 2 MiB", in.Incomplete, in.Reason)
	}
	if changes(in)[bigPath] != "modified" {
		t.Errorf("big.dat is not listed as modified: %v", in.Files)
	}
	res, err := s.Rewind("cp1", "rw1", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The reason is that the content was not kept, not that someone changed the file.
	if r := skippedReason(res, bigPath); !strings.Contains(r, "not kept") || !strings.Contains(r, "larger than 2 MiB") {
		t.Errorf("big.dat skipped with %q, want its content not kept, larger than 2 MiB (result %+v)", r, res)
	}
	fileIs(t, bigPath, big+"more\n", 0o644)
	fileIs(t, filepath.Join(ws, "small.txt"), "small\n", 0o644)
	// force does not change it: there is nothing to restore from.
	res, err = s.Rewind("cp1", "rw2", true, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := skippedReason(res, bigPath); !strings.Contains(r, "not kept") {
		t.Errorf("forced: big.dat skipped with %q, want its content not kept", r)
	}
}

// A symbolic link to a folder outside the workspace is recorded as a link: the snapshots
// never follow it, so what a command writes through it (when nothing else stops it: the
// bash tool's sandbox refuses writes outside the workspace) is neither recorded nor
// touched by a rewind. Only the link itself is pid's to take back.
func TestLinkToOutsideIsNotFollowed(t *testing.T) {
	ws, w := newWorkspace(t, map[string]string{"in.txt": "in\n"})
	outside := filepath.Join(filepath.Dir(ws), "outside")
	writeFiles(t, outside, map[string]string{"o.txt": "outside\n"})
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	if err := s.Begin("cp1", "write through the link"); err != nil {
		t.Fatal(err)
	}
	runBash(t, s, ws, "echo changed > out/o.txt && echo new > out/n.txt && echo more >> in.txt")
	// write and edit are refused such a path (Resolve); were one recorded, it is kept as
	// outside the workspace, never read through the link.
	s.BeforeFile(filepath.Join(outside, "o.txt"))
	s.End()

	in := info(t, s, "cp1")
	want := map[string]string{filepath.Join(ws, "in.txt"): "modified"}
	if got := changes(in); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the checkpoint lists %v, want only in.txt", got)
	}
	res, err := s.Rewind("cp1", "rw1", true, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	fileIs(t, filepath.Join(ws, "in.txt"), "in\n", 0o644)
	fileIs(t, filepath.Join(outside, "o.txt"), "changed\n", 0o644)
	fileIs(t, filepath.Join(outside, "n.txt"), "new\n", 0o644)
	if target, err := os.Readlink(filepath.Join(ws, "out")); err != nil || target != outside {
		t.Errorf("the link is now %q, %v", target, err)
	}
	for _, p := range append(res.Restored, res.Removed...) {
		if !strings.HasPrefix(p, ws+"/") {
			t.Errorf("the rewind touched %s, outside the workspace", p)
		}
	}
	// Nothing outside the workspace is in the store either: no blob holds its content.
	filepath.WalkDir(filepath.Join(st.Dir(), "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); string(data) == "outside\n" || string(data) == "changed\n" {
				t.Errorf("blob %s holds a file outside the workspace: %q", p, data)
			}
		}
		return nil
	})
}

func TestFileMadeUnreadableIsRestored(t *testing.T) {
	if asNobody(t, t.Name()) {
		return
	}
	ws, w := newWorkspace(t, map[string]string{"f.txt": "before\n"})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	if err := s.Begin("cp1", "lock it"); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(ws, "f.txt")
	runBash(t, s, ws, "echo after > f.txt && chmod 000 f.txt")
	s.End()
	if fh, err := os.Open(f); err == nil {
		fh.Close()
		t.Fatalf("f.txt is still readable after chmod 000: the test shows nothing (uid %d)", os.Geteuid())
	}
	if got := changes(info(t, s, "cp1"))[f]; got != "modified" {
		t.Errorf("f.txt is listed as %q, want modified", got)
	}

	res, err := s.Rewind("cp1", "rw1", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 1 || res.Restored[0] != f || len(res.Skipped) != 0 {
		t.Errorf("rewind: %+v, want f.txt restored", res)
	}
	fileIs(t, f, "before\n", 0o644)
	// The unreadable content the command left was kept first: the rewind can be rewound.
	res, err = s.Rewind("rw1", "rw2", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 1 || len(res.Skipped) != 0 {
		t.Errorf("rewind of the rewind: %+v, want f.txt restored", res)
	}
	fileIs(t, f, "after\n", 0)
}

func TestRewindSkipsLinksAndPathsOutside(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws1, ws2 := filepath.Join(base, "ws1"), filepath.Join(base, "ws2")
	writeFiles(t, ws1, map[string]string{"link.txt": "l0\n", "hard.txt": "h0\n", "sub/f.txt": "f0\n", "ok.txt": "k0\n",
		"target.txt": "target\n", "other/f.txt": "other\n"})
	writeFiles(t, ws2, map[string]string{"far.txt": "far0\n"})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", openWorkspace(t, ws1, ws2))
	if err := s.Begin("cp1", "write five"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ws1 + "/link.txt", ws1 + "/hard.txt", ws1 + "/sub/f.txt", ws1 + "/ok.txt", ws2 + "/far.txt"} {
		writeTool(t, s, p, "changed\n")
	}
	s.End()
	s.Close()

	// Since: link.txt became a link to a file of the workspace, hard.txt got a second name,
	// the folder sub became a link to another folder of the workspace, and the session is
	// opened again with ws1 alone (far.txt is now outside its workspace).
	must(t, os.Remove(ws1+"/link.txt"))
	must(t, os.Symlink("target.txt", ws1+"/link.txt"))
	must(t, os.Link(ws1+"/hard.txt", ws1+"/hard2.txt"))
	must(t, os.RemoveAll(ws1+"/sub"))
	must(t, os.Symlink("other", ws1+"/sub"))
	s = openSession(t, st, "s1", openWorkspace(t, ws1))

	for _, force := range []bool{false, true} {
		res, err := s.Rewind("cp1", fmt.Sprintf("rw-%v", force), true, force, nil)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]string{
			ws1 + "/link.txt": "symbolic link", ws1 + "/hard.txt": "hard link", ws1 + "/sub/f.txt": "symbolic link",
			ws2 + "/far.txt": "outside the workspace",
		} {
			if r := skippedReason(res, p); !strings.Contains(r, want) {
				t.Errorf("force=%v: %s skipped with %q, want a reason saying %q", force, p, r, want)
			}
		}
		if len(res.Skipped) != 4 || len(res.Restored) > 1 {
			t.Errorf("force=%v: %+v, want four skipped, ok.txt restored", force, res)
		}
		fileIs(t, ws1+"/ok.txt", "k0\n", 0o644)
		fileIs(t, ws1+"/target.txt", "target\n", 0o644)
		fileIs(t, ws1+"/hard2.txt", "changed\n", 0o644)
		fileIs(t, ws1+"/other/f.txt", "other\n", 0o644)
		fileIs(t, ws2+"/far.txt", "changed\n", 0o644)
		if _, err := os.Lstat(ws1 + "/other/.f.txt"); err == nil {
			t.Errorf("a file was made in the folder the link leads to")
		}
	}
}

func TestParallelCallsRecordIntoOneCheckpoint(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("w%02d.txt", i)] = fmt.Sprintf("w%d\n", i)
		files[fmt.Sprintf("b%02d.txt", i)] = fmt.Sprintf("b%d\n", i)
	}
	ws, w := newWorkspace(t, files)
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	for round := range 3 {
		id := fmt.Sprintf("cp%d", round)
		if err := s.Begin(id, "parallel"); err != nil {
			t.Fatal(err)
		}
		s.Warm()
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				writeTool(t, s, filepath.Join(ws, fmt.Sprintf("w%02d.txt", i)), fmt.Sprintf("round %d\n", round))
			})
		}
		for i := range 4 {
			wg.Go(func() {
				var script strings.Builder
				for j := i; j < 20; j += 4 {
					fmt.Fprintf(&script, "echo round %d >> b%02d.txt; ", round, j)
				}
				runBash(t, s, ws, script.String())
			})
		}
		wg.Wait()
		s.End()
		got := changes(info(t, s, id))
		if len(got) != len(files) {
			t.Errorf("%s lists %d files, want the %d changed: %v", id, len(got), len(files), got)
		}
		for name := range files {
			if got[filepath.Join(ws, name)] != "modified" {
				t.Errorf("%s: %s is listed as %q, want modified", id, name, got[filepath.Join(ws, name)])
			}
		}
	}
	res, err := s.Rewind("cp0", "rw", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 || len(res.Restored) != len(files) {
		t.Errorf("rewind: %d restored, skipped %+v; want all %d restored", len(res.Restored), res.Skipped, len(files))
	}
	for name, content := range files {
		fileIs(t, filepath.Join(ws, name), content, 0o644)
	}
	s.Close()
	goleak.VerifyNone(t)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// randomText returns n bytes of text no other call returns.
func randomText(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var _ = context.Background

// Issue 31 L13: a symbolic link a run made is taken back by a rewind when it is still the
// same link (same target): a new link is removed, and a file the run replaced with a link
// comes back in the link's place; what the links lead to is never touched. A link someone
// pointed elsewhere after the run is skipped.
func TestRewindRemovesLinksTheRunMade(t *testing.T) {
	ws, w := newWorkspace(t, map[string]string{"keep.txt": "keep\n", "f.txt": "f0\n"})
	outside := filepath.Join(filepath.Dir(ws), "outside")
	writeFiles(t, outside, map[string]string{"o.txt": "outside\n"})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", w)
	if err := s.Begin("cp1", "make links"); err != nil {
		t.Fatal(err)
	}
	runBash(t, s, ws, "ln -s ../outside/o.txt new-link && ln -s ../.pid/settings.json dangling && rm f.txt && ln -s keep.txt f.txt && ln -s keep.txt moved")
	s.End()
	// After the run, someone points moved elsewhere: it is no longer the run's link.
	must(t, os.Remove(filepath.Join(ws, "moved")))
	must(t, os.Symlink("f.txt", filepath.Join(ws, "moved")))

	res, err := s.Rewind("cp1", "rw1", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"new-link", "dangling"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("the link %s the run made is still there: %+v", name, res)
		}
	}
	fileIs(t, filepath.Join(ws, "f.txt"), "f0\n", 0o644)
	fileIs(t, filepath.Join(ws, "keep.txt"), "keep\n", 0o644)
	fileIs(t, filepath.Join(outside, "o.txt"), "outside\n", 0o644)
	if r := skippedReason(res, filepath.Join(ws, "moved")); !strings.Contains(r, "symbolic link") {
		t.Errorf("moved, pointed elsewhere since: skipped with %q, want a reason saying symbolic link", r)
	}
	if len(res.Skipped) != 1 {
		t.Errorf("skipped %+v, want moved alone", res.Skipped)
	}
}

// Diff says before a rewind which files it would leave as they are, and why, as the rewind's
// result then does: a file changed by hand since pid wrote it (a rewind without force skips
// it), a path that became a symbolic link; a file only pid changed has no reason.
func TestDiffSaysWhatARewindWouldSkip(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n", "t.txt": "t\n"})
	st := newStore(t, 0)
	s := openSession(t, st, "s1", openWorkspace(t, ws))
	if err := s.Begin("cp1", "write three"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		writeTool(t, s, ws+"/"+f, "pid\n")
	}
	s.End()
	must(t, os.WriteFile(ws+"/b.txt", []byte("by hand\n"), 0o644))
	must(t, os.Remove(ws+"/c.txt"))
	must(t, os.Symlink("t.txt", ws+"/c.txt"))

	files, err := s.Diff("cp1")
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]string{}
	for _, f := range files {
		skip[filepath.Base(f.Path)] = f.Skip
	}
	want := map[string]string{"a.txt": "", "b.txt": ChangedSince, "c.txt": "it is now a symbolic link"}
	if !maps.Equal(skip, want) {
		t.Fatalf("Diff's skips = %q, want %q", skip, want)
	}
	res, err := s.Rewind("cp1", "rw", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if got := skippedReason(res, ws+"/"+name); got != w {
			t.Errorf("the rewind skipped %s with %q; Diff said %q", name, got, w)
		}
	}
}

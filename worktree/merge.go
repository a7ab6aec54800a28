// This file brings a child's work back: each file its worktree changed since the start
// state is merged into the main tree as it is now, three-way (base: the start state; ours:
// the main tree; theirs: the child's), as git merge-file does. A file that conflicts is
// left as it is in the main tree and reported with its conflicting hunks.

package worktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MaxMergeBytes caps a file the merge reads: a larger one that changed on both sides is a
// conflict, not merged.
const MaxMergeBytes = 64 << 20

// markerSize is the length of the conflict markers merge-file writes: long enough that a
// line of a file is not taken for one.
const markerSize = 32

// The labels of merge-file's three sides, as the conflicts name them.
const (
	labelMain     = "main"
	labelStart    = "start"
	labelSubagent = "subagent"
)

// Change is a file the merge changed in the main tree.
type Change struct {
	// Path is the file's absolute path in the main tree.
	Path string `json:"path"`
	// Change is "added", "modified" or "deleted".
	Change string `json:"change"`
}

// Hunk is one conflicting part of a file: its lines in each of the three versions.
type Hunk struct {
	// Main is the main tree's lines now; Start the lines when the child started; Subagent
	// the child's.
	Main     string `json:"main"`
	Start    string `json:"start"`
	Subagent string `json:"subagent"`
}

// Conflict is a file the merge left as it is in the main tree.
type Conflict struct {
	// Path is the file's absolute path in the main tree.
	Path string `json:"path"`
	// Reason says why it was not applied.
	Reason string `json:"reason"`
	// Hunks are the conflicting parts of a text file changed on both sides.
	Hunks []Hunk `json:"hunks,omitempty"`
}

// Result is what a merge did, in the shape of task's details.worktree.
type Result struct {
	// Path is the worktree's folder (gone unless Kept).
	Path string `json:"path"`
	// Applied are the files changed in the main tree, in path order.
	Applied []Change `json:"applied"`
	// Conflicts are the files left as they are, in path order.
	Conflicts []Conflict `json:"conflicts"`
	// Kept is set when the worktree and its branch were kept: something could not be
	// applied.
	Kept bool `json:"-"`
	// Branch is the worktree's branch.
	Branch string `json:"-"`
}

// MergeOptions say how a merge tells its caller what it changes.
type MergeOptions struct {
	// Writing, when set, is called with the absolute path of a main-tree file right before
	// the merge changes (or adds, or deletes) it, and the function it returns right after
	// (checkpoint.Session.Writing fits: the parent's checkpoint keeps the file's state
	// before). Called from Merge's goroutine, one file at a time; it must not call back
	// into this package for the same repository (Merge holds its lock).
	Writing func(path string) (done func())
}

// Merge applies the child's work to the main tree: every file of its worktree (tracked or
// not, ignored files excepted) that differs from the start state is merged into the main
// tree file as it is now, three-way: a file the main tree did not change since takes the
// child's version (added, changed, deleted, its mode); one both changed is merged as git
// merge-file does, and when that conflicts (or the file is binary, or one side deleted it)
// it is left as it is and reported. Files outside the child's workspace folder are not
// applied (reported as conflicts). Then, when everything was applied, the worktree, its
// branch and its start ref are removed; else they are kept (Result.Kept, Path) for the
// person to look at, and Discard removes them later.
//
// Contract: call it once, after the child ended (nothing may write the worktree any more).
// Safe for concurrent use: merges of one repository run one at a time, in the order they
// were called, and never alongside a Create. The Result is valid even with an error: err
// is a failure to look at the child's work (nothing applied, the worktree kept) or to
// remove the worktree after applying (the Result says what was applied).
func (t *Tree) Merge(ctx context.Context, o MergeOptions) (Result, error) {
	res := Result{Path: t.Path, Branch: t.Branch, Applied: []Change{}, Conflicts: []Conflict{}, Kept: true}
	r := t.repo
	unlock, err := lockRepo(ctx, r.common)
	if err != nil {
		return res, err
	}
	defer unlock()
	out, err := git(ctx, t.Path, r.env(), nil, 1<<20, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	child, _, err := r.snapshot(ctx, t.Path, strings.TrimSpace(string(out)), t.tmp, t.start)
	if err != nil {
		return res, err
	}
	entries, err := t.changes(ctx, child)
	if err != nil {
		return res, err
	}
	main, err := os.OpenRoot(r.top)
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	defer main.Close()
	wt, err := os.OpenRoot(t.Path)
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	defer wt.Close()
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		ch, c := t.mergeOne(ctx, main, wt, e, o)
		if ch != nil {
			res.Applied = append(res.Applied, *ch)
		}
		if c != nil {
			res.Conflicts = append(res.Conflicts, *c)
		}
	}
	if len(res.Conflicts) > 0 {
		return res, nil
	}
	res.Kept = false
	if err := t.remove(ctx); err != nil {
		res.Kept = true
		return res, err
	}
	return res, nil
}

// entry is one path the child changed: its modes and blobs at the start and in the
// child's tree ("000000" and the zero id for an absent side).
type entry struct {
	path             string // slash-separated, below the main tree's top
	oldMode, newMode string
	oldID, newID     string
}

// changes returns the paths that differ between the start tree and child, in path order.
func (t *Tree) changes(ctx context.Context, child string) ([]entry, error) {
	out, err := git(ctx, t.repo.top, t.repo.env(), nil, 0, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", t.start, child)
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	var list []entry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("worktree: git diff-tree said %q", fields[i])
		}
		list = append(list, entry{path: fields[i+1], oldMode: meta[0], newMode: meta[1], oldID: meta[2], newID: meta[3]})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	return list, nil
}

// side is one version of a file: absent, a regular file (its content and mode), a
// symbolic link (its target), or something else.
type side struct {
	exists   bool
	kind     kind
	data     []byte
	perm     fs.FileMode
	tooLarge bool
}

type kind int

const (
	kindFile kind = iota
	kindLink
	kindDir
	kindSubmodule
	kindOther
)

func (s side) exec() bool { return s.perm&0o111 != 0 }

// same reports whether a and b are the same version.
func same(a, b side) bool {
	if a.exists != b.exists {
		return false
	}
	if !a.exists {
		return true
	}
	return a.kind == b.kind && (a.kind != kindFile || a.exec() == b.exec()) && !a.tooLarge && !b.tooLarge && bytes.Equal(a.data, b.data)
}

// readSide reads the file rel of root (a work tree).
func readSide(root *os.Root, rel string) (side, error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return side{}, nil
	}
	if err != nil {
		return side{}, err
	}
	s := side{exists: true, perm: fi.Mode().Perm()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(rel)
		if err != nil {
			return side{}, err
		}
		s.kind, s.data = kindLink, []byte(target)
	case fi.IsDir():
		s.kind = kindDir
	case fi.Mode().IsRegular():
		s.kind = kindFile
		if fi.Size() > MaxMergeBytes {
			s.tooLarge = true
			return s, nil
		}
		if s.data, err = root.ReadFile(rel); err != nil {
			return side{}, err
		}
	default:
		s.kind = kindOther
	}
	return s, nil
}

// baseSide returns the start state's version of e, as the worktree had it on disk (the
// repository's conversions applied, as a checkout does).
func (t *Tree) baseSide(ctx context.Context, e entry) (side, error) {
	switch e.oldMode {
	case "000000":
		return side{}, nil
	case "160000":
		return side{exists: true, kind: kindSubmodule}, nil
	case "120000":
		out, err := git(ctx, t.repo.top, t.repo.env(), nil, 1<<16, "cat-file", "blob", e.oldID)
		return side{exists: true, kind: kindLink, data: out}, err
	}
	s := side{exists: true, kind: kindFile, perm: 0o644}
	if e.oldMode == "100755" {
		s.perm = 0o755
	}
	out, err := git(ctx, t.repo.top, t.repo.env(), nil, MaxMergeBytes, "cat-file", "--filters", "--path="+e.path, e.oldID)
	if errors.Is(err, errOutputLimit) {
		s.tooLarge = true
		return s, nil
	}
	s.data = out
	return s, err
}

// mergeOne merges one path: the change it made in the main tree, or the conflict that
// kept it from it (neither when the main tree has the child's version already).
func (t *Tree) mergeOne(ctx context.Context, main, wt *os.Root, e entry, o MergeOptions) (*Change, *Conflict) {
	rel := filepath.FromSlash(e.path)
	abs := filepath.Join(t.repo.top, rel)
	conflict := func(format string, args ...any) (*Change, *Conflict) {
		return nil, &Conflict{Path: abs, Reason: fmt.Sprintf(format, args...)}
	}
	if t.rel != "" && rel != t.rel && !strings.HasPrefix(rel, t.rel+string(filepath.Separator)) {
		return conflict("outside the subagent's workspace folder %s: not applied", filepath.Join(t.repo.top, t.rel))
	}
	if e.oldMode == "160000" || e.newMode == "160000" {
		return conflict("a submodule: pid does not apply a change of a submodule's commit")
	}
	ours, err := readSide(main, rel)
	if err != nil {
		return conflict("the main tree's file cannot be read: %v", err)
	}
	theirs, err := readSide(wt, rel)
	if err != nil {
		return conflict("the subagent's file cannot be read: %v", err)
	}
	base, err := t.baseSide(ctx, e)
	if err != nil {
		return conflict("the file as the subagent started with it cannot be read: %v", err)
	}
	if same(ours, theirs) {
		return nil, nil
	}
	if ours.tooLarge || theirs.tooLarge || base.tooLarge {
		return conflict("larger than %d MiB: pid does not merge it", MaxMergeBytes>>20)
	}
	if theirs.kind == kindDir || theirs.kind == kindOther {
		return conflict("the subagent left something other than a file or a symbolic link there")
	}
	change := "modified"
	switch {
	case !ours.exists:
		change = "added"
	case !theirs.exists:
		change = "deleted"
	}
	if same(ours, base) {
		if ours.kind == kindDir || ours.kind == kindOther {
			return conflict("the main tree has something other than a file there")
		}
		if err := t.write(main, rel, abs, theirs, ours, theirs.exec(), o); err != nil {
			return conflict("the subagent's version could not be written: %v", err)
		}
		return &Change{Path: abs, Change: change}, nil
	}
	switch {
	case !ours.exists:
		return conflict("deleted in the main tree since the subagent started, and changed by the subagent")
	case !theirs.exists:
		return conflict("deleted by the subagent, and changed in the main tree since it started")
	case ours.kind != kindFile || theirs.kind != kindFile || base.exists && base.kind != kindFile:
		return conflict("changed in the main tree since the subagent started, and by the subagent, and not both as files (a symbolic link, a folder): pid does not merge it")
	case binary(ours.data) || binary(theirs.data) || binary(base.data):
		return conflict("a binary file changed in the main tree since the subagent started, and by the subagent")
	}
	merged, hunks, err := t.mergeFile(ctx, ours.data, base.data, theirs.data)
	if err != nil {
		return conflict("git merge-file failed: %v", err)
	}
	if len(hunks) > 0 {
		return nil, &Conflict{Path: abs, Reason: fmt.Sprintf("changed in the main tree since the subagent started, and by the subagent, in the same places (%d conflicting hunks)", len(hunks)), Hunks: hunks}
	}
	exec := ours.exec()
	if !base.exists || ours.exec() == base.exec() {
		exec = theirs.exec()
	}
	merged2 := theirs
	merged2.data = merged
	if err := t.write(main, rel, abs, merged2, ours, exec, o); err != nil {
		return conflict("the merged file could not be written: %v", err)
	}
	return &Change{Path: abs, Change: change}, nil
}

// binary reports whether data looks binary, as git decides: a NUL byte in its first 8000
// bytes.
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// mergeFile merges ours and theirs from base as git merge-file does; hunks are the
// conflicts (none when merged is the clean result).
func (t *Tree) mergeFile(ctx context.Context, ours, base, theirs []byte) (merged []byte, hunks []Hunk, err error) {
	dir, err := os.MkdirTemp(t.tmp, ".pid-merge-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	for name, data := range map[string][]byte{"ours": ours, "base": base, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, nil, err
		}
	}
	out, err := git(ctx, dir, t.repo.env(), nil, 4*MaxMergeBytes, "merge-file", "-p", "--diff3", fmt.Sprintf("--marker-size=%d", markerSize),
		"-L", labelMain, "-L", labelStart, "-L", labelSubagent, "ours", "base", "theirs")
	switch code := exitCode(err); {
	case err == nil:
		return out, nil, nil
	case code > 0 && code < 128:
		hunks = parseHunks(out)
		if len(hunks) == 0 {
			return nil, nil, fmt.Errorf("it reported %d conflicts that could not be read", code)
		}
		return nil, hunks, nil
	}
	return nil, nil, err
}

// parseHunks returns the conflicts of merge-file's --diff3 output.
func parseHunks(out []byte) []Hunk {
	open := strings.Repeat("<", markerSize) + " " + labelMain
	baseMark := strings.Repeat("|", markerSize) + " " + labelStart
	sep := strings.Repeat("=", markerSize)
	end := strings.Repeat(">", markerSize) + " " + labelSubagent
	var hunks []Hunk
	var cur *Hunk
	var dst *strings.Builder
	var mainB, startB, subB strings.Builder
	for _, line := range strings.SplitAfter(string(out), "\n") {
		bare := strings.TrimRight(line, "\r\n")
		switch {
		case bare == open:
			cur = &Hunk{}
			mainB.Reset()
			startB.Reset()
			subB.Reset()
			dst = &mainB
		case cur != nil && bare == baseMark:
			dst = &startB
		case cur != nil && bare == sep:
			dst = &subB
		case cur != nil && bare == end:
			cur.Main, cur.Start, cur.Subagent = mainB.String(), startB.String(), subB.String()
			hunks = append(hunks, *cur)
			cur, dst = nil, nil
		case dst != nil:
			dst.WriteString(line)
		}
	}
	return hunks
}

// write puts s (a file of mode exec, a link, or nothing: a deletion) at rel of the main
// tree, whose version there is ours, telling o.Writing around it. A file is written to a
// temporary file beside it and renamed over it (keeping ours's permissions, the exec bits
// as asked); a new file gets the umask's.
func (t *Tree) write(main *os.Root, rel, abs string, s, ours side, exec bool, o MergeOptions) error {
	if o.Writing != nil {
		done := o.Writing(abs)
		defer done()
	}
	if !s.exists {
		if err := main.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Folders the deletion emptied go too, as git's checkout does.
		for d := filepath.Dir(rel); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			if main.Remove(d) != nil {
				break
			}
		}
		return nil
	}
	if d := filepath.Dir(rel); d != "." {
		if err := main.MkdirAll(d, 0o777); err != nil {
			return err
		}
	}
	if s.kind == kindLink {
		if ours.exists {
			if err := main.Remove(rel); err != nil {
				return err
			}
		}
		return main.Symlink(string(s.data), rel)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".pid-merge-"+hex.EncodeToString(rnd[:]))
	create := fs.FileMode(0o666)
	if exec {
		create = 0o777
	}
	f, err := main.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			main.Remove(tmp)
		}
	}()
	if _, err := f.Write(s.data); err != nil {
		return err
	}
	if ours.exists && ours.kind == kindFile {
		perm := ours.perm &^ 0o111
		if exec {
			perm |= (ours.perm & 0o444) >> 2
		}
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := main.Rename(tmp, rel); err != nil {
		main.Remove(tmp)
		ok = true
		return err
	}
	ok = true
	return nil
}

// Text returns what the task result says of the merge, in words for the model.
func (r Result) Text() string {
	var b strings.Builder
	if len(r.Applied) == 0 {
		b.WriteString("The subagent worked in its own git worktree; none of its changes needed applying to the main tree.")
	} else {
		fmt.Fprintf(&b, "The subagent worked in its own git worktree; its changes were merged into the main tree (%d files):", len(r.Applied))
		for _, c := range r.Applied {
			fmt.Fprintf(&b, "\n- %s %s", c.Change, c.Path)
		}
	}
	if len(r.Conflicts) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n\n%d files were NOT applied: the main tree keeps its version of them.", len(r.Conflicts))
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "\n- %s: %s", c.Path, c.Reason)
		for _, h := range c.Hunks {
			fmt.Fprintf(&b, "\n<<<<<<< main tree now\n%s||||||| when the subagent started\n%s=======\n%s>>>>>>> subagent", nl(h.Main), nl(h.Start), nl(h.Subagent))
		}
	}
	if r.Kept {
		fmt.Fprintf(&b, "\n\nThe subagent's worktree is kept at %s (branch %s) with its version of these files.", r.Path, r.Branch)
	}
	return b.String()
}

// nl returns s ending with a line end (a hunk side is whole lines, the last one perhaps
// without its line end).
func nl(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

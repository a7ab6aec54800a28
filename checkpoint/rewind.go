// This file lists a session's checkpoints, diffs one against the files as they are now,
// and rewinds the files to one, after keeping their current state in a checkpoint of the
// rewind's own.

package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/internal/udiff"
)

// ErrUnknown is wrapped by the error for a checkpoint id the session does not have.
var ErrUnknown = errors.New("unknown checkpoint")

// FileChange is one file a checkpoint's run changed.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // "added", "modified" or "deleted"
}

// Info describes one checkpoint.
type Info struct {
	ID        string       `json:"id"`
	Prompt    string       `json:"prompt"`
	Timestamp string       `json:"timestamp"`
	Files     []FileChange `json:"files"`
	// Incomplete says that some of the run's changes cannot be taken back; Reason says which
	// and why.
	Incomplete bool   `json:"incomplete,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Safety is, for a rewind's own checkpoint, the checkpoint it rewound to.
	Safety string `json:"-"`
}

// List returns the session's checkpoints, oldest first.
func (s *Session) List() []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Info, 0, len(s.j.cps))
	for _, c := range s.j.cps {
		in := Info{ID: c.id, Prompt: c.prompt, Timestamp: c.time.Format(time.RFC3339Nano), Files: []FileChange{}, Safety: c.safety}
		for _, p := range c.order {
			if ch := changeOf(c.files[p]); ch != "" {
				in.Files = append(in.Files, FileChange{Path: p, Change: ch})
			}
		}
		reasons := c.incomplete
		if s.j.evicted {
			reasons = append(reasons[:len(reasons):len(reasons)], errEvicted.Error())
		}
		if len(reasons) > 0 {
			in.Incomplete = true
			in.Reason = joinReasons(reasons)
		}
		out = append(out, in)
	}
	return out
}

// joinReasons joins reasons into one text, at most the first ten named.
func joinReasons(reasons []string) string {
	var b bytes.Buffer
	for i, r := range reasons {
		if i == 10 {
			fmt.Fprintf(&b, "; and %d more", len(reasons)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r)
	}
	return b.String()
}

// changeOf says what a run did to a file: "" when it ended as it began.
func changeOf(f *fileRec) string {
	gone := f.after != nil && f.after.Kind == "none"
	switch {
	case f.after != nil && same(f.before, *f.after):
		return ""
	case f.before.Kind == "none" && gone:
		return ""
	case f.before.Kind == "none":
		return "added"
	case gone:
		return "deleted"
	}
	return "modified"
}

// Has reports whether the session has the checkpoint id.
func (s *Session) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id] != nil
}

// targets returns, for every file the checkpoint id's run and the runs after it changed,
// its state before that run, in the order the files were first changed.
func (s *Session) targetsLocked(id string) ([]*fileRec, error) {
	k := -1
	for i, c := range s.j.cps {
		if c.id == id {
			k = i
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknown, id)
	}
	seen := map[string]bool{}
	var out []*fileRec
	for _, c := range s.j.cps[k:] {
		for _, p := range c.order {
			if !seen[p] {
				seen[p] = true
				out = append(out, c.files[p])
			}
		}
	}
	return out, nil
}

// FileDiff is one file's change from a checkpoint to now.
type FileDiff struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	Diff   string `json:"diff"`
	// Skip says why a rewind of the files (without force) would leave it as it is, as its
	// result's skipped would; "" when it would be restored.
	Skip string `json:"skip,omitempty"`
}

// Diff returns, for each file the checkpoint id's run and the runs after it changed, the
// unified diff from its state before that run to the file as it is now, and why a rewind
// would leave it as it is, if it would; files that are as they were are left out.
func (s *Session) Diff(id string) ([]FileDiff, error) {
	s.mu.Lock()
	targets, err := s.targetsLocked(id)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := []FileDiff{}
	for _, t := range targets {
		now, _, rel, err := s.current(t.path)
		if err != nil {
			out = append(out, FileDiff{Path: t.path, Change: "modified", Diff: fmt.Sprintf("(cannot be compared: %v)\n", errText(err))})
			continue
		}
		if same(t.before, now) {
			continue
		}
		fd := FileDiff{Path: t.path, Change: "modified"}
		switch {
		case t.before.Kind == "none":
			fd.Change = "added"
		case now.Kind == "none":
			fd.Change = "deleted"
		}
		fd.Diff = s.diffText(t.before, now, t.path, rel, fd.Change)
		fd.Skip = s.check(t, false).reason
		out = append(out, fd)
	}
	return out, nil
}

// diffText returns the unified diff from before to now of the file at p (rel inside its
// workspace folder), or a sentence when no text diff can be made.
func (s *Session) diffText(before, now State, p, rel, change string) string {
	old, err := s.contentOf(before)
	if err != nil {
		return fmt.Sprintf("(the content before the change was not kept: %v)\n", err)
	}
	var cur []byte
	if now.Kind == "file" {
		root, r, err := s.ws.At(p)
		if err == nil {
			cur, err = root.ReadFile(r)
		}
		if err != nil {
			return fmt.Sprintf("(the file cannot be read now: %v)\n", errText(err))
		}
	} else if now.Kind == "link" {
		cur = []byte("symbolic link to " + now.Link + "\n")
	}
	if !isText(old) || !isText(cur) {
		return "Binary files differ\n"
	}
	return udiff.FileDiff(path.Clean(rel), string(old), string(cur), change == "added", change == "deleted")
}

// contentOf returns what a state's file held ("" for none, the target for a link).
func (s *Session) contentOf(st State) ([]byte, error) {
	switch st.Kind {
	case "none":
		return nil, nil
	case "link":
		return []byte("symbolic link to " + st.Link + "\n"), nil
	case "file":
		if st.Hash == "" {
			return nil, errors.New(st.NotKept)
		}
		return s.st.get(st.Hash)
	}
	return nil, errors.New("not a regular file")
}

// isText reports whether data looks like text (UTF-8 without NUL).
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// Skipped is a file a rewind left as it is, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Result is what a rewind did.
type Result struct {
	Restored []string  `json:"restored"`
	Removed  []string  `json:"removed"`
	Skipped  []Skipped `json:"skipped"`
}

// Writer writes a text file's new content through the editor (fs/write_text_file), so that
// its open buffers follow; nil writes to disk. Contract: called from the rewind's goroutine
// with an absolute path inside the workspace; an error leaves the file skipped.
type Writer func(path, text string) error

// Rewind opens the checkpoint safetyID (a rewind's own), and, when files is true, returns
// every file the checkpoint id's run and the runs after it changed to its state before
// that run: files they added are removed, files they deleted come back. A file that changed
// since pid last wrote it is skipped unless force; a path that is now a symbolic link (but
// the very link a run left there, same target, which is removed or replaced) or a hard
// link, or lies outside the workspace folders, is always skipped; so is one whose
// content before was not kept. The current state of each file is kept in the safety
// checkpoint first, so that the rewind itself can be rewound.
//
// Contract: not called while a prompt of the session runs (the caller refuses that).
func (s *Session) Rewind(id, safetyID string, files, force bool, write Writer) (Result, error) {
	res := Result{Restored: []string{}, Removed: []string{}, Skipped: []Skipped{}}
	s.mu.Lock()
	targets, err := s.targetsLocked(id)
	s.mu.Unlock()
	if err != nil {
		return res, err
	}
	prompt := ""
	if c := s.cp(id); c != nil {
		prompt = "Before rewinding to: " + c.prompt
	}
	if err := s.begin(safetyID, prompt, id); err != nil {
		return res, err
	}
	defer s.End()
	if !files {
		return res, nil
	}
	for _, t := range targets {
		reason, removed, err := s.restore(t, force, write)
		switch {
		case err != nil:
			res.Skipped = append(res.Skipped, Skipped{Path: t.path, Reason: err.Error()})
		case reason != "":
			res.Skipped = append(res.Skipped, Skipped{Path: t.path, Reason: reason})
		case removed:
			res.Removed = append(res.Removed, t.path)
		default:
			res.Restored = append(res.Restored, t.path)
		}
	}
	return res, nil
}

// cp returns the checkpoint id, or nil.
func (s *Session) cp(id string) *cp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// checked is what check found of a file a rewind would return to its state before.
type checked struct {
	root   *os.Root
	rel    string
	fi     fs.FileInfo
	exists bool
	// same: the file is as it was before (nothing to do); reason: why it is skipped.
	same   bool
	reason string
}

// check runs the checks of restore that only look (see restore), in its order: why a
// rewind would leave t as it is, or that it is as it was already. Diff uses it to say before
// the rewind which files it would skip.
func (s *Session) check(t *fileRec, force bool) checked {
	root, rel, aterr := s.ws.At(t.path)
	if aterr != nil {
		return checked{reason: "it is outside the workspace folders"}
	}
	c := checked{root: root, rel: rel}
	if link := linkOnTheWay(root, rel); link != "" {
		c.reason = "a folder on its path (" + link + ") is now a symbolic link"
		return c
	}
	fi, lerr := root.Lstat(rel)
	c.fi, c.exists = fi, lerr == nil
	if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
		c.reason = "it cannot be looked at: " + errText(lerr)
		return c
	}
	if c.exists && fi.Mode()&fs.ModeSymlink != 0 && t.before.Kind != "link" && !s.leftLink(t.path, root, rel) {
		c.reason = "it is now a symbolic link"
		return c
	}
	if c.exists && fi.Mode().IsRegular() && hardLinked(fi) {
		c.reason = "it is now a hard link (the other names would change too)"
		return c
	}
	now := Absent
	if c.exists {
		now = s.stateOf(root, rel, fi, maxToolFileBytes, false)
	}
	if same(now, t.before) {
		c.same = true
		return c
	}
	switch t.before.Kind {
	case "file":
		if t.before.Hash == "" {
			c.reason = "its content before was not kept: " + t.before.NotKept
			return c
		}
	case "none", "link":
	default:
		c.reason = "it was not a regular file or a link"
		return c
	}
	s.mu.Lock()
	last, known := s.last[t.path]
	s.mu.Unlock()
	if !force && known && last != nil && !same(now, *last) {
		c.reason = ChangedSince
	}
	return c
}

// ChangedSince is why a rewind without force leaves a file that changed since pid last wrote
// it (a person's edit, another program).
const ChangedSince = "it changed since pid last wrote it (pass force to restore it anyway)"

// restore returns one file to t.before. It returns a reason when the file is skipped.
//
// What is checked, in order, before anything is written: the path lies in a workspace
// folder; no folder on its way is now a symbolic link (os.Root would follow one that stays
// inside the folder, and the restore would land on another file); the file is not now a
// symbolic link (unless it was one, or is the very link a run left there: leftLink) nor a
// hard link; its content before was kept; it did
// not change since pid last wrote it (unless force). The checks and the write are not
// atomic: a program changing the tree during a rewind can still race it.
func (s *Session) restore(t *fileRec, force bool, write Writer) (reason string, removed bool, err error) {
	c := s.check(t, force)
	if c.reason != "" || c.same {
		return c.reason, c.same && t.before.Kind == "none", nil
	}
	root, rel, fi, exists := c.root, c.rel, c.fi, c.exists
	var data []byte
	if t.before.Kind == "file" {
		if data, err = s.st.get(t.before.Hash); err != nil {
			return err.Error(), false, nil
		}
	}
	// Keep what is there now, in the rewind's own checkpoint, before changing it.
	if exists {
		s.st.gate.RLock() // from the put to the journal line
		cur := s.keepCurrent(root, rel, fi)
		if cur.Kind == "file" && cur.Hash == "" {
			s.st.gate.RUnlock()
			return "its current content could not be kept first (" + cur.NotKept + ")", false, nil
		}
		s.mu.Lock()
		s.noteLocked(s.cur, t.path, cur)
		s.mu.Unlock()
		s.st.gate.RUnlock()
	} else {
		s.mu.Lock()
		s.noteLocked(s.cur, t.path, Absent)
		s.mu.Unlock()
	}
	switch t.before.Kind {
	case "none":
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "it could not be removed: " + errText(err), false, nil
		}
		removed = true
	case "link":
		if exists {
			if err := root.Remove(rel); err != nil {
				return "it could not be replaced: " + errText(err), false, nil
			}
		}
		if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
			return "its folder could not be made: " + errText(err), false, nil
		}
		if err := root.Symlink(t.before.Link, rel); err != nil {
			return "the link could not be made: " + errText(err), false, nil
		}
	case "file":
		if err := writeFile(root, rel, t.path, data, fs.FileMode(t.before.Mode), exists && fi.Mode().IsRegular(), write); err != nil {
			return "it could not be written: " + errText(err), false, nil
		}
	}
	after, _, _, err := s.current(t.path)
	if err == nil {
		s.mu.Lock()
		s.afterLocked(s.cur, t.path, after, "")
		s.mu.Unlock()
	}
	return "", removed, nil
}

// leftLink reports whether the symbolic link rel under root is the one a run left at path:
// the state pid last recorded there is a link, with the same target. Removing it (or
// putting the file back in its place) changes the link, never what it leads to.
func (s *Session) leftLink(path string, root *os.Root, rel string) bool {
	s.mu.Lock()
	last := s.last[path]
	s.mu.Unlock()
	if last == nil || last.Kind != "link" {
		return false
	}
	target, err := root.Readlink(rel)
	return err == nil && target == last.Link
}

// linkOnTheWay returns the first folder on the way to rel under root that is a symbolic
// link (relative to root), or "".
func linkOnTheWay(root *os.Root, rel string) string {
	dir := path.Dir(rel)
	if dir == "." {
		return ""
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(p)
		if err != nil {
			return "" // missing: made again; anything else fails the write, which says why
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// keepCurrent keeps the current content of the regular file rel under root (whose lstat
// is fi) in the store, past its bound if need be, and returns its state. A file whose owner cannot read it (a command
// ran chmod 000) is read with its owner's read bit set for the moment, then given its mode
// back: the rewind is about to replace it, and its content must be kept first so that the
// rewind can be rewound.
func (s *Session) keepCurrent(root *os.Root, rel string, fi fs.FileInfo) State {
	cur := s.stateKept(root, rel, fi, maxToolFileBytes, keepAlways)
	perm := fi.Mode().Perm()
	if cur.Kind != "file" || cur.Hash != "" || perm&0o400 != 0 || !strings.HasPrefix(cur.NotKept, "unreadable") {
		return cur
	}
	if root.Chmod(rel, perm|0o400) != nil {
		return cur
	}
	again := s.stateKept(root, rel, fi, maxToolFileBytes, keepAlways)
	if err := root.Chmod(rel, perm); err != nil {
		return cur
	}
	return again
}

// writeFile gives the file rel under root the content data and permission bits perm:
// through the editor when write is set and data is text, else to a temporary file renamed
// into place (a file pid made unwritable is replaced all the same).
func writeFile(root *os.Root, rel, abs string, data []byte, perm fs.FileMode, regular bool, write Writer) error {
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return err
	}
	if write != nil && isText(data) && (regular || !exists(root, rel)) {
		if err := write(abs, string(data)); err != nil {
			return err
		}
		return root.Chmod(rel, perm)
	}
	tmp := path.Join(path.Dir(rel), fmt.Sprintf(".%s.pid-rewind-%d", path.Base(rel), time.Now().UnixNano()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Chmod(tmp, perm); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// exists reports whether rel names anything under root.
func exists(root *os.Root, rel string) bool {
	_, err := root.Lstat(rel)
	return err == nil
}

// This file remembers what the agent last saw of each file (a fingerprint: the sha256 of
// its content, or of the part read with the file's identity and times) and watches the
// folders of those files, so edit and write can refuse to act on a file that changed on
// disk since the agent read it, and refuse one it never read before approval is asked.

package tools

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/internal/watch"
	"github.com/pid-agent/pid/toolexec"
)

// digest is the sha256 of a file's content.
type digest = [sha256.Size]byte

// fingerprint is what the agent saw of a file, for the stale-edit guard. Most reads,
// and every write and edit, see the whole content: the fingerprint is its sha256 (whole).
// A read of the first lines of a large file (read.go) reads only those, so that it costs
// what was asked and not the file's size; its fingerprint is then the sha256 of the n
// bytes read plus the file's stamp (device, inode, size, mtime and ctime, as fstat gave
// them before the read). The part not read is vouched for by the stamp alone:
//   - any write to the file, and any rename over it, changes its ctime or inode, and ctime
//     cannot be set back by a program (touch -d sets mtime only), so a stamp that is
//     still the same means the same bytes;
//   - a file system's clock ticks coarsely, so a write in the same tick as the stamp's
//     times could leave them equal: a stamp is only trusted when both times are older than
//     stampSettle when the read starts (git's "racily clean" rule); a file changed more
//     recently is hashed whole, as are files on systems without ctime (stampOf).
//
// What is left: a change with the clock set back by more than stampSettle, or by someone
// able to set ctime (root, through the raw device). The sha256 of the part read is
// checked too, so that part is always compared byte for byte.
type fingerprint struct {
	sum   digest // of the whole content, or of its first n bytes
	n     int64
	whole bool
	stamp fileStamp // when not whole
}

// wholeFingerprint is the fingerprint of content with sha256 sum.
func wholeFingerprint(sum digest) fingerprint { return fingerprint{sum: sum, whole: true} }

// stampSettle is how old a file's mtime and ctime must be for its stamp to stand for its
// content (see fingerprint). A variable for the tests.
var stampSettle = 3 * time.Second

// settled reports whether the stamp's times are at least stampSettle before now.
func (s fileStamp) settled(now time.Time) bool {
	limit := now.Add(-stampSettle).UnixNano()
	return s.mtime < limit && s.ctime < limit
}

// observed is a file as edit or write find it before changing it: its whole content and
// that content's sha256, and for a file read from the disk its stamp taken after the
// content was read.
type observed struct {
	content  string
	sum      digest
	stamp    fileStamp
	hasStamp bool
}

// matches reports whether what is there now (o) is what the fingerprint saw.
func (fp fingerprint) matches(o observed) bool {
	if fp.whole {
		return o.sum == fp.sum
	}
	if !o.hasStamp || o.stamp != fp.stamp || int64(len(o.content)) < fp.n {
		return false
	}
	h := sha256.New()
	hashString(h, o.content[:fp.n])
	return digest(h.Sum(nil)) == fp.sum
}

// hashString writes s to h without converting the whole of it to a []byte (which would
// copy a large file's content once more).
func hashString(h hash.Hash, s string) {
	var buf [32 << 10]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
}

// sumString returns the sha256 of s, without copying s whole.
func sumString(s string) digest {
	h := sha256.New()
	hashString(h, s)
	return digest(h.Sum(nil))
}

// tracker holds, per real path, the fingerprint of what the agent last read or wrote, and
// a subscription to the process's shared watcher (package watch) on the parent folders of
// those files. The watcher only marks files as touched; the fingerprint is the final word:
// a touched file with the content the agent saw is not stale.
type tracker struct {
	mu    sync.Mutex
	files map[string]*seenFile
	// expected are the files a read prepared in a parallel batch will read before any
	// later call of the batch on them runs (calls on one file run in source order, C3):
	// refuseUnread lets those through to the check at execution. A read records the file
	// and drops it from here; a read that never ran leaves it, which only defers the
	// refusal to execution.
	expected map[string]bool
	watched  map[string]bool // parent folders added to the subscription
	sub      *watch.Sub      // nil until the first record, and when it could not start
	// watchErr is why the subscription could not start; the digest alone then decides.
	watchErr error
	closed   bool
	// onEvent, when set (by tests), is called from the watcher's goroutine, without the
	// lock, with each recorded path that an event touched.
	onEvent func(path string)
}

// seenFile is what the agent last saw of one file.
type seenFile struct {
	fp fingerprint
	// touched is set by a watcher event after the agent's last read or write of the file.
	touched bool
}

func newTracker() *tracker {
	return &tracker{files: make(map[string]*seenFile), watched: make(map[string]bool), expected: make(map[string]bool)}
}

// expect notes that a read of path (a real path) was prepared in the batch being run and
// will run before any later call of the batch on that file.
func (t *tracker) expect(path string) {
	t.mu.Lock()
	t.expected[path] = true
	t.mu.Unlock()
}

// known reports whether the agent has read or written path (a real path) in this session,
// or a read of it prepared in the running batch will run first.
func (t *tracker) known(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.files[path] != nil || t.expected[path]
}

// record remembers that the agent has seen what fp describes at path (a real path), and
// watches path's folder. A watcher that cannot start or add the folder is not an error:
// the fingerprint check still works.
func (t *tracker) record(path string, fp fingerprint) {
	dir := filepath.Dir(path)
	t.mu.Lock()
	t.files[path] = &seenFile{fp: fp}
	delete(t.expected, path)
	want := !t.closed && !t.watched[dir]
	start := want && t.sub == nil && t.watchErr == nil
	t.mu.Unlock()
	if !want {
		return
	}
	if start {
		// Subscribed without the lock: the watcher's goroutine takes it in t.event.
		s, err := watch.Subscribe(t.event, t.watchError)
		t.mu.Lock()
		switch {
		case t.closed || t.sub != nil || t.watchErr != nil:
			// Closed meanwhile, or another record subscribed first.
		default:
			t.sub, t.watchErr, s = s, err, nil
		}
		t.mu.Unlock()
		if s != nil {
			s.Close()
		}
	}
	t.mu.Lock()
	sub := t.sub
	if sub == nil || t.closed || t.watched[dir] {
		t.mu.Unlock()
		return
	}
	t.watched[dir] = true
	t.mu.Unlock()
	if err := sub.Add(dir); err != nil {
		t.mu.Lock()
		delete(t.watched, dir)
		t.mu.Unlock()
	}
}

// event marks the file an event names as touched. A watched folder that is removed or
// renamed is forgotten, so that recording a file in it again (once it is back) watches it
// again. Called on the watcher's goroutine.
func (t *tracker) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		t.mu.Lock()
		delete(t.watched, ev.Name)
		t.mu.Unlock()
	}
	t.touch(ev.Name)
}

// watchError marks every file as touched when the watcher lost events. Called on the
// watcher's goroutine.
func (t *tracker) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		t.touchAll()
	}
}

func (t *tracker) touch(path string) {
	t.mu.Lock()
	s := t.files[path]
	if s != nil {
		s.touched = true
	}
	hook := t.onEvent
	t.mu.Unlock()
	if s != nil && hook != nil {
		hook(path)
	}
}

func (t *tracker) touchAll() {
	t.mu.Lock()
	for _, s := range t.files {
		s.touched = true
	}
	t.mu.Unlock()
}

// check reports, as an error for the model, why the agent must read path (a real path,
// shown as shown) again before changing it: it never read it, or what is there now (cur,
// read from the editor when inEditor is set, else from the disk) is not what it last saw.
// It returns nil when the agent may go ahead.
func (t *tracker) check(path, shown string, cur observed, inEditor bool) error {
	t.mu.Lock()
	s := t.files[path]
	var fp fingerprint
	if s != nil {
		fp = s.fp
	}
	t.mu.Unlock()
	same := s != nil && fp.matches(cur)
	switch {
	case s == nil:
		return notReadError(shown)
	case !same && inEditor:
		return fmt.Errorf("%s changed in the editor since you last read it (the person edited it, or a formatter ran); read it again before editing", shown)
	case !same:
		return fmt.Errorf("%s changed on disk since you last read it (edited in the editor or by a formatter); read it again before editing", shown)
	}
	return nil
}

// notReadError is the refusal of a change to an existing file the agent has not read.
func notReadError(shown string) error {
	return fmt.Errorf("%s exists but you have not read it in this session; read it before changing it", shown)
}

// refuseUnread is the Check of edit and write (run in toolexec's prepare pass, after
// validation): it refuses, before anyone is asked to approve the call, a change to a file
// that exists but that the agent has not read in this session, with the error the check at
// execution would give (tracker.check). Everything else passes, to be judged at execution:
// a path outside the workspace, a file that does not exist (yet: a write earlier in the
// batch may create it), a file read earlier in the batch (expect).
//
// Contract: called during toolexec's serial prepare pass; it stats the file, never reads
// it, and changes nothing.
func (w *Workspace) refuseUnread(call toolexec.Call) error {
	var a struct {
		Path *string `json:"path"`
	}
	if json.Unmarshal(call.Args, &a) != nil || a.Path == nil {
		return nil
	}
	real, err := w.Resolve(*a.Path)
	if err != nil || w.seen.known(real) {
		return nil
	}
	r, rel, err := w.At(real)
	if err != nil {
		return nil
	}
	if fi, err := r.Stat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return notReadError(w.Display(real))
}

// readResources is the read tool's Resources: the file's real path (pathResources), which
// is also noted as expected (see tracker.expected), so that an edit or write of it later
// in the same parallel batch is not refused before the read has run.
func readResources(w *Workspace) func(toolexec.Call) []string {
	paths := pathResources(w)
	return func(call toolexec.Call) []string {
		res := paths(call)
		for _, p := range res {
			w.seen.expect(p)
		}
		return res
	}
}

// changed returns the sorted real paths of the files the agent read or wrote whose content
// on disk, as same judges it, is no longer what it saw (including files that are gone).
// Only files a watcher event touched are looked at again, unless the watcher could not
// start.
func (t *tracker) changed(same func(real string, fp fingerprint) bool) []string {
	type candidate struct {
		path string
		fp   fingerprint
	}
	var cands []candidate
	t.mu.Lock()
	all := t.sub == nil
	for p, s := range t.files {
		if s.touched || all {
			cands = append(cands, candidate{p, s.fp})
		}
	}
	t.mu.Unlock()
	var out []string
	for _, c := range cands {
		if !same(c.path, c.fp) {
			out = append(out, c.path)
			continue
		}
		t.mu.Lock()
		if s := t.files[c.path]; s != nil && s.fp == c.fp {
			s.touched = false
		}
		t.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// close ends the subscription to the watcher; no event reaches the tracker afterwards.
func (t *tracker) close() error {
	t.mu.Lock()
	t.closed = true
	sub := t.sub
	t.sub = nil
	t.mu.Unlock()
	if sub == nil {
		return nil
	}
	return sub.Close()
}

// sameFile reports whether the regular file at the real path p, read through the
// workspace folder's root, is still what fp saw: its whole content hashed again, or for a
// partial fingerprint its stamp and the sha256 of the part read. Anything else (gone, a
// FIFO, outside by now, unreadable) is not the same.
func (w *Workspace) sameFile(p string, fp fingerprint) bool {
	r, rel, err := w.At(p)
	if err != nil {
		return false
	}
	f, fi, err := rootfile.OpenRegular(r, rel, p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if fp.whole {
		_, err = io.Copy(h, f)
		return err == nil && digest(h.Sum(nil)) == fp.sum
	}
	st, ok := stampOf(fi)
	if !ok || st != fp.stamp {
		return false
	}
	n, err := io.Copy(h, io.LimitReader(f, fp.n))
	return err == nil && n == fp.n && digest(h.Sum(nil)) == fp.sum
}

// ChangedFiles returns the real paths, sorted, of the files the agent read or wrote in this
// session whose content on disk has changed since (or that are gone). The watcher narrows
// which files are looked at again; the fingerprint (see fingerprint), checked through the
// workspace folder's os.Root, decides.
//
// Contract: safe for concurrent use; it reads the touched files, so it is not free, but it
// never blocks on the watcher (nor on a file that became a FIFO). Errors reading a file
// count as "changed". After Close it returns nil.
func (w *Workspace) ChangedFiles() []string {
	if w.Closed() {
		return nil
	}
	return w.seen.changed(w.sameFile)
}

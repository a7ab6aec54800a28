// This file holds the stale-edit guard: it remembers what the agent last saw of each file
// (a Fingerprint) and watches the folders of those files, so that edit and write can refuse
// to act on a file that changed on disk since the agent read it, and refuse one it never
// read before approval is asked.

package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/internal/watch"
)

// StaleGuard holds, per real path, the fingerprint of what the agent last read or wrote in
// one session's workspace, and a subscription to the process's shared file watcher
// (package internal/watch) on the parent folders of those files. The watcher only marks
// files as touched; the fingerprint is the final word: a touched file with the content the
// agent saw is not stale.
//
// The file tools call Record after each read, write and edit, Check before a write or
// edit changes a file, RefuseUnread before approval is asked, and Expect for a read
// prepared in a batch; the session calls Changed to tell the model which files changed.
// Paths are real paths (Workspace.Resolve's). A StaleGuard is safe for concurrent use;
// Close it when the session ends.
type StaleGuard struct {
	ws *Workspace

	mu    sync.Mutex
	files map[string]*seenFile
	// expected are the files a read prepared in a parallel batch will read before any
	// later call of the batch on them runs (calls on one file run in source order):
	// RefuseUnread lets those through to the check at execution. A read records the file
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
	fp Fingerprint
	// touched is set by a watcher event after the agent's last read or write of the file.
	touched bool
}

// NewStaleGuard returns the stale-edit guard of the workspace ws, remembering nothing yet.
// It starts no goroutine: its subscription to the file watcher starts with the first
// Record. The caller closes it before (or after) closing ws.
func NewStaleGuard(ws *Workspace) *StaleGuard {
	return &StaleGuard{ws: ws, files: make(map[string]*seenFile), watched: make(map[string]bool), expected: make(map[string]bool)}
}

// Expect notes that a read of real was prepared in the batch being run and will run before
// any later call of the batch on that file, so that RefuseUnread lets such calls through.
// Called from toolexec's serial prepare pass; it cannot fail.
func (g *StaleGuard) Expect(real string) {
	g.mu.Lock()
	g.expected[real] = true
	g.mu.Unlock()
}

// known reports whether the agent has read or written real in this session, or a read of
// it prepared in the running batch will run first.
func (g *StaleGuard) known(real string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.files[real] != nil || g.expected[real]
}

// Seen returns the fingerprint last recorded for real, and false when the agent has not
// read or written it in this session. Safe for concurrent use.
func (g *StaleGuard) Seen(real string) (Fingerprint, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.files[real]
	if s == nil {
		return Fingerprint{}, false
	}
	return s.fp, true
}

// Record remembers that the agent has seen what fp describes at real, and watches real's
// folder. It never fails: a watcher that cannot start or add the folder leaves the
// fingerprint check to decide alone. After Close it still records, but watches nothing.
func (g *StaleGuard) Record(real string, fp Fingerprint) {
	dir := filepath.Dir(real)
	g.mu.Lock()
	g.files[real] = &seenFile{fp: fp}
	delete(g.expected, real)
	want := !g.closed && !g.watched[dir]
	start := want && g.sub == nil && g.watchErr == nil
	g.mu.Unlock()
	if !want {
		return
	}
	if start {
		g.subscribe()
	}
	g.mu.Lock()
	sub := g.sub
	if sub == nil || g.closed || g.watched[dir] {
		g.mu.Unlock()
		return
	}
	g.watched[dir] = true
	g.mu.Unlock()
	if err := sub.Add(dir); err != nil {
		g.mu.Lock()
		delete(g.watched, dir)
		g.mu.Unlock()
	}
}

// subscribe subscribes to the shared watcher, unless another Record did first or the
// guard was closed meanwhile. Called without the lock: the watcher's goroutine takes it in
// g.event.
func (g *StaleGuard) subscribe() {
	s, err := watch.Subscribe(g.event, g.watchError)
	g.mu.Lock()
	switch {
	case g.closed || g.sub != nil || g.watchErr != nil:
		// Closed meanwhile, or another record subscribed first.
	default:
		g.sub, g.watchErr, s = s, err, nil
	}
	g.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// event marks the file an event names as touched. A watched folder that is removed or
// renamed is forgotten, so that recording a file in it again (once it is back) watches it
// again. Called on the watcher's goroutine.
func (g *StaleGuard) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		g.mu.Lock()
		delete(g.watched, ev.Name)
		g.mu.Unlock()
	}
	g.touch(ev.Name)
}

// watchError marks every file as touched when the watcher lost events. Called on the
// watcher's goroutine.
func (g *StaleGuard) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		g.touchAll()
	}
}

func (g *StaleGuard) touch(path string) {
	g.mu.Lock()
	s := g.files[path]
	if s != nil {
		s.touched = true
	}
	hook := g.onEvent
	g.mu.Unlock()
	if s != nil && hook != nil {
		hook(path)
	}
}

func (g *StaleGuard) touchAll() {
	g.mu.Lock()
	for _, s := range g.files {
		s.touched = true
	}
	g.mu.Unlock()
}

// Check returns, as an error for the model, why the agent must read real (shown as shown)
// again before changing it: it never read it, or what is there now (cur, read from the
// editor when inEditor is set, else from the disk) is not what it last saw. It returns nil
// when the agent may go ahead. Safe for concurrent use; it reads no file.
func (g *StaleGuard) Check(real, shown string, cur Observed, inEditor bool) error {
	fp, seen := g.Seen(real)
	same := seen && fp.Matches(cur)
	switch {
	case !seen:
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

// RefuseUnread returns, before anyone is asked to approve a change to path (a path as the
// model gave it), the refusal the check at execution would give (Check) when the file
// exists but the agent has not read it in this session. Everything else returns nil, to be
// judged at execution: a path outside the workspace, a file that does not exist (yet: a
// write earlier in the batch may create it), a file read earlier in the batch (Expect).
//
// Contract: called by edit's and write's Check, during toolexec's serial prepare pass; it
// stats the file, never reads it, and changes nothing.
func (g *StaleGuard) RefuseUnread(path string) error {
	real, err := g.ws.Resolve(path)
	if err != nil || g.known(real) {
		return nil
	}
	r, rel, err := g.ws.At(real)
	if err != nil {
		return nil
	}
	if fi, err := r.Stat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return notReadError(g.ws.Display(real))
}

// Unchanged reports whether the regular file at real, read through the workspace folder's
// root, is still what fp saw: its whole content hashed again, or for a partial fingerprint
// its stamp and the sha256 of the part read. Anything else (gone, a FIFO, outside by now,
// unreadable, the workspace closed) is not unchanged. It reads the file; it never blocks
// on one that became a FIFO.
func (g *StaleGuard) Unchanged(real string, fp Fingerprint) bool {
	r, rel, err := g.ws.At(real)
	if err != nil {
		return false
	}
	f, fi, err := rootfile.OpenRegular(r, rel, real)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if fp.Whole {
		_, err = io.Copy(h, f)
		return err == nil && Digest(h.Sum(nil)) == fp.Sum
	}
	st, ok := StampOf(fi)
	if !ok || st != fp.Stamp {
		return false
	}
	n, err := io.Copy(h, io.LimitReader(f, fp.N))
	return err == nil && n == fp.N && Digest(h.Sum(nil)) == fp.Sum
}

// Changed returns the real paths, sorted, of the files the agent read or wrote in this
// session whose content on disk has changed since (or that are gone). The watcher narrows
// which files are looked at again (all of them when it could not start); the fingerprint,
// checked through the workspace folder's os.Root (Unchanged), decides.
//
// Contract: safe for concurrent use; it reads the touched files, so it is not free, but it
// never blocks on the watcher (nor on a file that became a FIFO). Errors reading a file
// count as "changed". Once the workspace is closed it returns nil.
func (g *StaleGuard) Changed() []string {
	if g.ws.Closed() {
		return nil
	}
	type candidate struct {
		path string
		fp   Fingerprint
	}
	var cands []candidate
	g.mu.Lock()
	all := g.sub == nil
	for p, s := range g.files {
		if s.touched || all {
			cands = append(cands, candidate{p, s.fp})
		}
	}
	g.mu.Unlock()
	var out []string
	for _, c := range cands {
		if !g.Unchanged(c.path, c.fp) {
			out = append(out, c.path)
			continue
		}
		g.mu.Lock()
		if s := g.files[c.path]; s != nil && s.fp == c.fp {
			s.touched = false
		}
		g.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// Close ends the subscription to the watcher; no event reaches the guard afterwards. It
// returns the watcher's close error, if any. Safe to call again.
func (g *StaleGuard) Close() error {
	g.mu.Lock()
	g.closed = true
	sub := g.sub
	g.sub = nil
	g.mu.Unlock()
	if sub == nil {
		return nil
	}
	return sub.Close()
}

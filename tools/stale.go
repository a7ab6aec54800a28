// This file remembers what the agent last saw of each file (a sha256 of its content) and
// watches the folders of those files, so edit and write can refuse to act on a file that
// changed on disk since the agent read it.

package tools

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/pid-agent/pid/internal/watch"
)

// digest is the sha256 of a file's content.
type digest = [sha256.Size]byte

// tracker holds, per real path, the digest of what the agent last read or wrote, and a
// subscription to the process's shared watcher (package watch) on the parent folders of
// those files. The watcher only marks files as touched; the digest is the final word: a
// touched file with the content the agent saw is not stale.
type tracker struct {
	mu      sync.Mutex
	files   map[string]*seenFile
	watched map[string]bool // parent folders added to the subscription
	sub     *watch.Sub      // nil until the first record, and when it could not start
	// watchErr is why the subscription could not start; the digest alone then decides.
	watchErr error
	closed   bool
	// onEvent, when set (by tests), is called from the watcher's goroutine, without the
	// lock, with each recorded path that an event touched.
	onEvent func(path string)
}

// seenFile is what the agent last saw of one file.
type seenFile struct {
	sum digest
	// touched is set by a watcher event after the agent's last read or write of the file.
	touched bool
}

func newTracker() *tracker {
	return &tracker{files: make(map[string]*seenFile), watched: make(map[string]bool)}
}

// record remembers that the agent has seen content with digest sum at path (a real path),
// and watches path's folder. A watcher that cannot start or add the folder is not an error:
// the digest check still works.
func (t *tracker) record(path string, sum digest) {
	dir := filepath.Dir(path)
	t.mu.Lock()
	t.files[path] = &seenFile{sum: sum}
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
// shown as shown) again before changing it: it never read it, or its content now (with
// digest current, read from the editor when inEditor is set, else from the disk) is not
// what it last saw. It returns nil when the agent may go ahead.
func (t *tracker) check(path, shown string, current digest, inEditor bool) error {
	t.mu.Lock()
	s := t.files[path]
	var sum digest
	if s != nil {
		sum = s.sum
	}
	t.mu.Unlock()
	switch {
	case s == nil:
		return fmt.Errorf("%s exists but you have not read it in this session; read it before changing it", shown)
	case sum != current && inEditor:
		return fmt.Errorf("%s changed in the editor since you last read it (the person edited it, or a formatter ran); read it again before editing", shown)
	case sum != current:
		return fmt.Errorf("%s changed on disk since you last read it (edited in the editor or by a formatter); read it again before editing", shown)
	}
	return nil
}

// changed returns the sorted real paths of the files the agent read or wrote whose content
// on disk, as hash reads it, is no longer what it saw (including files that are gone). Only
// files a watcher event touched are hashed again, unless the watcher could not start.
func (t *tracker) changed(hash func(real string) (digest, error)) []string {
	type candidate struct {
		path string
		sum  digest
	}
	var cands []candidate
	t.mu.Lock()
	all := t.sub == nil
	for p, s := range t.files {
		if s.touched || all {
			cands = append(cands, candidate{p, s.sum})
		}
	}
	t.mu.Unlock()
	var out []string
	for _, c := range cands {
		sum, err := hash(c.path)
		if err != nil || sum != c.sum {
			out = append(out, c.path)
			continue
		}
		t.mu.Lock()
		if s := t.files[c.path]; s != nil && s.sum == c.sum {
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

// hashFile returns the digest of the regular file at the real path p, read through the
// workspace folder's root; anything else (gone, a FIFO, outside by now) is an error.
func (w *Workspace) hashFile(p string) (digest, error) {
	r, rel, err := w.at(p)
	if err != nil {
		return digest{}, err
	}
	f, _, err := openRegular(r, rel, p)
	if err != nil {
		return digest{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return digest{}, err
	}
	return digest(h.Sum(nil)), nil
}

// ChangedFiles returns the real paths, sorted, of the files the agent read or wrote in this
// session whose content on disk has changed since (or that are gone). The watcher narrows
// which files are hashed again; the hash, read through the workspace folder's os.Root,
// decides.
//
// Contract: safe for concurrent use; it reads the touched files, so it is not free, but it
// never blocks on the watcher (nor on a file that became a FIFO). Errors reading a file
// count as "changed". After Close it returns nil.
func (w *Workspace) ChangedFiles() []string {
	if w.closed.Load() {
		return nil
	}
	return w.seen.changed(w.hashFile)
}

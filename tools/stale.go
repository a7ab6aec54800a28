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
)

// digest is the sha256 of a file's content.
type digest = [sha256.Size]byte

// tracker holds, per real path, the digest of what the agent last read or wrote, and a
// watcher on the parent folders of those files. The watcher only marks files as touched;
// the digest is the final word: a touched file with the content the agent saw is not stale.
type tracker struct {
	mu      sync.Mutex
	files   map[string]*seenFile
	watched map[string]bool // parent folders added to the watcher
	watcher *fsnotify.Watcher
	// watchErr is why the watcher could not start; the digest alone then decides.
	watchErr error
	closed   bool
	done     chan struct{} // closed when the event goroutine ends; nil until it starts
	// onEvent, when set (by tests), is called from the event goroutine, without the lock,
	// with each recorded path that an event touched.
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
	var w *fsnotify.Watcher
	if !t.closed && !t.watched[dir] {
		if t.watcher == nil && t.watchErr == nil {
			t.startLocked()
		}
		w = t.watcher
		if w != nil {
			t.watched[dir] = true
		}
	}
	t.mu.Unlock()
	if w != nil {
		if err := w.Add(dir); err != nil {
			t.mu.Lock()
			delete(t.watched, dir)
			t.mu.Unlock()
		}
	}
}

// startLocked starts the watcher and its event goroutine; t.mu is held.
func (t *tracker) startLocked() {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.watchErr = err
		return
	}
	t.watcher = w
	t.done = make(chan struct{})
	go t.events(w, t.done)
}

// events marks the files that the watcher's events name as touched, until the watcher is
// closed.
func (t *tracker) events(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			t.touch(ev.Name)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.touchAll()
			}
		}
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
// shown as shown) again before changing it: it never read it, or the content on disk (with
// digest current) is not what it last saw. It returns nil when the agent may go ahead.
func (t *tracker) check(path, shown string, current digest) error {
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
	all := t.watcher == nil
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

// close stops the watcher and waits for the event goroutine.
func (t *tracker) close() error {
	t.mu.Lock()
	t.closed = true
	w, done := t.watcher, t.done
	t.watcher = nil
	t.mu.Unlock()
	if w == nil {
		return nil
	}
	err := w.Close()
	<-done
	return err
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

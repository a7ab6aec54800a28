// Package watch shares one fsnotify watcher among everything in the process that watches
// folders: the stale-edit tracker of every workspace and every settings Loader. Each
// inotify instance counts against a per-user limit (fs.inotify.max_user_instances, often
// 128) that the user's editor and other programs need too, so pid holds at most one,
// whatever the number of sessions.
//
// A part that watches calls Subscribe with its callbacks, then Add and Remove for folders,
// and Close when it is done. Folders are reference-counted: a folder stays watched while one
// subscriber wants it, and each subscriber hears only about the folders it added, under
// the spelling it used. The watcher and its goroutine start with the first subscriber and
// end when the last one leaves.
package watch

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Sub is one subscriber's share of the process's watcher. Its methods are safe for
// concurrent use, except that none may be called from its own callbacks.
type Sub struct {
	onEvent func(fsnotify.Event)
	onError func(error)

	// mu is held while a callback runs and by Close, so no callback runs once Close has
	// returned, and the callbacks of one subscriber never run concurrently.
	mu     sync.Mutex
	closed bool

	// dirs maps each folder as the subscriber spelled it (cleaned) to its real path.
	// Guarded by hub.opMu.
	dirs map[string]string
}

// hub is the process's one watcher and its subscribers.
type hub struct {
	// opMu serializes Subscribe, Add, Remove and Close, and the fsnotify calls they make.
	// The event goroutine never takes it, so an fsnotify call made under it cannot wait
	// for an event goroutine that waits for it.
	opMu sync.Mutex
	fs   *fsnotify.Watcher // nil while there is no subscriber
	done chan struct{}     // closed when fs's event goroutine has ended
	subs int               // open subscribers

	// mu guards the maps below it, which the event goroutine reads.
	mu sync.Mutex
	// byDir maps a watched folder's real path to the subscribers that want it, each with
	// the spellings it added the folder under.
	byDir map[string]map[*Sub][]string
	// all is every open subscriber, for errors.
	all map[*Sub]bool
}

// shared is the process's hub.
var shared = &hub{byDir: map[string]map[*Sub][]string{}, all: map[*Sub]bool{}}

// Subscribe joins the process's watcher, starting it (an inotify instance and one goroutine)
// if this is the first subscriber. onEvent receives every event about a folder the
// subscriber added or about an entry directly inside one, with Name spelled from the folder
// as the subscriber added it; onError receives the watcher's errors (fsnotify.ErrEventOverflow
// means events were lost: treat everything as touched). Either may be nil.
//
// Contract: the callbacks run on the watcher's goroutine, one at a time per subscriber; they
// must return promptly (every subscriber's events wait behind them) and must not call this
// package. After Close returns, they are not called again. Subscribe fails only when the
// watcher cannot start (the inotify limits, too many open files); the caller then works
// without events.
func Subscribe(onEvent func(fsnotify.Event), onError func(error)) (*Sub, error) {
	return shared.subscribe(onEvent, onError)
}

func (h *hub) subscribe(onEvent func(fsnotify.Event), onError func(error)) (*Sub, error) {
	h.opMu.Lock()
	defer h.opMu.Unlock()
	if h.fs == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, err
		}
		h.fs, h.done = w, make(chan struct{})
		go h.run(w, h.done)
	}
	s := &Sub{onEvent: onEvent, onError: onError, dirs: map[string]string{}}
	h.subs++
	h.mu.Lock()
	h.all[s] = true
	h.mu.Unlock()
	return s, nil
}

// Add watches dir (a folder; its entries' creation, change, removal and renaming, and its
// own removal) for this subscriber. Adding a folder again re-arms its watch, which the
// kernel drops when the folder is removed or renamed.
//
// Contract: safe for concurrent use; it fails when the folder cannot be watched (it does not
// exist, the inotify watch limit is reached) or after Close, and then changes nothing.
func (s *Sub) Add(dir string) error {
	return shared.add(s, dir)
}

func (h *hub) add(s *Sub, dir string) error {
	dir = filepath.Clean(dir)
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	h.opMu.Lock()
	defer h.opMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed || h.fs == nil {
		return errors.New("watch: the subscription is closed")
	}
	if old, ok := s.dirs[dir]; ok && old != real {
		h.dropLocked(s, dir)
	}
	if err := h.fs.Add(real); err != nil {
		return err
	}
	if _, ok := s.dirs[dir]; ok {
		return nil
	}
	s.dirs[dir] = real
	h.mu.Lock()
	subs := h.byDir[real]
	if subs == nil {
		subs = map[*Sub][]string{}
		h.byDir[real] = subs
	}
	subs[s] = append(subs[s], dir)
	h.mu.Unlock()
	return nil
}

// Remove stops watching dir (spelled as it was added) for this subscriber; the folder stays
// watched while another subscriber wants it. Removing a folder that is not watched does
// nothing.
//
// Contract: safe for concurrent use; it never fails (a watch the kernel already dropped, with
// its folder, is simply forgotten).
func (s *Sub) Remove(dir string) {
	shared.opMu.Lock()
	defer shared.opMu.Unlock()
	shared.dropLocked(s, filepath.Clean(dir))
}

// dropLocked forgets the subscriber's folder dir (cleaned), and removes the kernel's watch
// when no subscriber wants the folder any more. h.opMu is held.
func (h *hub) dropLocked(s *Sub, dir string) {
	real, ok := s.dirs[dir]
	if !ok {
		return
	}
	delete(s.dirs, dir)
	h.mu.Lock()
	subs := h.byDir[real]
	spellings := slicesDelete(subs[s], dir)
	if len(spellings) == 0 {
		delete(subs, s)
	} else {
		subs[s] = spellings
	}
	last := len(subs) == 0
	if last {
		delete(h.byDir, real)
	}
	h.mu.Unlock()
	if last && h.fs != nil {
		_ = h.fs.Remove(real) // fails when the kernel dropped it with the folder: fine
	}
}

// slicesDelete returns list without v (the first occurrence), reusing list's array.
func slicesDelete(list []string, v string) []string {
	for i, x := range list {
		if x == v {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// Close ends the subscription: its folders are released and its callbacks are not called
// again once Close returns. The last subscriber's Close stops the watcher and waits for its
// goroutine.
//
// Contract: safe to call more than once and concurrently with the subscriber's other
// methods, but not from its callbacks (it waits for a callback in progress). It returns the
// watcher's close error, if any.
func (s *Sub) Close() error {
	return shared.close(s)
}

func (h *hub) close(s *Sub) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()

	h.opMu.Lock()
	for dir := range s.dirs {
		h.dropLocked(s, dir)
	}
	h.mu.Lock()
	delete(h.all, s)
	h.mu.Unlock()
	h.subs--
	var w *fsnotify.Watcher
	var done chan struct{}
	if h.subs == 0 {
		w, done = h.fs, h.done
		h.fs, h.done = nil, nil
	}
	h.opMu.Unlock()
	if w == nil {
		return nil
	}
	err := w.Close()
	<-done
	return err
}

// run hands the watcher's events and errors to the subscribers until the watcher is closed.
func (h *hub) run(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			h.deliver(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			h.broadcast(err)
		}
	}
}

// target is one subscriber's copy of an event.
type target struct {
	s    *Sub
	name string
}

// deliver calls onEvent of every subscriber watching the event's folder (the folder itself,
// or the folder holding the entry the event is about), with the name in its spelling.
func (h *hub) deliver(ev fsnotify.Event) {
	var targets []target
	h.mu.Lock()
	for _, key := range [2]string{ev.Name, filepath.Dir(ev.Name)} {
		for s, spellings := range h.byDir[key] {
			rest := strings.TrimPrefix(ev.Name, key) // "" or "/entry"
			for _, sp := range spellings {
				targets = append(targets, target{s, sp + rest})
			}
		}
	}
	h.mu.Unlock()
	for _, t := range targets {
		t.s.mu.Lock()
		if !t.s.closed && t.s.onEvent != nil {
			t.s.onEvent(fsnotify.Event{Name: t.name, Op: ev.Op})
		}
		t.s.mu.Unlock()
	}
}

// broadcast calls every subscriber's onError.
func (h *hub) broadcast(err error) {
	h.mu.Lock()
	subs := make([]*Sub, 0, len(h.all))
	for s := range h.all {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		if !s.closed && s.onError != nil {
			s.onError(err)
		}
		s.mu.Unlock()
	}
}

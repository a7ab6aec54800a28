// This file holds Watcher: it tells its owner when a command folder changed, so that a client
// learns of a command file added without waiting for the next prompt.

package commands

import (
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/pid-agent/pid/internal/watch"
)

// Watcher watches the folders commands come from: the user's commands folder and the .pid/
// commands of each workspace folder it is given, with their parents, so that a folder made
// later is seen (a folder that does not exist yet is watched through its parent once that
// exists).
type Watcher struct {
	changed func()
	log     *slog.Logger

	// mu guards the fields below it.
	mu     sync.Mutex
	sub    *watch.Sub
	dirs   map[string]bool // the folders to watch (added again after a change)
	kick   chan struct{}   // a change happened (buffered, 1)
	done   chan struct{}   // closed when the goroutine has ended
	closed bool
}

// NewWatcher returns a Watcher that calls changed after a change of the folders it watches
// (a burst of changes may be told once); nothing is watched until Watch. log receives why
// the folders cannot be watched (nil discards it).
//
// Contract: changed is called from the Watcher's goroutine, never concurrently; it may call
// Watch, must not call Close, and should return promptly.
func NewWatcher(changed func(), log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{changed: changed, log: log}
}

// Watch adds the command folders of the workspace folder root (and the user's) to the watch,
// which starts with the first call. A watch that cannot be set up is logged; List still reads
// the folders each time.
//
// Contract: safe for concurrent use.
func (w *Watcher) Watch(root string) {
	dirs := []string{filepath.Dir(WorkspaceFolder(root)), WorkspaceFolder(root)}
	if user, err := UserFolder(); err == nil {
		dirs = append(dirs, filepath.Dir(user), user)
	}
	w.WatchDirs(dirs...)
}

// WatchDirs adds folders to the watch (the skill folders, whose skills are commands too):
// a change in one (not in its subfolders) is told as a change of the commands. A folder
// that does not exist yet is added after a change.
//
// Contract: safe for concurrent use.
func (w *Watcher) WatchDirs(dirs ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.sub == nil {
		w.kick, w.done, w.dirs = make(chan struct{}, 1), make(chan struct{}), map[string]bool{}
		kick := w.kick
		sub, err := watch.Subscribe(func(fsnotify.Event) {
			select {
			case kick <- struct{}{}:
			default:
			}
		}, func(err error) { w.log.Debug("watching the command folders", "err", err) })
		if err != nil {
			w.log.Warn("the command folders are not watched (commands are read again at each prompt)", "err", err)
			w.closed = true
			return
		}
		w.sub = sub
		go w.run()
	}
	for _, d := range dirs {
		if !w.dirs[d] {
			w.dirs[d] = true
			_ = w.sub.Add(d) // a folder that does not exist yet is added after a change
		}
	}
}

// run tells the owner of each change, until Close.
func (w *Watcher) run() {
	defer close(w.done)
	for range w.kick {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		for d := range w.dirs {
			_ = w.sub.Add(d) // re-arm, and add what was made since
		}
		w.mu.Unlock()
		w.changed()
	}
}

// Close ends the watch and waits for its goroutine. Contract: called once, not from changed.
func (w *Watcher) Close() {
	w.mu.Lock()
	if w.closed || w.sub == nil {
		w.closed = true
		w.mu.Unlock()
		return
	}
	w.closed = true
	sub, kick, done := w.sub, w.kick, w.done
	w.mu.Unlock()
	sub.Close()
	close(kick)
	<-done
}

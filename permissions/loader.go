// This file holds the Loader: it reads the user and workspace settings files, watches their
// folders with fsnotify, reloads them on change, and publishes the effective policies
// atomically.

package permissions

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// LoaderOptions configures a Loader.
type LoaderOptions struct {
	// UserFile is the user settings file; "" means UserSettingsPath().
	UserFile string
	// WorkspaceRoots are the editor's workspace folders (absolute); each one's
	// .pid/settings.json is a source.
	WorkspaceRoots []string
	// OnError receives a settings file that could not be read or is invalid (path is the
	// file), or a watching failure (path is the folder, or "" when fsnotify itself failed).
	// That file's previous content stays in force. May be nil.
	OnError func(path string, err error)
	// OnReload is called after a change of the settings took effect. May be nil.
	OnReload func()
	// Debounce is how long the Loader waits for a burst of file events to settle before
	// reading the files (an editor's save is several events); 0 means 50ms.
	Debounce time.Duration
}

// Loader keeps the settings files' policies current. Policy and RedactPatterns never block:
// they read an atomically published snapshot.
type Loader struct {
	opts     LoaderOptions
	debounce time.Duration
	files    []*fileState // [0] is the user file, then one per root in order
	cur      atomic.Pointer[snapshot]

	watcher *fsnotify.Watcher // nil when fsnotify could not start
	watched map[string]bool   // folders being watched; only the run goroutine touches it after start
	done    chan struct{}     // closed by Close
	wg      sync.WaitGroup    // the run goroutine
	close   sync.Once
}

// fileState is one settings file as last read. Only the goroutine that reloads touches it.
type fileState struct {
	path   string
	source string // "user settings /path" or "workspace settings /path"
	root   string // "" for the user file

	read   bool      // read at least once
	exists bool      // it existed at the last read
	raw    []byte    // content at the last read, valid or not
	good   *Settings // the last valid content; nil when none
	// readErr is the last error reading the file (not a parse error), reported once.
	readErr string
}

// snapshot is what a reload publishes.
type snapshot struct {
	user   *Policy            // user settings only
	byRoot map[string]*Policy // user settings, then that root's
	roots  []string           // cleaned roots, longest first
	redact []*regexp.Regexp
}

// NewLoader reads the settings files and starts watching their folders (the nearest existing
// ancestor when a folder does not exist yet, so a file created later is picked up). Problems
// with a file are reported through OnError, synchronously for the first read; if fsnotify
// cannot start, that is reported too and the settings are read once, without reloading.
//
// Contract: the callbacks are called from NewLoader's caller for the first read, then from
// the Loader's own goroutine, never concurrently; they must not call Close (it waits for that
// goroutine) and should return promptly. Close must be called to stop the goroutine.
func NewLoader(opts LoaderOptions) *Loader {
	l := &Loader{opts: opts, debounce: opts.Debounce, watched: map[string]bool{}, done: make(chan struct{})}
	if l.debounce <= 0 {
		l.debounce = 50 * time.Millisecond
	}
	user := opts.UserFile
	if user == "" {
		var err error
		if user, err = UserSettingsPath(); err != nil {
			l.report("", err)
		}
	}
	if user != "" {
		user = filepath.Clean(user)
		l.files = append(l.files, &fileState{path: user, source: "user settings " + user})
	}
	for _, root := range opts.WorkspaceRoots {
		root = filepath.Clean(root)
		if slices.ContainsFunc(l.files, func(f *fileState) bool { return f.root == root }) {
			continue
		}
		p := WorkspaceSettingsPath(root)
		l.files = append(l.files, &fileState{path: p, source: "workspace settings " + p, root: root})
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		l.report("", err)
	} else {
		l.watcher = w
		l.rewatch() // before the first read, so that no change between the two is missed
	}
	l.reload(true)
	if l.watcher != nil {
		l.wg.Add(1)
		go l.run()
	}
	return l
}

// Close stops watching and waits for the Loader's goroutine to end. The last policies stay
// readable. It is idempotent and never fails for a reason the caller could act on.
func (l *Loader) Close() error {
	var err error
	l.close.Do(func() {
		close(l.done)
		if l.watcher != nil {
			err = l.watcher.Close()
		}
		l.wg.Wait()
	})
	return err
}

// Policy returns the effective policy of the settings files for a folder: the user settings,
// then the settings of the longest workspace root that is the folder or contains it (none
// when no root does). Add the session's own permissions with Policy.With.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Policy(folder string) *Policy {
	s := l.cur.Load()
	folder = filepath.Clean(folder)
	for _, root := range s.roots {
		if folder == root || strings.HasPrefix(folder, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)) {
			return s.byRoot[root]
		}
	}
	return s.user
}

// RedactPatterns returns the "redact.patterns" of every settings file (user first, then the
// workspace roots in order). The slice must not be modified.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) RedactPatterns() []*regexp.Regexp { return l.cur.Load().redact }

// report sends an error to OnError if set.
func (l *Loader) report(path string, err error) {
	if l.opts.OnError != nil {
		l.opts.OnError(path, err)
	}
}

// run waits for file events, lets a burst settle, then re-reads the files.
func (l *Loader) run() {
	defer l.wg.Done()
	var timer *time.Timer
	var fire <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-l.done:
			return
		case ev, ok := <-l.watcher.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !l.relevant(ev.Name) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(l.debounce)
			} else {
				timer.Reset(l.debounce)
			}
			fire = timer.C
		case err, ok := <-l.watcher.Errors:
			if !ok {
				return
			}
			l.report("", err)
		case <-fire:
			fire = nil
			l.rewatch()
			l.reload(false)
		}
	}
}

// relevant reports whether an event's path is a settings file or one of its ancestor folders
// (a folder created or removed on the way to it).
func (l *Loader) relevant(name string) bool {
	name = filepath.Clean(name)
	for _, f := range l.files {
		if f.path == name || strings.HasPrefix(f.path, strings.TrimSuffix(name, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// rewatch watches, for every settings file, its folder or the nearest ancestor that exists,
// and stops watching folders no longer needed.
func (l *Loader) rewatch() {
	want := map[string]bool{}
	for _, f := range l.files {
		d := filepath.Dir(f.path)
		for {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
		want[d] = true
	}
	for d := range l.watched {
		if !want[d] {
			_ = l.watcher.Remove(d) // fails harmlessly when the folder is gone
			delete(l.watched, d)
		}
	}
	for d := range want {
		if l.watched[d] {
			continue
		}
		if err := l.watcher.Add(d); err != nil {
			l.report(d, err)
			continue
		}
		l.watched[d] = true
	}
}

// reload re-reads every settings file and publishes a new snapshot when one changed (or
// always, when first is set). A file whose content did not change since the last read is not
// parsed again, so an error is reported once per bad content.
func (l *Loader) reload(first bool) {
	changed := first
	for _, f := range l.files {
		data, err := os.ReadFile(f.path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if msg := err.Error(); msg != f.readErr {
				f.readErr = msg
				l.report(f.path, err)
			}
			continue // keep what was in force
		}
		f.readErr = ""
		if f.read && f.exists == exists && bytes.Equal(f.raw, data) {
			continue
		}
		f.read, f.exists, f.raw = true, exists, data
		if !exists {
			if f.good != nil {
				f.good = nil
				changed = true
			}
			continue
		}
		s, err := ParseSettings(data)
		if err != nil {
			l.report(f.path, err)
			continue // the previous content stays in force
		}
		f.good = s
		changed = true
	}
	if !changed {
		return
	}
	l.publish()
	if !first && l.opts.OnReload != nil {
		l.opts.OnReload()
	}
}

// publish builds the snapshot of the files' last good content and stores it.
func (l *Loader) publish() {
	s := &snapshot{byRoot: map[string]*Policy{}}
	var user []Layer
	for _, f := range l.files {
		if f.good == nil {
			continue
		}
		s.redact = append(s.redact, f.good.Redact...)
		if f.root == "" && f.good.Permissions != nil {
			user = []Layer{{Source: f.source, Spec: f.good.Permissions}}
		}
	}
	s.user = NewPolicy(nil, user...)
	for _, f := range l.files {
		if f.root == "" {
			continue
		}
		layers := slices.Clone(user)
		if f.good != nil && f.good.Permissions != nil {
			layers = append(layers, Layer{Source: f.source, Spec: f.good.Permissions})
		}
		s.byRoot[f.root] = NewPolicy(nil, layers...)
		s.roots = append(s.roots, f.root)
	}
	slices.SortStableFunc(s.roots, func(a, b string) int { return len(b) - len(a) })
	l.cur.Store(s)
}

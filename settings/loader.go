// This file holds the Loader: it reads the user and workspace settings files, watches their
// folders through the process's shared watcher (internal/watch), reloads them on change, and
// publishes the effective policies atomically. A workspace folder that the user does not trust gets its settings as a
// narrow-only layer: what would widen is left out and listed by Ignored.

package settings

import (
	"bytes"
	"encoding/json"
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

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/watch"
	"github.com/pid-agent/pid/permissions"
)

// realFolder returns a folder's real path ("~/" expanded to the home folder), or the folder
// cleaned when it cannot be resolved.
func realFolder(folder string) string {
	if rest, ok := strings.CutPrefix(folder, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			folder = filepath.Join(home, rest)
		}
	}
	if r, err := filepath.EvalSymlinks(folder); err == nil {
		return r
	}
	return filepath.Clean(folder)
}

// LoaderOptions configures a Loader.
type LoaderOptions struct {
	// UserFile is the user settings file; "" means UserPath().
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
	// Trusted reports whether the user trusts a workspace root (its real path is what the
	// caller should compare), besides the user settings' trustedFolders, which the Loader
	// reads itself. nil trusts no root but those. Contract: called from the Loader's
	// goroutines and from Refresh's caller, possibly concurrently; must not block for long
	// and must not call back into the Loader.
	Trusted func(root string) bool
}

// Loader keeps the settings files' policies current. Policy and RedactPatterns never block:
// they read an atomically published snapshot.
type Loader struct {
	opts     LoaderOptions
	debounce time.Duration
	cur      atomic.Pointer[snapshot]

	// mu serializes reloads, publishing and watching (the run goroutine, Refresh, AddRoot),
	// and guards the files and their states, and watched.
	mu    sync.Mutex
	files []*fileState // [0] is the user file, then one per root in order
	// paths are the files' paths, for the watcher's goroutine, which reads them without mu
	// (replaced whole, under mu, when a root is added).
	paths atomic.Pointer[[]string]

	// sub is the Loader's share of the process's watcher; nil when it could not start.
	sub     *watch.Sub
	watched map[string]bool // folders being watched
	// poke gets a token (without blocking) when a relevant file event arrives; errs gets
	// the watcher's errors (dropped when full). The watcher's goroutine sends, run reads.
	poke  chan struct{}
	errs  chan error
	done  chan struct{}  // closed by Close
	wg    sync.WaitGroup // the run goroutine
	close sync.Once
}

// fileState is one settings file as last read. Only reload and publish touch it, under l.mu.
type fileState struct {
	path   string
	source string // "user settings /path" or "workspace settings /path"
	root   string // "" for the user file

	read   bool   // read at least once
	exists bool   // it existed at the last read
	raw    []byte // content at the last read, valid or not
	good   *File  // the last valid content; nil when none
	// readErr is the last error reading the file (not a parse error), reported once.
	readErr string
}

// snapshot is what a reload publishes.
type snapshot struct {
	user   *permissions.Policy            // user settings only
	byRoot map[string]*permissions.Policy // user settings, then that root's (narrow-only when untrusted)
	roots  []string                       // cleaned roots, longest first
	redact []*regexp.Regexp
	// userModel is the user settings' model; rootModel a trusted root's own.
	userModel json.RawMessage
	rootModel map[string]json.RawMessage
	// userFile is the user settings file's path; rootFile each root's.
	userFile string
	rootFile map[string]string
	// userModels is the user settings' "models" list; rootModels a trusted root's own.
	userModels json.RawMessage
	rootModels map[string]json.RawMessage
	// userMCP is the user settings' mcpServers; rootMCP a root's own (trusted or not: the
	// session layer lists an untrusted root's servers as untrusted and starts none).
	userMCP json.RawMessage
	rootMCP map[string]json.RawMessage
	// userSandbox is the user settings' "sandbox"; rootSandbox each root's (sandbox.go).
	userSandbox json.RawMessage
	rootSandbox map[string]json.RawMessage
	// trusted tells which roots are trusted; ignored lists, for an untrusted root, what its
	// settings would have widened.
	trusted map[string]bool
	ignored map[string][]string
	// userTrusted is the user settings' trustedFolders, real paths.
	userTrusted []string
	// allowBypass is the user settings' allowBypassPermissions.
	allowBypass bool
	// checkpoints is the user settings' "checkpoints".
	checkpoints Checkpoints
	// acp is the user settings' "acp".
	acp ACP
	// userHooks is the user settings' "hooks"; rootHooks each root's (trusted or not: Hooks
	// says which).
	userHooks json.RawMessage
	rootHooks map[string]json.RawMessage
	// userLSP is the user settings' "lsp"; rootLSP a trusted root's own (lsp.go).
	userLSP json.RawMessage
	rootLSP map[string]json.RawMessage
	// userSubagents is the user settings' "subagents"; rootSubagents a trusted root's own.
	userSubagents json.RawMessage
	rootSubagents map[string]json.RawMessage
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
	l := &Loader{opts: opts, debounce: opts.Debounce, watched: map[string]bool{}, done: make(chan struct{}),
		poke: make(chan struct{}, 1), errs: make(chan error, 8)}
	if l.debounce <= 0 {
		l.debounce = 50 * time.Millisecond
	}
	user := opts.UserFile
	if user == "" {
		var err error
		if user, err = UserPath(); err != nil {
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
		p := WorkspacePath(root)
		l.files = append(l.files, &fileState{path: p, source: "workspace settings " + p, root: root})
	}
	l.storePaths()
	sub, err := watch.Subscribe(l.event, l.watchError)
	if err != nil {
		l.report("", err)
	} else {
		l.sub = sub
		l.rewatch() // before the first read, so that no change between the two is missed
	}
	l.mu.Lock()
	l.reload(true)
	l.mu.Unlock()
	if l.sub != nil {
		l.wg.Add(1)
		go l.run()
	}
	return l
}

// AddRoot adds a workspace root, as if NewLoader had been given it (a face whose sessions
// each bring their own folder): its settings file is read now, problems reported through
// OnError, and watched from now on. A root the Loader has is left as it is.
//
// Contract: safe for concurrent use; must not be called from the callbacks (it takes the
// reload lock).
func (l *Loader) AddRoot(root string) {
	root = filepath.Clean(root)
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.ContainsFunc(l.files, func(f *fileState) bool { return f.root == root }) {
		return
	}
	p := WorkspacePath(root)
	l.files = append(l.files, &fileState{path: p, source: "workspace settings " + p, root: root})
	l.storePaths()
	if l.sub != nil {
		l.rewatch()
	}
	l.reload(true)
}

// storePaths publishes the files' paths for the watcher's goroutine. Caller holds l.mu, or
// is NewLoader.
func (l *Loader) storePaths() {
	paths := make([]string, len(l.files))
	for i, f := range l.files {
		paths[i] = f.path
	}
	l.paths.Store(&paths)
}

// Close stops watching and waits for the Loader's goroutine to end. The last policies stay
// readable. It is idempotent and never fails for a reason the caller could act on.
func (l *Loader) Close() error {
	var err error
	l.close.Do(func() {
		if l.sub != nil {
			err = l.sub.Close() // no event reaches l.event afterwards
		}
		close(l.done)
		l.wg.Wait()
	})
	return err
}

// Policy returns the effective policy of the settings files for a folder: the user settings,
// then the settings of the longest workspace root that is the folder or contains it (none
// when no root does). Add the session's own permissions with Policy.With.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Policy(folder string) *permissions.Policy {
	s := l.cur.Load()
	if root, ok := s.rootOf(folder); ok {
		return s.byRoot[root]
	}
	return s.user
}

// rootOf returns the longest workspace root that is folder or holds it.
func (s *snapshot) rootOf(folder string) (string, bool) {
	folder = filepath.Clean(folder)
	for _, root := range s.roots {
		if folder == root || strings.HasPrefix(folder, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)) {
			return root, true
		}
	}
	return "", false
}

// Model returns the "model" of the settings for a folder: the trusted workspace root's own
// when it has one, else the user settings'; nil when neither sets one. An untrusted root's
// model is never returned (it could send the user's key to any host).
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Model(folder string) json.RawMessage {
	s := l.cur.Load()
	if root, ok := s.rootOf(folder); ok && s.rootModel[root] != nil {
		return s.rootModel[root]
	}
	return s.userModel
}

// ModelSource is Model with the settings file the model comes from ("" with a nil model),
// for messages that tell a person which file to change.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) ModelSource(folder string) (model json.RawMessage, file string) {
	s := l.cur.Load()
	if root, ok := s.rootOf(folder); ok && s.rootModel[root] != nil {
		return s.rootModel[root], s.rootFile[root]
	}
	if s.userModel == nil {
		return nil, ""
	}
	return s.userModel, s.userFile
}

// ModelList is one settings file's "models" list: the models a person may pick from.
type ModelList struct {
	// File is the settings file's path.
	File string
	// Models is the raw "models" value; the session layer decodes it.
	Models json.RawMessage
}

// Models returns the "models" lists of the settings for a folder: the user settings' first,
// then that of the workspace root holding the folder when that root is trusted (an
// untrusted root's list is left out, as its model is: Ignored names it). Files that set no
// list are left out; the result is empty when none does.
//
// Contract: safe for concurrent use; never blocks, never reads files. The Models values
// must not be modified.
func (l *Loader) Models(folder string) []ModelList {
	s := l.cur.Load()
	var out []ModelList
	if s.userModels != nil {
		out = append(out, ModelList{File: s.userFile, Models: s.userModels})
	}
	if root, ok := s.rootOf(folder); ok && s.rootModels[root] != nil {
		out = append(out, ModelList{File: s.rootFile[root], Models: s.rootModels[root]})
	}
	return out
}

// MCPServers returns the "mcpServers" of the settings for a folder: the user settings' and
// those of the workspace root holding the folder, with whether that root is trusted (its
// servers must not start until it is: the session layer lists them as untrusted). Either
// may be nil.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) MCPServers(folder string) (user, workspace json.RawMessage, trusted bool) {
	s := l.cur.Load()
	root, ok := s.rootOf(folder)
	if !ok {
		return s.userMCP, nil, true
	}
	return s.userMCP, s.rootMCP[root], s.trusted[root]
}

// Trusted reports whether a workspace root is trusted (by the Trusted option or the user
// settings' trustedFolders), as of the last reload or Refresh. A folder that is not one of
// the Loader's roots is trusted: it has no settings of its own that could widen anything.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Trusted(root string) bool {
	s := l.cur.Load()
	t, known := s.trusted[filepath.Clean(root)]
	return t || !known
}

// TrustedFolder reports whether the user trusts folder, one of the Loader's roots or not:
// for a root, as Trusted says; for another folder, by the user settings' trustedFolders or
// the Trusted option. Unlike Trusted, a folder that is not a root is not trusted for that
// alone: what it ships besides settings (instruction files) needs the user's word.
//
// Contract: safe for concurrent use; it may resolve folder's links.
func (l *Loader) TrustedFolder(folder string) bool {
	s := l.cur.Load()
	if t, known := s.trusted[filepath.Clean(folder)]; known {
		return t
	}
	return slices.Contains(s.userTrusted, realFolder(folder)) || (l.opts.Trusted != nil && l.opts.Trusted(folder))
}

// Ignored returns what an untrusted root's settings file sets that was left out because it
// would widen or redirect what pid does (see File.Widening), in the words a person
// reads; nil when the root is trusted or its file widens nothing.
//
// Contract: safe for concurrent use; never blocks, never reads files. The slice must not be
// modified.
func (l *Loader) Ignored(root string) []string { return l.cur.Load().ignored[filepath.Clean(root)] }

// Refresh publishes the policies again with the current trust (call it after the Trusted
// option's answer changed): running sessions see the new policy at their next decision.
//
// Contract: safe for concurrent use; it takes the Loader's reload lock, so it waits for a
// reload in progress, and must not be called from the callbacks.
func (l *Loader) Refresh() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.publish()
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

// event pokes the run goroutine when a file event may concern a settings file. Called on
// the watcher's goroutine: it reads the published paths only.
func (l *Loader) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod || !l.relevant(ev.Name) {
		return
	}
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// watchError hands a watcher error to the run goroutine, which reports it (the callbacks
// are never called concurrently); when events were lost, the files are read again too.
// Called on the watcher's goroutine.
func (l *Loader) watchError(err error) {
	select {
	case l.errs <- err:
	default:
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
	settle := func() {
		if timer == nil {
			timer = time.NewTimer(l.debounce)
		} else {
			timer.Reset(l.debounce)
		}
		fire = timer.C
	}
	for {
		select {
		case <-l.done:
			return
		case <-l.poke:
			settle()
		case err := <-l.errs:
			l.report("", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				settle()
			}
		case <-fire:
			fire = nil
			l.mu.Lock()
			l.rewatch()
			l.reload(false)
			l.mu.Unlock()
		}
	}
}

// relevant reports whether an event's path is a settings file or one of its ancestor folders
// (a folder created or removed on the way to it).
func (l *Loader) relevant(name string) bool {
	name = filepath.Clean(name)
	for _, p := range *l.paths.Load() {
		if p == name || strings.HasPrefix(p, strings.TrimSuffix(name, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// rewatch watches, for every settings file, its folder or the nearest ancestor that exists,
// and stops watching folders no longer needed. Caller holds l.mu, or is NewLoader.
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
			l.sub.Remove(d)
			delete(l.watched, d)
		}
	}
	for d := range want {
		if l.watched[d] {
			continue
		}
		if err := l.sub.Add(d); err != nil {
			l.report(d, err)
			continue
		}
		l.watched[d] = true
	}
}

// reload re-reads every settings file and publishes a new snapshot when one changed (or
// always, when first is set). A file whose content did not change since the last read is not
// parsed again, so an error is reported once per bad content. Caller holds l.mu.
func (l *Loader) reload(first bool) {
	changed := first
	for _, f := range l.files {
		data, err := safefile.Read(f.path, safefile.SettingsMax)
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
		s, err := Parse(data)
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

// publish builds the snapshot of the files' last good content and stores it. Caller holds
// l.mu.
func (l *Loader) publish() {
	s := &snapshot{byRoot: map[string]*permissions.Policy{}, rootModel: map[string]json.RawMessage{}, rootMCP: map[string]json.RawMessage{},
		rootFile: map[string]string{}, rootModels: map[string]json.RawMessage{}, trusted: map[string]bool{}, ignored: map[string][]string{},
		rootSandbox: map[string]json.RawMessage{}}
	var user []permissions.Layer
	for _, f := range l.files {
		if f.good == nil {
			continue
		}
		// Extra redaction only hides more: every file's patterns apply, trusted or not.
		s.redact = append(s.redact, f.good.Redact...)
		if f.root == "" {
			s.userFile = f.path
			s.userModels = f.good.Models
			if f.good.Permissions != nil {
				user = []permissions.Layer{{Source: f.source, Spec: f.good.Permissions}}
			}
			s.userModel = f.good.Model
			s.userMCP = f.good.MCPServers
			s.userSandbox = f.good.Sandbox
			s.allowBypass = f.good.AllowBypassPermissions
			s.checkpoints = f.good.Checkpoints
			s.acp = f.good.ACP
			s.userHooks = f.good.Hooks
			s.userLSP = f.good.LSP
			s.userSubagents = f.good.Subagents
			for _, t := range f.good.TrustedFolders {
				s.userTrusted = append(s.userTrusted, realFolder(t))
			}
		}
	}
	s.user = permissions.NewPolicy(nil, user...)
	for _, f := range l.files {
		if f.root == "" {
			continue
		}
		trusted := slices.Contains(s.userTrusted, realFolder(f.root)) || (l.opts.Trusted != nil && l.opts.Trusted(f.root))
		s.trusted[f.root] = trusted
		s.rootFile[f.root] = f.path
		layers := slices.Clone(user)
		if g := f.good; g != nil {
			s.rootMCP[f.root] = g.MCPServers
			s.rootSandbox[f.root] = g.Sandbox
			if s.rootHooks == nil {
				s.rootHooks = map[string]json.RawMessage{}
			}
			s.rootHooks[f.root] = g.Hooks
			if g.Permissions != nil {
				layers = append(layers, permissions.Layer{Source: f.source, Spec: g.Permissions, Narrow: !trusted})
			}
			switch {
			case trusted:
				s.rootModel[f.root] = g.Model
				s.rootModels[f.root] = g.Models
				if g.LSP != nil {
					if s.rootLSP == nil {
						s.rootLSP = map[string]json.RawMessage{}
					}
					s.rootLSP[f.root] = g.LSP
				}
				if g.Subagents != nil {
					if s.rootSubagents == nil {
						s.rootSubagents = map[string]json.RawMessage{}
					}
					s.rootSubagents[f.root] = g.Subagents
				}
			default:
				s.ignored[f.root] = g.Widening()
			}
		}
		s.byRoot[f.root] = permissions.NewPolicy(nil, layers...)
		s.roots = append(s.roots, f.root)
	}
	slices.SortStableFunc(s.roots, func(a, b string) int { return len(b) - len(a) })
	l.cur.Store(s)
}

// This file holds the Guard: what the protected paths of the writable roots (package
// protected's list, every repository's .git at any depth, and what git's configuration makes
// git load or run) look like before a sandboxed command, so that the helper can make the
// existing ones read-only, and so that, after the command, whatever it created there is
// removed and whatever it changed is put back (the check after every sandboxed command).

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/protected"
)

// MaxGuardDirs bounds the folders Observe visits (a variable for the tests): past it,
// repositories deeper in the walk are not made read-only (Watched.Incomplete says so); the
// check after the command looks further (CheckTime).
var MaxGuardDirs = 200_000

// MaxProtectedMounts bounds the read-only mounts of one command: each costs the helper tens
// of microseconds. Paths past it are compared after the command instead, and put back
// when they are small files or links.
var MaxProtectedMounts = 256

// keptBytes is the size up to which a protected file that is not mounted read-only is
// kept in memory, to be put back if the command changes it.
const keptBytes = 64 << 10

// ctimeSlack is how recent a folder's change time may be for the Guard to list the folder
// again rather than trust what it listed before: a file system's clock ticks coarsely
// (a few milliseconds, a second or two on some), so a change made right after a look can
// leave the change time as it was.
const ctimeSlack = 2 * time.Second

// Guard watches one workspace's protected paths; see Observe and Check. Its memory of the
// folders it listed makes a walk of an unchanged tree one lstat per folder.
//
// Safe for concurrent use.
type Guard struct {
	// mu guards dirs and gen.
	mu   sync.Mutex
	dirs map[string]*dirMemo
	gen  uint64 // the walks made
}

// dirMemo is what the Guard listed in one folder.
type dirMemo struct {
	key      fileKey
	wd       int32    // the folder's inotify watch, made before it was listed (-1: none)
	gen      uint64   // the walk that last reached it
	children []string // subdirs' paths, made at the first walk that goes down
	subdirs  []string // names of the folders in it (not links), sorted
	hits     []string // names of the entries that are protected names, any case
}

// entryState is one watched path as it was before the command.
type entryState struct {
	exists  bool
	key     fileKey
	mode    fs.FileMode
	size    int64
	link    string // a symbolic link's target
	content []byte // a small regular file's content, when not mounted read-only
	kept    bool   // content holds the whole file
	mounted bool   // made read-only by a mount for the command
}

// Watched is the state of a workspace's protected paths before a command (Observe), for
// Build (what to make read-only) and Check (what to put back).
type Watched struct {
	// Roots are the writable roots watched, real paths.
	Roots []string
	// Incomplete says why some folders were not looked in ("" when all were).
	Incomplete string
	entries    map[string]*entryState
	gits       map[string]bool // every .git entry found by the walk
	// began is when Observe began, before the command could do anything: a .git whose
	// change time is later was made (or moved there) while the command ran.
	began    time.Time
	dangling map[string]string
	protect  []string
}

// Protected returns the existing paths to make read-only (at most MaxProtectedMounts), in
// an order where a path never comes after one beneath it.
func (w *Watched) Protected() []string { return w.protect }

// Dangling returns the watched paths that are symbolic links leading nowhere, with where
// they lead: a mount cannot cover them, and a command could create their target.
func (w *Watched) Dangling() map[string]string { return w.dangling }

// Close drops the Guard's watches. Contract: called once, when its workspace is closed.
func (g *Guard) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forget()
	g.dirs = nil
}

// Observe looks at the protected paths of roots (real paths of the workspace folders and
// writableRoots) and returns their state. writable are every place the command may write
// (roots, the temporary folder, the cache): a path git's configuration names counts only
// there. home is the user's home folder ("" when unknown), for "~/" in git's configuration.
//
// Contract: called by the daemon before it builds a command's policy; it only reads.
func (g *Guard) Observe(roots, writable []string, home string) *Watched {
	w := &Watched{Roots: roots, entries: map[string]*entryState{}, gits: map[string]bool{}, began: time.Now()}
	gits, incomplete := g.walk(roots, MaxGuardDirs, time.Time{})
	w.Incomplete = incomplete
	inWritable := func(p string) bool {
		return slices.ContainsFunc(writable, func(d string) bool { return within(p, d) })
	}
	add := func(p string) {
		if _, ok := w.entries[p]; !ok {
			w.entries[p] = observe(p)
		}
	}
	for _, root := range roots {
		for _, e := range protected.Names {
			add(filepath.Join(root, e.Name))
		}
	}
	for _, p := range gits {
		w.gits[p] = true
		add(p)
	}
	for _, p := range gits {
		if !strings.EqualFold(filepath.Base(p), ".git") {
			continue
		}
		r := readRepo(p)
		for _, d := range []string{r.gitDir, r.common} {
			if d != "" && inWritable(d) {
				add(d)
			}
		}
		for _, c := range r.configPaths(home) {
			if inWritable(c) {
				add(c)
			}
		}
	}
	// What exists is made read-only, outermost first; what lies beneath a path made
	// read-only comes with it.
	paths := make([]string, 0, len(w.entries))
	for p := range w.entries {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int {
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, p := range paths {
		e := w.entries[p]
		if !e.exists {
			continue
		}
		if e.link != "" {
			if _, err := os.Stat(p); err != nil {
				if w.dangling == nil {
					w.dangling = map[string]string{}
				}
				w.dangling[p] = e.link
				continue
			}
		}
		covered := slices.ContainsFunc(w.protect, func(q string) bool { return within(p, q) && w.entries[q].link == "" })
		switch {
		case covered:
			e.mounted = true
		case len(w.protect) < MaxProtectedMounts:
			w.protect = append(w.protect, p)
			e.mounted = true
		}
		if !e.mounted && e.mode.IsRegular() && e.size <= keptBytes {
			if b, err := readSmall(p, keptBytes+1); err == nil && int64(len(b)) == e.size {
				e.content, e.kept = b, true
			}
		}
	}
	return w
}

// observe returns p's state.
func observe(p string) *entryState {
	fi, err := os.Lstat(p)
	if err != nil {
		return &entryState{}
	}
	e := &entryState{exists: true, key: keyOf(fi), mode: fi.Mode(), size: fi.Size()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		e.link, _ = os.Readlink(p)
		if e.link == "" {
			e.link = "?"
		}
	}
	return e
}

// Reverted is one path the check after a command found created or changed.
type Reverted struct {
	Path string
	// What happened: "created" (now removed), "changed" or "removed" (put back when
	// Restored).
	What string
	// Restored says the path is as it was before the command.
	Restored bool
	// Why says why it could not be put back.
	Why string
}

// CheckTime bounds how long the check's walk looks for a .git the command made (a variable
// for the tests): a command can make folders faster than they can be looked at, so past it
// the check says it could not finish.
var CheckTime = 30 * time.Second

// ctimeMargin is how much earlier than Observe's start a .git's change time may be and still
// count as the command's: a file system stamps times from a coarse clock (a tick of a few
// milliseconds behind), and the command cannot act until milliseconds after Observe. (A
// variable for the tests.)
var ctimeMargin = 10 * time.Millisecond

// Check compares the protected paths with their state in before (Observe, right before the
// command), removes what the command created (a protected name in a root, a .git anywhere
// in the roots, a path git's configuration names) and puts back what it changed where it
// can: a link, a small file kept in before. It returns what it found, sorted by path, and
// why it could not look everywhere ("" when it did).
//
// A .git is the command's when the walk finds it where Observe did not and its change time
// is not before Observe began (the change time cannot be set back; a .git the command moved
// from elsewhere in the workspace is an existing repository's, which stays). The walk goes
// as far as the folders go, for CheckTime at most: beyond MaxGuardDirs too, since a command
// could make that many folders to hide a .git past the bound. Removal follows no link:
// each folder on the way is opened without following one.
//
// Contract: called by the daemon once the command and every process it started have ended.
func (g *Guard) Check(before *Watched) ([]Reverted, string) {
	var out []Reverted
	seen := map[string]bool{}
	gits, incomplete := g.walk(before.Roots, 0, time.Now().Add(CheckTime))
	since := before.began.Add(-ctimeMargin).UnixNano()
	for _, p := range gits {
		seen[p] = true
		if before.gits[p] {
			continue
		}
		if e, ok := before.entries[p]; ok && e.exists {
			continue
		}
		if fi, err := os.Lstat(p); err != nil || keyOf(fi).ctime < since && keyOf(fi).ino != 0 {
			continue // gone, or an existing repository's
		}
		out = append(out, removeCreated(before.Roots, p))
	}
	for p, e := range before.entries {
		if seen[p] && !e.exists {
			continue // removed above
		}
		now := observe(p)
		switch {
		case !e.exists && now.exists:
			out = append(out, removeCreated(before.Roots, p))
		case !e.exists:
		case e.mounted && e.link == "":
			// Read-only for the whole command: it cannot have changed.
		case !now.exists:
			out = append(out, putBack(before.Roots, p, e, "removed"))
		case now.key != e.key || now.mode != e.mode || now.size != e.size || now.link != e.link:
			out = append(out, putBack(before.Roots, p, e, "changed"))
		}
	}
	slices.SortFunc(out, func(a, b Reverted) int { return strings.Compare(a.Path, b.Path) })
	if incomplete != "" {
		incomplete = "the check after the command stopped looking for a .git it made: " + incomplete
	}
	return out, incomplete
}

// removeCreated removes p, which the command created, beneath one of roots.
func removeCreated(roots []string, p string) Reverted {
	r := Reverted{Path: p, What: "created"}
	if err := removeIn(roots, p); err != nil {
		r.Why = err.Error()
	} else {
		r.Restored = true
	}
	return r
}

// putBack makes p, beneath one of roots, what e says it was.
func putBack(roots []string, p string, e *entryState, what string) Reverted {
	r := Reverted{Path: p, What: what}
	if !(e.link != "" && e.link != "?") && !e.kept {
		r.Why = "pid kept no copy of it (a folder, or a file larger than 64 KiB, that was not made read-only)"
		return r
	}
	if err := removeIn(roots, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.Why = err.Error()
		return r
	}
	err := withParent(roots, p, func(dir *os.Root, name string) error {
		if e.link != "" && e.link != "?" {
			return dir.Symlink(e.link, name)
		}
		return dir.WriteFile(name, e.content, e.mode.Perm())
	})
	if err != nil {
		r.Why = err.Error()
		return r
	}
	r.Restored = true
	return r
}

// removeIn removes p and what it holds, p beneath one of roots, following no link on the
// way; it gives back write permission to the folders a command took it from (p's folder
// included, whose permission it then restores).
func removeIn(roots []string, p string) error {
	return withParent(roots, p, func(dir *os.Root, name string) error {
		err := dir.RemoveAll(name)
		if err == nil || !errors.Is(err, fs.ErrPermission) {
			return err
		}
		if fi, serr := dir.Stat("."); serr == nil {
			if dir.Chmod(".", fi.Mode().Perm()|0o700) == nil {
				defer dir.Chmod(".", fi.Mode().Perm())
			}
		}
		fs.WalkDir(dir.FS(), name, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dir.Chmod(q, 0o700)
			}
			return nil
		})
		return dir.RemoveAll(name)
	})
}

// withParent calls f with the folder holding p, opened from the root of roots that holds p
// one component at a time without following a link (openParent), and p's last component.
func withParent(roots []string, p string, f func(dir *os.Root, name string) error) error {
	i := slices.IndexFunc(roots, func(r string) bool { return within(p, r) && p != r })
	if i < 0 {
		return fmt.Errorf("%s is in no writable folder", p)
	}
	dir, err := openParent(roots[i], p)
	if err != nil {
		return err
	}
	defer dir.Close()
	return f(dir, filepath.Base(p))
}

// walk lists the folders of roots (not following links, not entering .git folders), at
// most limit of them (0: no bound) and until deadline (zero: none), and returns the paths of
// every .git entry found (any case) and of every protected name right in a root, sorted.
// A folder whose identity and change time are what its memory says, and whose change time
// is not recent, is not listed again: an unchanged folder costs one lstat. It goes level by
// level, the folders of a level looked at by several goroutines (system calls are most of
// the cost: 2 us each on this machine). incomplete says why the walk stopped early.
func (g *Guard) walk(roots []string, limit int, deadline time.Time) (hits []string, incomplete string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dirs == nil {
		g.dirs = map[string]*dirMemo{}
	}
	g.gen++
	gen, seen := g.gen, 0
	now := time.Now().Add(-ctimeSlack).UnixNano()
	// The folders that changed since the last walk, as inotify says; with it, a folder
	// that did not is not looked at again (notify_linux.go).
	dirty, all, notified := g.drained()
	level := slices.Clone(roots)
	isRoot := func(d string) bool { return slices.Contains(roots, d) }
	for len(level) > 0 && incomplete == "" {
		if limit > 0 && seen+len(level) > limit {
			level = level[:max(limit-seen, 0)]
			incomplete = fmt.Sprintf("the workspace holds more than %d folders: repositories nested deeper were not looked for", limit)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			incomplete = fmt.Sprintf("it looked at %d folders in %v, and more were left", seen, CheckTime)
			break
		}
		// Each folder of the level: its memory trusted (no event came for it), still good
		// by lstat, or listed again. Those to look at are looked at by several goroutines;
		// the map is only read meanwhile.
		memos := make([]*dirMemo, len(level))
		var look []int
		for i, d := range level {
			if m := g.dirs[d]; notified && !all && m != nil && m.wd >= 0 && !dirty[d] {
				memos[i] = m
			} else {
				look = append(look, i)
			}
		}
		parallel(len(look), func(j int) {
			i := look[j]
			d := level[i]
			old := g.dirs[d]
			lstats.Add(1)
			fi, err := os.Lstat(d)
			if err != nil || !fi.IsDir() {
				return
			}
			key := keyOf(fi)
			if old != nil && old.key == key && key.ctime < now && key.ino != 0 && (old.wd >= 0 || !notified) {
				memos[i] = old
				return
			}
			// Watched before it is listed, so that no change falls between the two.
			wd := int32(-1)
			if notified {
				wd = g.watchDir(d)
			}
			m := listDir(d, key)
			m.wd = wd
			if old != nil && old.wd >= 0 && old.wd != wd {
				g.unwatchDir(old.wd, d)
			}
			memos[i] = m
		})
		var next []string
		for i, d := range level {
			m := memos[i]
			if m == nil || m.gen == gen {
				continue // gone, or seen already (under two nested roots)
			}
			g.dirs[d] = m
			m.gen = gen
			seen++
			for _, h := range m.hits {
				if strings.EqualFold(h, ".git") || isRoot(d) {
					hits = append(hits, filepath.Join(d, h))
				}
			}
			if m.children == nil && len(m.subdirs) > 0 {
				m.children = make([]string, len(m.subdirs))
				for k, sub := range m.subdirs {
					m.children[k] = filepath.Join(d, sub)
				}
			}
			next = append(next, m.children...)
		}
		level = next
	}
	// Forget the folders no longer there (or no longer reached).
	if incomplete == "" {
		for d, m := range g.dirs {
			if m.gen != gen {
				g.unwatchDir(m.wd, d)
				delete(g.dirs, d)
			}
		}
	}
	slices.Sort(hits)
	return hits, incomplete
}

// lstats counts the folders the walks looked at with lstat (for the tests).
var lstats atomic.Int64

// parallel calls f(0) .. f(n-1) from up to GOMAXPROCS goroutines (at most 8), and returns
// once every call has.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), 8, (n+63)/64)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// listDir lists the folder d, whose lstat gave key.
func listDir(d string, key fileKey) *dirMemo {
	m := &dirMemo{key: key, wd: -1}
	f, err := os.Open(d)
	if err != nil {
		return m
	}
	defer f.Close()
	entries, _ := f.ReadDir(-1)
	for _, e := range entries {
		name := e.Name()
		if protected.IsName(name) {
			m.hits = append(m.hits, name)
			if strings.EqualFold(name, ".git") {
				continue // a repository's own: .git is protected whole
			}
		}
		if e.IsDir() {
			m.subdirs = append(m.subdirs, name)
		}
	}
	slices.Sort(m.subdirs)
	slices.Sort(m.hits)
	return m
}

// within reports whether p is d or lies beneath it.
func within(p, d string) bool {
	return p == d || strings.HasPrefix(p, d+"/") || d == "/"
}

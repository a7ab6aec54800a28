// This file holds the snapshots around a bash call: every file of the workspace folders
// that the ignore files leave in (at most MaxFileBytes each, links not followed), with a
// stat cache so that a file whose stat did not change costs one lstat.

package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pid-agent/pid/search"
)

// hashOf returns the hex sha256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// MaxSnapshotFiles (a variable for the tests) bounds the files a snapshot keeps track of: a workspace with more (its
// ignore files leave in more) gets no snapshot, and its bash calls' checkpoints say so,
// rather than pid's memory growing with whatever the workspace holds.
var MaxSnapshotFiles = 500_000

// tooManyFiles is a snapshot's error past MaxSnapshotFiles.
func tooManyFiles() error {
	return fmt.Errorf("the workspace folders hold more than %d files the ignore files leave in, so bash commands' changes are not recorded (add generated folders to .gitignore or .ignore)", MaxSnapshotFiles)
}

// Snapshot is the workspace as a snapshot saw it, for AfterBash.
type Snapshot struct {
	c     *cp
	files map[string]cached
	snap  int64  // the command's number in the journal (0: not recorded)
	by    string // the tool that ran the command (BeforeBashBy)
}

// snapshot walks the workspace folders and returns each file's state, keeping the content
// of every file whose stat changed since the last snapshot.
func (s *Session) snapshot(ctx context.Context) (map[string]cached, error) {
	s.st.gate.RLock() // the blobs it puts are referenced by the cache once it is set
	defer s.st.gate.RUnlock()
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.warmed = true
	old := s.cache
	// While every file is found unchanged, only their paths are listed (seen); the new map
	// is made at the first change. When none changed and no file went, the cache is returned
	// as it is: a snapshot of an unchanged tree allocates a path per file and nothing else,
	// and AfterBash sees at once that nothing changed (sameFiles).
	var next map[string]cached
	seen := make([]string, 0, len(old))
	materialize := func() {
		next = make(map[string]cached, len(old))
		for _, p := range seen {
			next[p] = old[p]
		}
		seen = nil
	}
	var changed atomic.Bool
	files := 0 // the files seen, against MaxSnapshotFiles
	err := search.Scan(ctx, s.ws, func(f search.ScanFile) *cached {
		c, ok, reused := s.scanOne(f, old)
		switch {
		case !reused:
			changed.Store(true)
		case ok:
			return unchangedFile
		}
		if ok {
			return &c
		}
		return nil
	}, func(path string, c *cached) error {
		if files++; files > MaxSnapshotFiles {
			return tooManyFiles()
		}
		switch {
		case c == nil:
		case c == unchangedFile && next == nil:
			seen = append(seen, path)
		case c == unchangedFile:
			next[path] = old[path]
		default:
			if next == nil {
				materialize()
			}
			next[path] = *c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if next == nil {
		// A file under two nested workspace folders is seen twice: the count tells that no
		// file went only when there is one folder.
		if !changed.Load() && len(seen) == len(old) && old != nil && len(s.ws.Folders()) == 1 {
			return old, nil
		}
		materialize()
	}
	if changed.Load() || len(next) != len(old) {
		s.manifest = ""
	}
	s.cache = next
	return next, nil
}

// unchangedFile is the scan's result for a file whose cached state still holds.
var unchangedFile = new(cached)

// sameFiles reports whether a and b are the same map (a snapshot that found nothing
// changed returns the one before).
func sameFiles(a, b map[string]cached) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// scanOne returns the cached state of one file a scan found: the cache's when its stat is
// unchanged, else read again. ok is false for what a snapshot leaves out (a file gone
// since its folder was listed, a socket, a device).
func (s *Session) scanOne(f search.ScanFile, old map[string]cached) (c cached, ok, reused bool) {
	// The stat the cache is checked with costs no allocation (one fstatat on Linux).
	st, err := f.Lstat()
	if err != nil {
		return cached{}, false, false
	}
	if st.Mode&fs.ModeSymlink == 0 && !st.Mode.IsRegular() {
		return cached{}, false, true
	}
	if o, ok := old[f.Path]; ok && o.dev == st.Dev && o.ino == st.Ino && o.ctime == st.CTime &&
		o.statPerm == uint32(st.Mode.Perm()) && o.statSize == st.Size && o.statMTime == st.MTime && o.regularish == st.Mode.IsRegular() {
		return o, true, true
	}
	// Changed: stat again for the content's read, so that what the cache keeps is the stat
	// taken with it.
	fi, err := f.Dir.Lstat(f.Name)
	if err != nil {
		return cached{}, false, false
	}
	mode := fi.Mode()
	if mode&fs.ModeSymlink == 0 && !mode.IsRegular() {
		return cached{}, false, false
	}
	c = cached{statPerm: uint32(mode.Perm()), statSize: fi.Size(), statMTime: fi.ModTime().UnixNano(), regularish: mode.IsRegular()}
	c.dev, c.ino, c.ctime = statIDs(fi)
	c.st = s.stateOf(f.Dir, f.Name, fi, MaxFileBytes, true)
	return c, true, false
}

// BeforeBash takes the snapshot a bash call's changes are measured against. It returns nil
// when no checkpoint is open. Contract: called from the bash call's goroutine before the
// command starts; it returns promptly when ctx ends (the checkpoint then says it is
// incomplete). Pass what it returns to AfterBash.
func (s *Session) BeforeBash(ctx context.Context) *Snapshot {
	return s.BeforeBashBy(ctx, "")
}

// BeforeBashBy is BeforeBash for the tool named tool (changes/list's "by"), which AfterBash
// records with each change it finds.
func (s *Session) BeforeBashBy(ctx context.Context, tool string) *Snapshot {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	s.writing.Lock() // no write or edit is half done while the snapshot runs
	files, err := s.snapshot(ctx)
	s.writing.Unlock()
	if err != nil {
		s.mu.Lock()
		s.incompleteLocked(c, fmt.Sprintf("the snapshot before a bash command failed (%v): what it changed is not recorded", err))
		s.mu.Unlock()
		return nil
	}
	snap := &Snapshot{c: c, files: files, by: tool}
	// The snapshot itself is kept (a blob, the same as the last one when nothing changed),
	// and named in the journal before the command starts, so that what a command pid is
	// killed during changed is found when the session is opened again.
	if h, err := s.keepManifest(); err == nil {
		s.mu.Lock()
		s.j.snaps++
		r := record{T: "bash", CP: c.id, Manifest: h, Snap: s.j.snaps}
		if s.writeLocked(r) == nil {
			snap.snap = r.Snap
		}
		s.mu.Unlock()
	}
	return snap
}

// keepManifest keeps the last snapshot as a blob, unless it is the same as the one kept
// before, and returns its hash.
func (s *Session) keepManifest() (string, error) {
	s.st.gate.RLock() // the blob is referenced by s.manifest once it is set
	defer s.st.gate.RUnlock()
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.manifest != "" {
		return s.manifest, nil
	}
	m := make(map[string]State, len(s.cache))
	for p, c := range s.cache {
		m[p] = c.st
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	h, err := s.st.put(data, false)
	if err == nil {
		s.manifest = h
	}
	return h, err
}

// recover records, for each bash command the journal says pid stopped during, what it
// changed: the files as they are now against the snapshot taken before it. Called when a
// session's checkpoints are opened again.
func (s *Session) recover(ctx context.Context) {
	s.mu.Lock()
	var pending []record
	for _, r := range s.j.pending {
		pending = append(pending, r)
	}
	s.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	slices.SortFunc(pending, func(a, b record) int { return int(a.Snap - b.Snap) })
	now, err := s.snapshot(ctx)
	for _, r := range pending {
		s.mu.Lock()
		c := s.byID[r.CP]
		data, gerr := s.st.get(r.Manifest)
		var before map[string]State
		if err == nil && gerr == nil && c != nil && json.Unmarshal(data, &before) == nil {
			for path, a := range now {
				b, had := before[path]
				switch {
				case !had:
					s.noteLocked(c, path, Absent)
				case same(b, a.st):
					continue
				default:
					s.noteLocked(c, path, b)
				}
				s.afterLocked(c, path, a.st, "bash")
			}
			for path, b := range before {
				if _, still := now[path]; !still {
					s.noteLocked(c, path, b)
					s.afterLocked(c, path, Absent, "bash")
				}
			}
		} else if c != nil {
			s.incompleteLocked(c, "pid stopped during a bash command, and what it changed could not be found again")
		}
		done := record{T: "bashdone", CP: r.CP, Snap: r.Snap}
		if s.writeLocked(done) == nil {
			s.j.apply(&done, s.byID)
		}
		s.mu.Unlock()
	}
}

// AfterBash takes a snapshot again and records, in the checkpoint open when before was
// taken, each file the command added, changed or deleted, with its state before; it
// returns those files, sorted by path. Contract: called once the command ended, from the
// same goroutine as BeforeBash; nil does nothing.
func (s *Session) AfterBash(ctx context.Context, before *Snapshot) (changed []Changed) {
	if before == nil {
		return nil
	}
	defer func() {
		slices.SortFunc(changed, func(a, b Changed) int { return strings.Compare(a.Path, b.Path) })
	}()
	s.writing.Lock()
	after, err := s.snapshot(context.WithoutCancel(ctx))
	s.writing.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := before.c
	if err != nil {
		s.incompleteLocked(c, fmt.Sprintf("the snapshot after a bash command failed (%v): what it changed is not recorded", err))
		return nil
	}
	// A snapshot that found nothing changed returns the map it started from.
	if !sameFiles(after, before.files) {
		for path, a := range after {
			b, had := before.files[path]
			switch {
			case !had:
				s.noteLocked(c, path, Absent)
			case same(b.st, a.st):
				continue
			default:
				s.noteLocked(c, path, b.st)
			}
			s.afterLocked(c, path, a.st, before.by)
			changed = append(changed, Changed{Path: path, Before: before.files[path].st, After: a.st})
			if !had {
				changed[len(changed)-1].Before = Absent
			}
		}
		for path, b := range before.files {
			if _, still := after[path]; !still {
				s.noteLocked(c, path, b.st)
				s.afterLocked(c, path, Absent, before.by)
				changed = append(changed, Changed{Path: path, Before: b.st, After: Absent})
			}
		}
	}
	if before.snap != 0 {
		done := record{T: "bashdone", CP: c.id, Snap: before.snap}
		if s.writeLocked(done) == nil {
			s.j.apply(&done, s.byID)
		}
	}
	return changed
}

// Changed is a file a bash command changed: its state before the command and after.
type Changed struct {
	Path          string
	Before, After State
}

// Content returns the content of a regular file's state as a snapshot kept it: ok is false
// when it was not kept (larger than the snapshot's bound, unreadable, evicted), or the
// state is not a regular file's.
func (s *Session) Content(st State) (data []byte, ok bool) {
	if st.Kind != "file" || st.Hash == "" {
		return nil, false
	}
	data, err := s.st.get(st.Hash)
	return data, err == nil
}

// reads the current state of the file at path, for a rewind.
func (s *Session) current(path string) (State, *os.Root, string, error) {
	root, rel, err := s.ws.At(path)
	if err != nil {
		return State{}, nil, "", err
	}
	fi, err := root.Lstat(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return Absent, root, rel, nil
		}
		return State{}, nil, "", err
	}
	return s.stateOf(root, rel, fi, maxToolFileBytes, false), root, rel, nil
}

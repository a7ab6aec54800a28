// This file holds File: an open, locked session file that entries are appended to, each
// Append in one write(2) so that what it returns with is in the kernel, whole.

package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/llm"
)

// File is an open, locked session file, from Store.Create or Store.OpenSession. Its methods
// are safe for concurrent use (a mutex orders them); while it is open no other File, in this
// process or another, can open the session.
type File struct {
	id   string
	path string

	// mu guards the fields below and orders writes.
	mu    sync.Mutex
	lock  *lockFile            // nil once closed
	f     *os.File             // nil while resting (see Rest), and once closed
	info  os.FileInfo          // the file's identity, to check that a reopened file is the same
	ids   map[string]bool      // every entry id in the file: true for readable ones, false for those of skipped lines
	sums  map[string]branchSum // each readable entry's branch, written after it (format.go)
	leaf  string
	size  int64
	dirty bool   // written since the last sync
	buf   []byte // scratch for building a batch's lines, reused across calls
	// broken is set when a failed write could not be undone: appending more would join
	// a torn line, so every later Append fails with it.
	broken error
	// marked reports whether the leaf is an unsaved marker (nothing written after it).
	marked bool
}

// maxKeptBuf caps the scratch buffer a File keeps between Appends.
const maxKeptBuf = 1 << 20

// ID returns the session's id. Safe for concurrent use.
func (f *File) ID() string { return f.id }

// Path returns the session file's path. Safe for concurrent use.
func (f *File) Path() string { return f.path }

// Leaf returns the id of the last entry appended or read ("" for a file with no entry yet):
// the parent that Append gives an entry whose ParentID is "". Safe for concurrent use.
func (f *File) Leaf() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaf
}

// Append writes entries at the end of the file in one write(2) (a batch of tool results
// costs one system call), one JSON line each, and returns their ids in order. For each
// entry, in order: an ID "" gets a new one (8 characters of [0-9a-z], unique in the file);
// a ParentID "" gets the current leaf (the entry before it in the batch, or Leaf()); a zero
// Timestamp gets the current time. Timestamps are kept to the millisecond. The last entry
// becomes the leaf.
//
// It does not fsync (Sync does) and keeps nothing buffered: when it returns the lines are in
// the kernel, so a kill -9 of pid loses none of them (a power loss may, until Sync).
//
// Contract: safe for concurrent use; the entries are not modified. It fails, writing
// nothing, for an entry whose kind and content do not go together, an ID already in the
// file or not of [0-9a-z_-], a ParentID that names no entry, a model config holding a key,
// a file that would pass MaxFileSize (wrapping ErrTooLarge), or a closed File (wrapping
// ErrClosed). When the write itself fails (a full disk), the file is cut back to where it
// was and an unsaved marker (KindUnsaved, naming the error) is appended in its place when
// that small line still fits, so that a reader knows the file has a hole there (see
// MarkUnsaved); if even the cut fails, every later Append fails too.
func (f *File) Append(entries ...Entry) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return nil, fmt.Errorf("store: appending to session %s: %w", f.id, ErrClosed)
	}
	if f.broken != nil {
		return nil, f.broken
	}
	if len(entries) == 0 {
		return nil, nil
	}
	ids := make([]string, len(entries))
	sums := make([]branchSum, len(entries))
	leaf := f.leaf
	now := time.Time{}
	buf := f.buf[:0]
	for i := range entries {
		e := entries[i] // a copy: the caller's entries are not modified
		if err := checkEntry(&e); err != nil {
			return nil, err
		}
		switch {
		case e.ID == "":
			e.ID = f.newEntryID(ids[:i])
		case !validID(e.ID):
			return nil, fmt.Errorf("store: entry id %q is not 1 to 64 characters of 0-9, a-z, _ and -", e.ID)
		case f.taken(e.ID, ids[:i]):
			return nil, fmt.Errorf("store: entry id %q is already in session %s", e.ID, f.id)
		}
		if e.ParentID == "" {
			e.ParentID = leaf
		} else if !f.has(e.ParentID, ids[:i]) {
			return nil, fmt.Errorf("store: entry %s: parentId %q names no entry of session %s", e.ID, e.ParentID, f.id)
		}
		if e.Timestamp.IsZero() {
			if now.IsZero() {
				now = time.Now()
			}
			e.Timestamp = now
		}
		parent := f.sums[e.ParentID]
		if j := slices.Index(ids[:i], e.ParentID); j >= 0 {
			parent = sums[j]
		}
		isMsg := e.Kind == KindMessage
		sums[i] = parent.next(e.ID, f.size+int64(len(buf)), isMsg, isMsg && e.Message.Role == llm.RoleUser)
		var err error
		if buf, err = appendLine(buf, &e, &sums[i]); err != nil {
			return nil, err
		}
		ids[i] = e.ID
		leaf = e.ID
	}
	if cap(buf) <= maxKeptBuf {
		f.buf = buf
	} else {
		f.buf = nil
	}
	if f.size+int64(len(buf)) > maxFileSize {
		return nil, fmt.Errorf("store: %s: %w: the entries would take it past %d bytes; start a new session (compact or fork it)", f.path, ErrTooLarge, maxFileSize)
	}
	if err := f.openLocked(); err != nil {
		return nil, err
	}
	if _, err := f.f.Write(buf); err != nil {
		werr := fmt.Errorf("store: writing to %s: %w", f.path, err)
		if terr := f.f.Truncate(f.size); terr != nil {
			f.broken = fmt.Errorf("store: %s may end with a torn line (a write failed: %v; cutting it off failed: %v); reopen the session", f.path, err, terr)
			return nil, werr
		}
		_ = f.markLocked(err.Error())
		return nil, werr
	}
	f.size += int64(len(buf))
	f.dirty = true
	for i, id := range ids {
		f.ids[id] = true
		f.sums[id] = sums[i]
	}
	f.leaf = leaf
	f.marked = false
	return ids, nil
}

// MarkUnsaved appends an unsaved marker (an entry of KindUnsaved) saying that what the
// session does from now on, until the next entry, is not saved, and why: the session layer
// calls it when it stops saving, and again at each message it does not save until one
// fits, so that a file with a hole never reads as whole. Nothing is written when the last
// entry is such a marker already.
//
// Contract: safe for concurrent use. It fails, writing nothing, when the marker cannot be
// written (the disk still full), after Close (wrapping ErrClosed), and for a broken File.
func (f *File) MarkUnsaved(reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return fmt.Errorf("store: marking session %s: %w", f.id, ErrClosed)
	}
	if f.broken != nil {
		return f.broken
	}
	return f.markLocked(reason)
}

// maxReason caps the reason a marker keeps.
const maxReason = 300

// markLocked writes an unsaved marker unless the leaf is one. Caller holds f.mu.
func (f *File) markLocked(reason string) error {
	if f.marked {
		return nil
	}
	if len(reason) > maxReason {
		reason = reason[:maxReason] + "…"
	}
	if err := f.openLocked(); err != nil {
		return err
	}
	e := Entry{Kind: KindUnsaved, ID: f.newEntryID(nil), ParentID: f.leaf, Timestamp: time.Now(), Unsaved: &Unsaved{Reason: reason}}
	sum := f.sums[f.leaf]
	line, err := appendLine(nil, &e, &sum)
	if err != nil {
		return err
	}
	if f.size+int64(len(line)) > maxFileSize {
		return fmt.Errorf("store: %s: %w", f.path, ErrTooLarge)
	}
	if _, err := f.f.Write(line); err != nil {
		if terr := f.f.Truncate(f.size); terr != nil {
			f.broken = fmt.Errorf("store: %s may end with a torn line (a write failed: %v; cutting it off failed: %v); reopen the session", f.path, err, terr)
		}
		return fmt.Errorf("store: writing to %s: %w", f.path, err)
	}
	f.size += int64(len(line))
	f.dirty = true
	f.ids[e.ID] = true
	f.sums[e.ID] = sum
	f.leaf = e.ID
	f.marked = true
	return nil
}

// has reports whether id is a readable entry of the file or one of batch (ids given
// earlier in the Append under way): an entry that can be a parent. Caller holds f.mu.
func (f *File) has(id string, batch []string) bool {
	return f.ids[id] || slices.Contains(batch, id)
}

// taken reports whether id is an entry of the file, readable or not, or one of batch: an id
// a new entry cannot have. Caller holds f.mu.
func (f *File) taken(id string, batch []string) bool {
	_, ok := f.ids[id]
	return ok || slices.Contains(batch, id)
}

// entryIDLen is the length of the ids Append makes: 36^8 ≈ 2.8e12 values, so a retry for a
// taken one is rare even in a file of millions of entries.
const entryIDLen = 8

// newEntryID returns a random id not used in the file nor in batch. The ids need only be
// unique in one file, which has one writer, so a fast non-cryptographic source does.
// Caller holds f.mu.
func (f *File) newEntryID(batch []string) string {
	for {
		var b [entryIDLen]byte
		r := rand.Uint64()
		for i := range b {
			b[i] = idDigits[r%36]
			r /= 36
		}
		if id := string(b[:]); !f.taken(id, batch) {
			return id
		}
	}
}

// Sync flushes the file to stable storage (fsync): the session layer calls it at the end of
// each turn. A File with nothing written since the last Sync returns at once.
//
// Contract: safe for concurrent use; fails wrapping ErrClosed after Close.
func (f *File) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return fmt.Errorf("store: syncing session %s: %w", f.id, ErrClosed)
	}
	return f.syncLocked()
}

// Rest syncs what was written and closes the file's descriptor, keeping the lock: an idle
// session holds one descriptor (its lock's) instead of two. The next Append or MarkUnsaved
// opens the file again (checking that it is still the same file). A resting or closed File
// returns at once.
//
// Contract: safe for concurrent use. On a failed sync the descriptor stays open and the
// error is the sync's.
func (f *File) Rest() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil || f.f == nil {
		return nil
	}
	if err := f.syncLocked(); err != nil {
		return err
	}
	f.f.Close()
	f.f = nil
	return nil
}

// openLocked opens the file again after Rest, for appending. It fails when the file at the
// path is no longer the one locked (removed or replaced by hand). Caller holds f.mu.
func (f *File) openLocked() error {
	if f.f != nil {
		return nil
	}
	file, err := safefile.OpenNoFollow(f.path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("store: opening %s to append to it: %w", f.path, err)
	}
	fi, err := file.Stat()
	if err != nil || f.info == nil || !os.SameFile(fi, f.info) || fi.Size() != f.size {
		file.Close()
		return fmt.Errorf("store: %s was removed, replaced or changed by another program while pid had the session open; its later messages are not saved there", f.path)
	}
	f.f = file
	return nil
}

// syncLocked fsyncs when dirty. Caller holds f.mu.
func (f *File) syncLocked() error {
	if !f.dirty || f.f == nil {
		return nil
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("store: syncing %s: %w", f.path, err)
	}
	f.dirty = false
	return nil
}

// Close syncs what was written since the last Sync, closes the file and releases the lock
// (removing the lock file), so another File may open the session. Later calls do nothing
// and return nil.
//
// Contract: safe for concurrent use. The lock is released even when the sync fails; the
// error is the sync's.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return nil
	}
	err := f.syncLocked()
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
	f.lock.release()
	f.lock = nil
	f.buf = nil
	return err
}

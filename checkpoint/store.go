// Package checkpoint keeps what files were before an agent's tools changed them, so that
// the changes of a run can be listed, diffed and taken back. The entry points are Open (the
// store under $XDG_STATE_HOME/pid/checkpoints) and Store.Session (one session's record).
//
// This file holds the store: content-addressed blobs (sha256, written once, mode 0600)
// under blobs/, each session's journal under sessions/, and the bound on their size.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultMaxBytes is the store's bound when the settings give none: 2 GiB.
const DefaultMaxBytes = 2 << 30

// MaxFileBytes is the largest file a bash snapshot keeps; a larger one is recorded as not
// kept, and a rewind names it as skipped.
const MaxFileBytes = 2 << 20

// maxToolFileBytes is the largest file kept before write or edit changes it.
const maxToolFileBytes = 64 << 20

// Store is the checkpoint store shared by a daemon's sessions. Safe for concurrent use.
type Store struct {
	dir      string
	maxBytes int64
	full     atomic.Bool // the bound was reached and nothing more could be evicted
	// used is the bytes the blobs take, kept as blobs are written and eviction passes
	// count them; counted is set once a pass has counted them (before, used is unknown).
	// A blob two puts write at once is counted twice: used errs on the high side, and a
	// pass over the bound counts again before it removes anything.
	used    atomic.Int64
	counted atomic.Bool
	// walks counts the passes that walked every blob (for the tests).
	walks atomic.Int64

	// mu guards the live sessions, whose blobs eviction keeps.
	mu   sync.Mutex
	live map[*Session]struct{}
	// evicting is held by the one eviction pass running.
	evicting sync.Mutex
	// gate is held for reading from a blob's put until what refers to it is recorded (a
	// journal line, a live session's stat cache or kept snapshot), and for writing by an
	// eviction pass while it finds what is referenced and removes the rest: so a blob just
	// put (or found already kept) is never removed before it is referenced. Lock order:
	// gate, then a Session's snapMu, then its mu; never gate while holding those.
	gate sync.RWMutex
}

// Open returns the store in dir (created, mode 0700, when missing), bounded to maxBytes of
// blobs (0: DefaultMaxBytes).
func Open(dir string, maxBytes int64) (*Store, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	for _, d := range []string{dir, filepath.Join(dir, "blobs"), filepath.Join(dir, "sessions")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoints: %w", err)
		}
	}
	return &Store{dir: dir, maxBytes: maxBytes, live: map[*Session]struct{}{}}, nil
}

// Dir returns the store's folder.
func (st *Store) Dir() string { return st.dir }

// blobPath returns where the blob of hash h is kept.
func (st *Store) blobPath(h string) string {
	return filepath.Join(st.dir, "blobs", h[:2], h[2:])
}

// errFull is put's error once the store is at its bound.
var errFull = errors.New("the checkpoint store is at its size limit (checkpoints.maxBytes)")

// put keeps data and returns its hash. A blob already kept is not written again; once the
// store is at its bound nothing new is, unless always. Safe for concurrent use: a blob is
// written to a temporary name and renamed into place.
func (st *Store) put(data []byte, always bool) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	p := st.blobPath(h)
	if _, err := os.Lstat(p); err == nil {
		return h, nil
	}
	if !always && (st.full.Load() || st.used.Load()+int64(len(data)) > 2*st.maxBytes) {
		// The store may pass its bound between eviction passes (a pass at each prompt's
		// end gives up the oldest sessions), but never twice it: a workspace cannot fill
		// the disk through pid's snapshots of it within one prompt. (Until the first pass
		// counts the store, the count is of this process's writes.)
		return "", errFull
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	st.used.Add(int64(len(data)))
	return h, nil
}

// get returns the blob of hash h.
func (st *Store) get(h string) ([]byte, error) {
	if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("checkpoints: %q is not a blob hash", h)
	}
	data, err := os.ReadFile(st.blobPath(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errEvicted
	}
	return data, err
}

// errEvicted is get's error for a blob removed to keep the store under its bound.
var errEvicted = errors.New("its saved content was removed to keep the checkpoints under their size limit (checkpoints.maxBytes)")

// Enforce keeps the store under its bound. When the blobs take more, first the blobs
// nothing refers to any more go (a deleted session's, the snapshots of finished commands of
// closed sessions), then the oldest closed sessions' checkpoints are given up, one session
// at a time, until the blobs fit (their journals say so, and the blobs only they used are
// removed); a live session's never are. It returns the bytes the blobs take afterwards.
// Contract: safe for concurrent use (one pass runs at a time); it reads every journal and
// waits for the snapshots under way, so callers run it off the request path.
func (st *Store) Enforce() (int64, error) {
	st.evicting.Lock()
	defer st.evicting.Unlock()
	if st.counted.Load() {
		// The running count says whether a pass is needed: no walk of every blob at
		// each prompt's end while the store is under its bound.
		if used := st.used.Load(); used <= st.maxBytes {
			st.full.Store(false)
			return used, nil
		}
	}
	used, err := st.blobBytes()
	if err == nil {
		st.used.Store(used)
		st.counted.Store(true)
	}
	if err != nil || used <= st.maxBytes {
		st.full.Store(false)
		return used, err
	}
	defer func() { st.used.Store(used) }()
	st.gate.Lock()
	defer st.gate.Unlock()
	journals, err := st.journals()
	if err != nil {
		return used, err
	}
	st.mu.Lock()
	live := make([]*Session, 0, len(st.live))
	liveIDs := map[string]bool{}
	for s := range st.live {
		live = append(live, s)
		liveIDs[s.id] = true
	}
	st.mu.Unlock()
	liveKeep := map[string]bool{}
	for _, s := range live {
		for h := range s.hashes() {
			liveKeep[h] = true
		}
	}
	// keep is what the journals not given up and the live sessions refer to.
	keep := func() map[string]bool {
		out := maps.Clone(liveKeep)
		for _, j := range journals {
			if !j.evicted {
				maps.Copy(out, j.hashes)
			}
		}
		return out
	}
	used, err = st.sweep(keep())
	if err != nil {
		return used, err
	}
	for i := 0; i < len(journals) && used > st.maxBytes; i++ {
		j := &journals[i]
		if liveIDs[j.id] || j.evicted {
			continue
		}
		if err := appendEvicted(j.path); err != nil {
			return used, err
		}
		j.evicted = true
		if used, err = st.sweep(keep()); err != nil {
			return used, err
		}
	}
	st.full.Store(used > st.maxBytes)
	return used, nil
}

// sweep removes every blob not in keep (and what a put stopped during left), and returns
// the bytes the blobs take afterwards. Contract: called with gate held for writing.
func (st *Store) sweep(keep map[string]bool) (int64, error) {
	var used int64
	err := filepath.WalkDir(filepath.Join(st.dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		h := filepath.Base(filepath.Dir(p)) + d.Name()
		if !keep[h] && os.Remove(p) == nil {
			return nil
		}
		used += fi.Size()
		return nil
	})
	return used, err
}

// blobBytes returns the bytes the blobs take.
func (st *Store) blobBytes() (int64, error) {
	st.walks.Add(1)
	var n int64
	err := filepath.WalkDir(filepath.Join(st.dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// journalInfo is what eviction needs of a session's journal.
type journalInfo struct {
	id, path string
	mtime    int64
	evicted  bool
	hashes   map[string]bool
}

// journals returns the sessions' journals, oldest first.
func (st *Store) journals() ([]journalInfo, error) {
	dir := filepath.Join(st.dir, "sessions")
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []journalInfo
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, name)
		j, err := readJournal(p)
		if err != nil {
			continue
		}
		info := journalInfo{id: strings.TrimSuffix(name, ".jsonl"), path: p, mtime: fi.ModTime().UnixNano(), evicted: j.evicted, hashes: j.refs(st)}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b journalInfo) int {
		switch {
		case a.mtime < b.mtime:
			return -1
		case a.mtime > b.mtime:
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// Delete forgets session id's checkpoints: its journal is removed; the blobs only it used
// go at the next eviction pass.
func (st *Store) Delete(id string) {
	if id == "" || filepath.Base(id) != id || id[0] == '.' {
		return
	}
	os.Remove(filepath.Join(st.dir, "sessions", id+".jsonl"))
}

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

	// mu guards the live sessions, whose blobs eviction keeps.
	mu   sync.Mutex
	live map[*Session]struct{}
	// evicting is held by the one eviction pass running.
	evicting sync.Mutex
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

// put keeps data and returns its hash. A blob already kept is not written again. Safe for
// concurrent use: a blob is written to a temporary name and renamed into place.
func (st *Store) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	p := st.blobPath(h)
	if _, err := os.Lstat(p); err == nil {
		return h, nil
	}
	if st.full.Load() {
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

// Enforce keeps the store under its bound: when the blobs take more, the oldest sessions'
// checkpoints are given up first (their journals say so, and their blobs no other
// session uses are removed), never a live session's. It returns the bytes the blobs take
// afterwards. Contract: safe for concurrent use (one pass runs at a time); it reads every
// journal, so callers run it off the request path.
func (st *Store) Enforce() (int64, error) {
	st.evicting.Lock()
	defer st.evicting.Unlock()
	used, err := st.blobBytes()
	if err != nil || used <= st.maxBytes {
		st.full.Store(false)
		return used, err
	}
	journals, err := st.journals()
	if err != nil {
		return used, err
	}
	st.mu.Lock()
	liveIDs := map[string]bool{}
	var liveHashes []map[string]bool
	for s := range st.live {
		liveIDs[s.id] = true
		liveHashes = append(liveHashes, s.hashes())
	}
	st.mu.Unlock()
	for len(journals) > 0 && used > st.maxBytes {
		j := journals[0]
		journals = journals[1:]
		if liveIDs[j.id] || j.evicted {
			continue
		}
		if err := appendEvicted(j.path); err != nil {
			return used, err
		}
		keep := map[string]bool{}
		for _, o := range journals {
			if !o.evicted {
				for h := range o.hashes {
					keep[h] = true
				}
			}
		}
		for _, m := range liveHashes {
			for h := range m {
				keep[h] = true
			}
		}
		for h := range j.hashes {
			if !keep[h] {
				if fi, err := os.Lstat(st.blobPath(h)); err == nil {
					if os.Remove(st.blobPath(h)) == nil {
						used -= fi.Size()
					}
				}
			}
		}
	}
	st.full.Store(used > st.maxBytes)
	return used, nil
}

// blobBytes returns the bytes the blobs take.
func (st *Store) blobBytes() (int64, error) {
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
		info := journalInfo{id: strings.TrimSuffix(name, ".jsonl"), path: p, mtime: fi.ModTime().UnixNano(), evicted: j.evicted, hashes: map[string]bool{}}
		for _, c := range j.cps {
			for _, f := range c.files {
				for _, s := range []*State{&f.before, f.after} {
					if s != nil && s.Hash != "" {
						info.hashes[s.Hash] = true
					}
				}
			}
		}
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

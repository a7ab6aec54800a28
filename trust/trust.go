// Package trust keeps the folders the user trusts: until a workspace folder is trusted, what
// it ships (its .pid/settings.json, later its MCP servers) may only narrow what pid does.
// Trust is the user's: it lives in user state ($XDG_STATE_HOME/pid/trust.json, mode 0600),
// keyed by each folder's real path, and in the user settings' trustedFolders, never in a
// workspace.
//
// The entry point is Open, which returns a Store; Store.Trusted answers for one folder.
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
)

// Folder is one trusted folder, in the shape of trust/list.
type Folder struct {
	// Folder is the folder's real path (links resolved).
	Folder string `json:"folder"`
	// TrustedAt is when the user trusted it, ISO 8601 in UTC.
	TrustedAt string `json:"trustedAt"`
}

// ErrUnknownFolder is wrapped by Revoke's error for a folder that is not trusted.
var ErrUnknownFolder = errors.New("this folder is not trusted")

// maxFile caps trust.json: it holds paths, a few hundred bytes each.
const maxFile = 4 << 20

type file struct {
	Version int      `json:"version"`
	Folders []Folder `json:"folders"`
}

// Store is the trust file. Several pid processes may share it: every change re-reads it
// first, and Trusted re-reads it when its size or modification time changed.
type Store struct {
	path string
	now  func() time.Time

	// mu guards the fields below and serializes writes.
	mu      sync.Mutex
	folders []Folder
	modTime time.Time
	size    int64
	// broken is why the file could not be read; nothing is trusted from it meanwhile, and
	// no change is written over it.
	broken error
}

// DefaultPath returns $XDG_STATE_HOME/pid/trust.json (see package xdg).
func DefaultPath() (string, error) {
	dir, err := xdg.StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "trust.json"), nil
}

// Open opens the trust file at path ("" means DefaultPath). A missing file trusts nothing
// and is created by the first Grant. A file that cannot be read (not a regular file, too
// large, not valid JSON) is an error: the caller reports it and runs with no trusted folder
// from the file, rather than overwrite it.
//
// Contract: called once per host; the Store is safe for concurrent use.
func Open(path string) (*Store, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, err
		}
	}
	s := &Store{path: path, now: time.Now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(true); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// load re-reads the file when it changed since the last read (always when force is set).
// Caller holds s.mu.
func (s *Store) load(force bool) error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.folders, s.modTime, s.size, s.broken = nil, time.Time{}, 0, nil
		return nil
	}
	if err != nil {
		s.broken = err
		return fmt.Errorf("trust: %w", err)
	}
	if !force && s.broken == nil && fi.ModTime().Equal(s.modTime) && fi.Size() == s.size {
		return nil
	}
	data, err := safefile.Read(s.path, maxFile)
	if err == nil {
		var f file
		if err = json.Unmarshal(data, &f); err == nil {
			for i, fo := range f.Folders {
				if !filepath.IsAbs(fo.Folder) {
					err = fmt.Errorf("folders[%d].folder %q is not an absolute path", i, fo.Folder)
					break
				}
			}
			if err == nil {
				s.folders, s.modTime, s.size, s.broken = f.Folders, fi.ModTime(), fi.Size(), nil
				return nil
			}
		}
	}
	s.broken = fmt.Errorf("trust: %s is not a valid trust file: %v", s.path, err)
	s.folders = nil
	return s.broken
}

// RealPath returns folder with its links resolved, or cleaned as written when it cannot be
// resolved (a folder that is gone).
func RealPath(folder string) string {
	if r, err := filepath.EvalSymlinks(folder); err == nil {
		return r
	}
	return filepath.Clean(folder)
}

// Trusted reports whether the folder (any spelling: its real path is compared) is trusted
// by the file. Only that exact folder counts: neither its parents nor its subfolders.
//
// Contract: safe for concurrent use; it stats the file and re-reads it when another process
// changed it. A broken file trusts nothing.
func (s *Store) Trusted(folder string) bool {
	if s == nil {
		return false
	}
	real := RealPath(folder)
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.load(false)
	return slices.ContainsFunc(s.folders, func(f Folder) bool { return f.Folder == real })
}

// Grant trusts a folder (kept by its real path) and returns its entry; a folder trusted
// already keeps its first date.
//
// Contract: safe for concurrent use; it writes the file (mode 0600, folder 0700) before
// returning. It refuses to write over a file it could not read.
func (s *Store) Grant(folder string) (Folder, error) {
	if !filepath.IsAbs(folder) {
		return Folder{}, fmt.Errorf("trust: folder %q is not an absolute path", folder)
	}
	real := RealPath(folder)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(false); err != nil {
		return Folder{}, err
	}
	if i := slices.IndexFunc(s.folders, func(f Folder) bool { return f.Folder == real }); i >= 0 {
		return s.folders[i], nil
	}
	f := Folder{Folder: real, TrustedAt: s.now().UTC().Format(time.RFC3339)}
	return f, s.save(append(slices.Clone(s.folders), f))
}

// Revoke stops trusting a folder. A folder not trusted by the file is an error wrapping
// ErrUnknownFolder.
//
// Contract: as Grant.
func (s *Store) Revoke(folder string) error {
	real := RealPath(folder)
	clean := filepath.Clean(folder)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(false); err != nil {
		return err
	}
	i := slices.IndexFunc(s.folders, func(f Folder) bool { return f.Folder == real || f.Folder == clean })
	if i < 0 {
		return fmt.Errorf("trust: %w: %s", ErrUnknownFolder, folder)
	}
	return s.save(slices.Delete(slices.Clone(s.folders), i, i+1))
}

// List returns the trusted folders in the order they were trusted.
//
// Contract: safe for concurrent use; it re-reads a changed file and fails only when the
// file cannot be read.
func (s *Store) List() ([]Folder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.load(false)
	out := slices.Clone(s.folders)
	if out == nil {
		out = []Folder{}
	}
	return out, err
}

// save writes folders to the file. Caller holds s.mu.
func (s *Store) save(folders []Folder) error {
	if folders == nil {
		folders = []Folder{}
	}
	data, err := json.MarshalIndent(file{Version: 1, Folders: folders}, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteAtomic(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("trust: writing %s: %w", s.path, err)
	}
	s.folders = folders
	if fi, err := os.Stat(s.path); err == nil {
		s.modTime, s.size = fi.ModTime(), fi.Size()
	}
	return nil
}

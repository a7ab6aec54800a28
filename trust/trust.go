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
	// stamp is the file's state when it was read (a change of mode or owner counts: a
	// chmod leaves the modification time alone).
	stamp stamp
	// broken is why the file could not be read, or is not trusted; nothing is trusted from
	// it meanwhile, and no change is written over it.
	broken error
	// onBroken, when set, hears each new reason the file is broken (OnBroken).
	onBroken func(error)
	told     string // the reason last told
}

// stamp is what tells a changed trust file: its modification time, size, mode and owner,
// and its folder's mode.
type stamp struct {
	modTime time.Time
	size    int64
	mode    fs.FileMode
	uid     int
	dirMode fs.FileMode
}

// stampOf returns fi's stamp.
func stampOf(fi fs.FileInfo) stamp {
	return stamp{modTime: fi.ModTime(), size: fi.Size(), mode: fi.Mode(), uid: ownerOf(fi)}
}

// stampAt returns the stamp of the file at path as fi (from Lstat) describes it.
func stampAt(path string, fi fs.FileInfo) stamp {
	st := stampOf(fi)
	if di, err := os.Stat(filepath.Dir(path)); err == nil {
		st.dirMode = di.Mode()
	}
	return st
}

// ErrUnsafe is wrapped by the error of a trust file that could be changed by someone other
// than the user (see unsafeFile): nothing is trusted from it.
var ErrUnsafe = errors.New("it could be changed by someone other than you")

// unsafeFile returns why the trust file, as fi (from Lstat) describes it, or its folder
// must not be believed, as ssh refuses such files: a symbolic link (it may point into a
// workspace, which then says what is trusted), a file or folder others may write, or a
// file someone else owns. "" when it is safe.
func unsafeFile(path string, fi fs.FileInfo) string {
	uid := os.Getuid()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Sprintf("is a symbolic link (to %s)", target)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("may be written by others (mode %04o; run chmod 600 %s)", fi.Mode().Perm(), path)
	}
	if st := stampOf(fi); st.uid >= 0 && st.uid != uid {
		return fmt.Sprintf("belongs to another user (uid %d, you are %d)", st.uid, uid)
	}
	dir := filepath.Dir(path)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o022 != 0 && di.Mode()&fs.ModeSticky == 0 {
		return fmt.Sprintf("is in %s, which others may write (mode %04o; run chmod 700 %s)", dir, di.Mode().Perm(), dir)
	}
	return ""
}

// OnBroken sets f to hear, once per reason, that the trust file cannot be read or is not
// to be believed (and so trusts nothing), when a re-read finds it so. f is called with the
// store's lock held: it must not call back into the store and must not block.
func (s *Store) OnBroken(f func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onBroken = f
}

// setBroken records why the file trusts nothing and tells onBroken of a new reason.
// Caller holds s.mu.
func (s *Store) setBroken(err error) error {
	s.broken, s.folders, s.stamp = err, nil, stamp{}
	if s.onBroken != nil && err.Error() != s.told {
		s.told = err.Error()
		s.onBroken(err)
	}
	return err
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
// large, not valid JSON) or must not be believed (a symbolic link, a file others may write
// or another user owns, in a folder others may write: ErrUnsafe) is an error: the caller
// reports it; the Store returned with that error trusts nothing from the file (and writes
// nothing over it) until the file is fixed, which its next use sees. A nil Store comes
// only with an error that no path could be found.
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
		s.told = err.Error() // the caller reports it
		return s, err
	}
	return s, nil
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// load re-reads the file when it changed since the last read (always when force is set).
// Caller holds s.mu.
func (s *Store) load(force bool) error {
	fi, err := os.Lstat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.folders, s.stamp, s.broken, s.told = nil, stamp{}, nil, ""
		return nil
	}
	if err != nil {
		return s.setBroken(fmt.Errorf("trust: %w", err))
	}
	st := stampAt(s.path, fi)
	if !force && s.broken == nil && st.modTime.Equal(s.stamp.modTime) && st.size == s.stamp.size && st.mode == s.stamp.mode && st.uid == s.stamp.uid && st.dirMode == s.stamp.dirMode {
		return nil
	}
	if why := unsafeFile(s.path, fi); why != "" {
		return s.setBroken(fmt.Errorf("trust: %s %s, so no folder is trusted from it: %w; make it a file of yours that only you may write", s.path, why, ErrUnsafe))
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
				s.folders, s.stamp, s.broken, s.told = f.Folders, st, nil, ""
				return nil
			}
		}
	}
	return s.setBroken(fmt.Errorf("trust: %s is not a valid trust file: %v", s.path, err))
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
	if fi, err := os.Lstat(s.path); err == nil {
		s.stamp = stampAt(s.path, fi)
	}
	return nil
}

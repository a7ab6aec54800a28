// This file creates and replaces the file tools' files through temporary files of one
// recognisable name, in the folder's os.Root (reaching a path through the os.Root of the
// workspace folder holding it is package workspace's At; opening a regular file without
// blocking is internal/rootfile's).

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pid-agent/pid/internal/textcut"
)

// Temporary files: pid writes new content to ".NAME.pid-tmp-PID-RAND" in the file's folder
// and then links or renames it into place. PID is the writing process, so a later session
// can tell a leftover of a process that was killed from a write in progress.
const (
	tempMarker = ".pid-tmp-"
	// tempNameMax bounds the NAME part, so the temporary name fits in 255 bytes.
	tempNameMax = 160
	// staleTempAge is how long a leftover must have been untouched before it is removed,
	// even when its process is gone (a process in another PID namespace or on another
	// machine sharing the folder looks gone from here).
	staleTempAge = time.Minute
)

// tempName returns a new temporary name for the file named base.
func tempName(base string) string {
	name := string(textcut.Runes([]byte(base), tempNameMax))
	return fmt.Sprintf(".%s%s%d-%08x", name, tempMarker, os.Getpid(), rand.Uint32())
}

// tempPID returns the pid in a temporary name made by tempName, or false when name is not
// one.
func tempPID(name string) (int, bool) {
	i := strings.LastIndex(name, tempMarker)
	if i < 1 || name[0] != '.' {
		return 0, false
	}
	pidText, rnd, ok := strings.Cut(name[i+len(tempMarker):], "-")
	if !ok || len(rnd) != 8 {
		return 0, false
	}
	if _, err := strconv.ParseUint(rnd, 16, 32); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// sweepTemps removes, once per folder and session, the temporary files that pid processes
// which no longer exist left in the folder dir (an os.Root on it; dirReal is its real
// path): regular files named by tempName whose process is gone and which nobody has touched
// for staleTempAge. createFile and replaceFile call it before they first write into a
// folder, so no tree is ever walked for it. Failures are ignored: a leftover stays.
func (w *Workspace) sweepTemps(dir *os.Root, dirReal string) {
	w.mu.Lock()
	done := w.swept[dirReal]
	w.swept[dirReal] = true
	w.mu.Unlock()
	if done {
		return
	}
	f, err := dir.Open(".")
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1) // names only: no stat per entry
	f.Close()
	self := os.Getpid()
	for _, name := range names {
		pid, ok := tempPID(name)
		if !ok || pid == self || !processGone(pid) {
			continue
		}
		if fi, err := dir.Lstat(name); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) >= staleTempAge {
			_ = dir.Remove(name)
		}
	}
}

// writeTemp writes data to a new temporary file for the file named base in the folder dir,
// with permission bits perm (before the umask, or exactly with chmod), synced to disk, and
// returns its name. On failure nothing is left behind: the cleanup works on the name it
// created, never on the results (a failing step returns "" for the name before deferred
// functions run).
func writeTemp(dir *os.Root, base string, data []byte, perm fs.FileMode, chmod bool) (string, error) {
	var (
		f    *os.File
		name string
		err  error
	)
	for range 10 {
		name = tempName(base)
		f, err = dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		f.Close()
		_ = dir.Remove(name)
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if chmod {
		if err := f.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = dir.Remove(name)
		return "", err
	}
	return name, nil
}

// errAppeared is createFile's error when a file took the name while pid was writing it.
var errAppeared = errors.New("a file appeared at that path while pid was creating it")

// parentOf opens an os.Root on the folder holding name (relative to r), creating missing
// folders first when create is set, and returns it with name's last element. Every step of
// a create or replace then acts on that one folder, wherever it is moved to meanwhile, so
// the temporary file and the file are always side by side, and the temporary file can
// always be removed.
func parentOf(r *os.Root, name string, create bool) (*os.Root, string, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	if create {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return nil, "", err
		}
	}
	parent, err := r.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return parent, base, nil
}

// createFile creates the new file name (relative to r) holding data, with its missing
// parent folders, atomically: the content goes to a temporary file in the same folder,
// which is synced and then hard-linked to name. link(2) never replaces an existing name,
// so a file that appeared meanwhile is left alone and the call fails with errAppeared; a
// reader or a crash sees no file or the whole file, never part of it. On a file system
// without hard links the temporary file is renamed instead, after checking that the name
// is still free (a file appearing in between would then be replaced). dirReal is the real
// path of name's folder, for sweepTemps.
func (w *Workspace) createFile(r *os.Root, name, dirReal string, data []byte) error {
	dir, base, err := parentOf(r, name, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	w.sweepTemps(dir, dirReal)
	tmp, err := writeTemp(dir, base, data, 0o666, false)
	if err != nil {
		return err
	}
	defer dir.Remove(tmp)
	switch err := dir.Link(tmp, base); {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return errAppeared
	case !noHardLinks(err):
		return err
	}
	if _, err := dir.Lstat(base); err == nil {
		return errAppeared
	}
	return dir.Rename(tmp, base)
}

// replaceFile replaces the content of the existing file name (relative to r) atomically:
// it writes a temporary file next to it with permission bits mode, syncs it and renames it
// over the file, so a reader sees the old content or the new, never a mix. On failure the
// file is untouched. dirReal is the real path of name's folder, for sweepTemps.
func (w *Workspace) replaceFile(r *os.Root, name, dirReal string, data []byte, mode fs.FileMode) error {
	dir, base, err := parentOf(r, name, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	w.sweepTemps(dir, dirReal)
	tmp, err := writeTemp(dir, base, data, mode, true)
	if err != nil {
		return err
	}
	if err := dir.Rename(tmp, base); err != nil {
		_ = dir.Remove(tmp)
		return err
	}
	return nil
}

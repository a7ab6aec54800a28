// This file holds a session's lock: flock(2) (LockFileEx on Windows, lock_windows.go) on a
// sidecar file "<id>.lock" that holds the holder's process id. The kernel drops a flock when
// the last descriptor of it closes, which a dying process's exit does even under SIGKILL, so
// a dead holder's lock is free to take; the pid in the file only names the holder in the
// refusal.

package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/pid-agent/pid/internal/safefile"
)

// lockFile is a held lock.
type lockFile struct {
	path string
	f    *os.File
}

// acquire takes the lock at path for session id without waiting. It fails with a
// *LockedError when another open file description holds it (another process, or another
// File of this one). The file is opened without following links, so a link planted in the
// lock's place cannot make pid write its pid into another file.
func acquire(path, id string) (*lockFile, error) {
	// A releaser removes the lock file while holding it; whoever opened that file before
	// the removal then holds a lock on a file no longer at path. Checking that the locked
	// file is still the one at path, and starting over when not, closes that race.
	for attempt := 0; attempt < 100; attempt++ {
		f, err := safefile.OpenNoFollow(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o600)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return nil, fmt.Errorf("store: the lock file %s is a symbolic link; remove it", path)
			}
			return nil, fmt.Errorf("store: cannot open the lock file: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("store: %w", err)
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("store: the lock file %s is %s, not a regular file; remove it", path, kind(fi.Mode()))
		}
		if err := lockNow(f); err != nil {
			if errors.Is(err, errLocked) {
				pid := readPID(f)
				f.Close()
				return nil, &LockedError{ID: id, PID: pid}
			}
			f.Close()
			return nil, fmt.Errorf("store: cannot lock %s: %w", path, err)
		}
		if !samePath(f, path) {
			f.Close() // drops the lock on the removed file
			continue
		}
		// Ours now, whether the file is new or a dead holder's: say who holds it.
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return &lockFile{path: path, f: f}, nil
	}
	return nil, fmt.Errorf("store: the lock file %s keeps being replaced; is another program removing it?", path)
}

// samePath reports whether the open file f is the file now at path.
func samePath(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// readPID returns the process id written in a lock file, 0 when there is none.
func readPID(f *os.File) int {
	var b [24]byte
	n, _ := f.ReadAt(b[:], 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}

// release removes the lock file and drops the lock, in that order (see acquire; Windows
// does it the other way round, lock_windows.go). It may be called once.
func (l *lockFile) release() { releaseLock(l.f, l.path) }

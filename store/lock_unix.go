//go:build unix

// This file takes a session's lock on Unix: flock(2), which the kernel drops when the last
// descriptor of the open file description closes.

package store

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is what lockNow's error wraps when another open file description holds the lock.
var errLocked = syscall.EWOULDBLOCK

// lockNow takes an exclusive lock on f without waiting (flock LOCK_EX|LOCK_NB), again after
// an interruption by a signal. It fails wrapping errLocked when the lock is held.
func lockNow(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// releaseLock removes the lock file at path, when it is still f, then closes f (dropping the
// lock), in that order: see acquire.
func releaseLock(f *os.File, path string) {
	if samePath(f, path) {
		os.Remove(path)
	}
	f.Close()
}

// This file takes a session's lock on Windows: LockFileEx, exclusive and failing at once,
// on one byte far past the file's end (a locked range cannot be read by others, and the
// holder's pid at the start must stay readable for the refusal). Windows drops the lock
// when the handle closes, also when the process dies.
//
// What differs from Unix: a file another process holds open cannot be removed (Go opens
// files without FILE_SHARE_DELETE), so releaseLock closes first and then removes the lock
// file, which fails, harmlessly, when someone else opened it meanwhile; a lock file can then
// stay behind, holding a dead pid, and the next acquire takes it over.

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// errLocked is what lockNow's error wraps when another handle holds the lock.
var errLocked = windows.ERROR_LOCK_VIOLATION

// lockOffset is the byte locked: far past any pid written at the start.
const lockOffset = 1 << 62

// lockNow takes an exclusive lock on f without waiting. It fails wrapping errLocked when
// the lock is held.
func lockNow(f *os.File) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

// releaseLock closes f (dropping the lock), then removes the lock file at path if it was
// still f: an open file cannot be removed here (see the top of this file).
func releaseLock(f *os.File, path string) {
	same := samePath(f, path)
	f.Close()
	if same {
		os.Remove(path)
	}
}

// This file holds the Windows specifics of os_unix.go. Windows has no O_NOFOLLOW: an open
// with FILE_FLAG_OPEN_REPARSE_POINT gets a link (any reparse point: a symbolic link, a
// junction) itself instead of its target, and the handle's attributes then tell that it is
// one. Links on the path before the last element are followed, as on Unix.

package safefile

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoFollow: see os_unix.go. Here it opens a reparse point itself (CheckNotLink refuses it).
const NoFollow = windows.FILE_FLAG_OPEN_REPARSE_POINT

// CheckNotLink returns an error wrapping syscall.ELOOP when f, opened with NoFollow, is a
// reparse point (a symbolic link, a junction) rather than the file it points to, and closes
// f then; nil when f is what it seems.
func CheckNotLink(f *os.File, path string) error {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		f.Close()
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		f.Close()
		return &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	}
	return nil
}

// OpenNoFollow: see os_unix.go.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|NoFollow, perm)
	if err != nil {
		return nil, err
	}
	if err := CheckNotLink(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// alive reports whether a process with that id exists: one that can be opened and has not
// exited, or one we may not open (it exists).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	if pid <= 0 || uint64(pid) > math.MaxUint32 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER) // no such process
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil {
		return true
	}
	const stillActive = 259 // STILL_ACTIVE
	return code == stillActive
}

//go:build unix

// This file holds the Unix specifics: opening without following a link (O_NOFOLLOW), and
// whether a process exists (kill(pid, 0)).

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// NoFollow, or'ed into the flags of os.OpenFile or os.Root.OpenFile, makes the open refuse
// a symbolic link at the path's last element (with ELOOP) instead of following it. On
// Windows the open gets the link itself instead, which CheckNotLink then refuses: call it
// after every open with NoFollow.
const NoFollow = syscall.O_NOFOLLOW

// CheckNotLink returns an error wrapping syscall.ELOOP when f, opened with NoFollow, is a
// link itself. On Unix the open already refused one, so it does nothing and returns nil.
func CheckNotLink(*os.File, string) error { return nil }

// OpenNoFollow is os.OpenFile(path, flag|NoFollow, perm) and CheckNotLink: it fails with an
// error wrapping syscall.ELOOP when path's last element is a symbolic link.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|NoFollow, perm)
}

// alive reports whether a process with that id exists (one we may not signal counts).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

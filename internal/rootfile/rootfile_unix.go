//go:build unix

// This file holds the Unix specifics of opening files: without blocking on a FIFO or taking
// a terminal, back to blocking reads once the file is known to be regular, and a second
// descriptor on an open folder.

package rootfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReadFlags opens a file for reading without blocking (a FIFO with no writer would block a
// plain open) and without making a terminal pid's controlling terminal.
const ReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// SetBlocking puts the regular file f back into blocking mode, so a read is never cut
// short by O_NONBLOCK on a file system that honours it for regular files.
func SetBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	if err := rc.Control(func(fd uintptr) { setErr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return setErr
}

// Dup returns a new *os.File, named name, on a duplicate (close-on-exec) of f's
// descriptor. Reading a folder through it lists entries with the types the folder records
// (no stat per entry, unlike a folder opened through an os.Root), and its DirEntry.Info
// would stat by path, so the caller must not call Info.
func Dup(f *os.File, name string) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd, dupErr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { nfd, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return os.NewFile(uintptr(nfd), name), nil
}

//go:build unix

// This file holds the Unix specifics of the file tools' own file handling: opening without
// blocking on a FIFO or taking a terminal, going back to blocking reads once the file is
// known to be regular, a second descriptor on an open folder, whether a process still
// exists, and which link errors mean the file system has no hard links.

package tools

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openReadFlags opens a file for reading without blocking (a FIFO with no writer would
// block a plain open) and without making a terminal pid's controlling terminal.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// setBlocking puts the regular file f back into blocking mode, so a read is never cut
// short by O_NONBLOCK on a file system that honours it for regular files.
func setBlocking(f *os.File) error {
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

// dupFile returns a new *os.File, named name, on a duplicate (close-on-exec) of f's
// descriptor. Reading a folder through it lists entries with the types the folder records
// (no stat per entry, unlike a folder opened through an os.Root), and its DirEntry.Info
// would stat by path, so the caller must not call Info.
func dupFile(f *os.File, name string) (*os.File, error) {
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

// processGone reports whether no process with this pid exists (kill(pid, 0) fails with
// ESRCH). A process of another user counts as existing.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// noHardLinks reports whether err, from link(2), means the file system cannot make hard
// links here (FAT, some network and FUSE file systems), rather than that the name is taken.
func noHardLinks(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EMLINK, syscall.EXDEV} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// signalNamed returns the signal named name ("SIGTERM"), 0 when unknown.
func signalNamed(name string) syscall.Signal { return unix.SignalNum(name) }

//go:build unix

// This file holds the Unix specifics of the file tools' own file handling (opening files is
// internal/rootfile's): whether a process still exists, which link errors mean the file
// system has no hard links, and signals by name.

package tools

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

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

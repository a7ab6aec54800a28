// This file gives the Guard a file's identity and change times on Linux.

package sandbox

import (
	"io/fs"
	"os"
	"syscall"
)

// fileKey is what changes when a file is replaced or changed: its identity, its change
// and modification times.
type fileKey struct {
	dev, ino     uint64
	ctime, mtime int64
}

// keyOf returns fi's key (fi from os.Lstat).
func keyOf(fi fs.FileInfo) fileKey {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}
	}
	return fileKey{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano()}
}

// processAlive reports whether a process pid exists (EPERM: it exists, another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// ownedByMe reports whether fi (from os.Lstat) is this user's.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

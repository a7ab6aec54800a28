// This file gives the Guard a file's identity and change times on Linux.

package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
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

// openParent opens the folder holding p, beneath root, one component at a time from root
// without following a link: a command running beside the check cannot send a removal
// elsewhere by swapping a folder on the way for a link.
func openParent(root, p string) (*os.Root, error) {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("%s is not beneath %s", p, root)
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	if rel != "." {
		for _, c := range strings.Split(rel, "/") {
			next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			unix.Close(fd)
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
			}
			fd = next
		}
	}
	defer unix.Close(fd)
	return os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
}

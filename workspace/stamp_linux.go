// This file reads a file's stamp (identity, size and times) on Linux, for the fingerprints
// of files read only in part.

//go:build linux

package workspace

import (
	"io/fs"
	"syscall"
)

// Stamp is what fstat says of a file that changes whenever its content does: which file
// it is (device and inode), its size, and its mtime and ctime in nanoseconds.
type Stamp struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

// StampOf returns the stamp of the file fi describes, and false when fi does not come from
// a stat call (then no stamp stands for the file's content).
func StampOf(fi fs.FileInfo) (Stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{}, false
	}
	return Stamp{
		Dev:   uint64(st.Dev),
		Ino:   uint64(st.Ino),
		Size:  st.Size,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
	}, true
}

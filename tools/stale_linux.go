// This file reads a file's stamp (identity, size and times) on Linux, for the fingerprints
// of files read only in part.

//go:build linux

package tools

import (
	"io/fs"
	"syscall"
)

// fileStamp is what fstat says of a file that changes whenever its content does: which
// file it is (device and inode), its size, and its mtime and ctime in nanoseconds.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// stampOf returns the stamp of the file fi describes, and false when fi does not come from
// a stat call (then no stamp stands for the file's content).
func stampOf(fi fs.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{
		dev:   uint64(st.Dev),
		ino:   uint64(st.Ino),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
	}, true
}

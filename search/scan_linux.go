// This file stats the files a Scan finds on Linux: one fstatat relative to the descriptor
// of the folder the walk has open, without an allocation or a path looked up from the top.

package search

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

func (f ScanFile) lstat() (ScanStat, error) {
	if !f.fdOK {
		return lstatIn(f.Dir, f.Name)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(f.dirfd, f.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ScanStat{}, &fs.PathError{Op: "fstatat", Path: f.Name, Err: err}
		}
		break
	}
	return statOf(&st), nil
}

// lstatIn is f.Dir.Lstat as a ScanStat.
func lstatIn(dir *os.Root, name string) (ScanStat, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return ScanStat{}, err
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		return statOf(st), nil
	}
	return ScanStat{Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}, nil
}

// statOf converts st as os does (fillFileStatFromSys).
func statOf(st *unix.Stat_t) ScanStat {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return ScanStat{Mode: m, Size: int64(st.Size), MTime: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec), CTime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
		Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// This file lists a folder on Linux straight from getdents64, for the walks of grep and
// find (and ls): one system call per 32 KB of entries, with the types the folder records,
// no stat per entry and no second descriptor (the portable way, readFolderDup, is the
// fallback).

package search

import (
	"io/fs"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntBufs holds the getdents buffers of finished listings, for reuse.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readFolder returns the entries of the open folder f (opened through dir), unsorted. An
// entry whose type the file system does not record is looked up with an lstat through dir.
func readFolder(f *os.File, dir *os.Root) ([]Entry, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []Entry
	for {
		var n int
		var gerr error
		if err := rc.Control(func(fd uintptr) {
			for {
				n, gerr = unix.Getdents(int(fd), buf)
				if gerr != unix.EINTR {
					return
				}
			}
		}); err != nil {
			return nil, err
		}
		if gerr != nil {
			if out == nil && (gerr == unix.EINVAL || gerr == unix.ENOSYS) {
				return readFolderDup(f) // a file system getdents64 cannot list
			}
			return nil, &os.PathError{Op: "getdents", Path: f.Name(), Err: gerr}
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off+19 <= n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen == 0 || off+reclen > n {
				break
			}
			ino := *(*uint64)(unsafe.Pointer(&buf[off]))
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			off += reclen
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := Entry{Name: string(name)}
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				e.Type = fs.ModeDir
			case unix.DT_LNK:
				e.Type = fs.ModeSymlink
			case unix.DT_FIFO:
				e.Type = fs.ModeNamedPipe
			case unix.DT_SOCK:
				e.Type = fs.ModeSocket
			case unix.DT_CHR:
				e.Type = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				e.Type = fs.ModeDevice
			default:
				fi, err := dir.Lstat(e.Name)
				if err != nil {
					continue // gone since the listing
				}
				e.Type = fi.Mode().Type()
			}
			out = append(out, e)
		}
	}
}

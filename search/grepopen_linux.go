// This file opens the files grep searches on Linux with bare system calls: openat relative
// to the folder's open descriptor (one name, no "/", O_NOFOLLOW: it cannot leave the
// folder), fstat, read, close; none of the poller registration and blocking-mode switches
// an *os.File costs, which dominate on trees of small files.

package search

import (
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/pid-agent/pid/internal/rootfile"
)

// grepOpen opens the entry name of the folder dir (dirf is its open "."; nil to go through
// dir) for reading without blocking, and returns a reader on it with its size and a close
// function, or a *rootfile.NotRegularError (naming real) when it is not a regular file.
func grepOpen(dir *os.Root, dirf *os.File, name, real string) (io.Reader, int64, func(), error) {
	if dirf == nil {
		f, fi, err := rootfile.OpenRegular(dir, name, real)
		if err != nil {
			return nil, 0, nil, err
		}
		return f, fi.Size(), func() { f.Close() }, nil
	}
	rc, err := dirf.SyscallConn()
	if err != nil {
		return nil, 0, nil, err
	}
	fd, oerr := -1, error(nil)
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, 0, nil, err
	}
	if oerr != nil {
		return nil, 0, nil, &os.PathError{Op: "open", Path: real, Err: oerr}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, nil, &os.PathError{Op: "fstat", Path: real, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, 0, nil, &rootfile.NotRegularError{Path: real, Mode: statMode(st.Mode)}
	}
	r := &fdReader{fd: fd, path: real}
	return r, st.Size, func() { unix.Close(fd) }, nil
}

// statMode returns the fs.FileMode type bits of a stat mode that is not a regular file's.
func statMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// fdReader reads a regular file's descriptor. The file was opened without blocking: on a
// file system that honours that for regular files, the first EAGAIN puts it back into
// blocking mode.
type fdReader struct {
	fd       int
	path     string
	blocking bool
}

func (r *fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(r.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && !r.blocking:
			r.blocking = true
			if err := unix.SetNonblock(r.fd, false); err != nil {
				return 0, &os.PathError{Op: "fcntl", Path: r.path, Err: err}
			}
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: r.path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Package rootfile opens files through an os.Root the way pid's file tools and its search
// engine do: without blocking (a FIFO does not hang the open), regular files only, and the
// small files pid reads for itself under a size cap. Its entry points are OpenRegular and
// ReadSmall; NotRegularError and TooBigError say why a file was refused.
package rootfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError says that a path is not a regular file, and what it is instead.
type NotRegularError struct {
	Path string // as the model gave it, or as shown
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file but %s; pid only opens regular files", e.Path, KindOf(e.Mode))
}

// KindOf names what a file of this mode is, for messages: "a folder", "a named pipe (FIFO)".
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// OpenRegular opens name in r for reading without blocking (a FIFO does not block the
// open), and returns it with its FileInfo when what was opened is a regular file. Anything
// else is closed again and refused with a *NotRegularError naming shown. The caller closes
// the file.
func OpenRegular(r *os.Root, name, shown string) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(name, ReadFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: shown, Mode: fi.Mode()}
	}
	if err == nil {
		err = SetBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// TooBigError says a file pid reads for itself is over its size cap.
type TooBigError struct{ Size, Max int64 }

func (e *TooBigError) Error() string {
	if e.Size > e.Max+1 {
		return fmt.Sprintf("it is larger than %s (%s)", Size(e.Max), Size(e.Size))
	}
	return fmt.Sprintf("it is larger than %s", Size(e.Max)) // it grew while being read
}

// ReadSmall returns the content of the regular file name in r (shown as shown), refusing
// anything else (*NotRegularError) and files larger than max bytes (*TooBigError, also
// when one grows past max while being read).
func ReadSmall(r *os.Root, name, shown string, max int64) ([]byte, error) {
	f, fi, err := OpenRegular(r, name, shown)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &TooBigError{Size: fi.Size(), Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooBigError{Size: int64(len(data)), Max: max}
	}
	return data, nil
}

// Size formats a byte count for people and models: 812 B, 4.1 KB, 2.3 MB.
func Size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

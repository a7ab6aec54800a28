//go:build !linux

// This file opens the files grep searches where bare system calls are not used: through
// the folder's os.Root, as the other file tools open files.

package search

import (
	"io"
	"os"

	"github.com/pid-agent/pid/internal/rootfile"
)

// grepOpen opens the entry name of the folder dir for reading without blocking, and
// returns a reader on it with its size and a close function, or a *rootfile.NotRegularError
// (naming real) when it is not a regular file. dirf is not used here.
func grepOpen(dir *os.Root, _ *os.File, name, real string) (io.Reader, int64, func(), error) {
	f, fi, err := rootfile.OpenRegular(dir, name, real)
	if err != nil {
		return nil, 0, nil, err
	}
	return f, fi.Size(), func() { f.Close() }, nil
}

//go:build !unix

// This file is the fallback of rootfile_unix.go where there are no FIFOs, no O_NONBLOCK
// and no descriptors to duplicate: files open plainly.

package rootfile

import (
	"errors"
	"os"
)

// ReadFlags opens a file for reading.
const ReadFlags = os.O_RDONLY

// SetBlocking does nothing here.
func SetBlocking(*os.File) error { return nil }

// Dup is not supported here: callers fall back to reading through f.
func Dup(*os.File, string) (*os.File, error) { return nil, errors.ErrUnsupported }

//go:build unix

// This file reads a file's owner on Unix, for the trust file's checks.

package trust

import (
	"io/fs"
	"syscall"
)

// ownerOf returns the uid owning the file fi describes, -1 when unknown.
func ownerOf(fi fs.FileInfo) int {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}

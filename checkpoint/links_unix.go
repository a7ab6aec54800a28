//go:build unix

// This file tells, on Unix, whether a file has other names (hard links), which a rewind
// must not change through this one.

package checkpoint

import (
	"io/fs"
	"syscall"
)

// hardLinked reports whether the file fi describes has more than one name.
func hardLinked(fi fs.FileInfo) bool {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	return ok && sys.Nlink > 1
}

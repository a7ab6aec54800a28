// This file stands in for the file stamp where pid does not read ctime: there every read
// hashes the whole file, as the stale-edit guard needs.

//go:build !linux

package workspace

import "io/fs"

// Stamp is empty where ctime is not read.
type Stamp struct {
	Mtime, Ctime int64
}

// StampOf returns false: without ctime no stamp stands for a file's content, so reads hash
// whole files.
func StampOf(fs.FileInfo) (Stamp, bool) { return Stamp{}, false }

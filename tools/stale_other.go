// This file stands in for the file stamp where pid does not read ctime: there every read
// hashes the whole file, as the stale-edit guard needs.

//go:build !linux

package tools

import "io/fs"

// fileStamp is empty where ctime is not read.
type fileStamp struct {
	mtime, ctime int64
}

// stampOf returns false: without ctime no stamp stands for a file's content, so reads hash
// whole files.
func stampOf(fs.FileInfo) (fileStamp, bool) { return fileStamp{}, false }

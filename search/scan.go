// This file walks every folder of a Fence as grep does (Scan), for the checkpoints'
// snapshots, with a stat of each file that costs no lookup from the top (ScanFile.Lstat).

package search

import (
	"context"
	"io/fs"
	"os"
)

// ScanFile is one file Scan found: anything but a folder (a regular file, a symbolic link, a
// socket...). Dir and Name are for reaching it without a lookup from the top: Dir is the
// os.Root of the folder holding it, valid only during the call to work.
type ScanFile struct {
	Path string // real absolute path
	Dir  *os.Root
	Name string
	Type fs.FileMode // type bits as the folder records them (0 for a regular file)

	dirfd int // Dir's folder open, when fdOK (see Lstat)
	fdOK  bool
}

// ScanStat is what an lstat of a file Scan found says.
type ScanStat struct {
	Mode     fs.FileMode // as os.Lstat's Mode
	Size     int64
	MTime    int64 // modification time, nanoseconds since the epoch
	CTime    int64 // status change time, nanoseconds since the epoch (0 where unknown)
	Dev, Ino uint64
}

// Lstat returns the file's lstat. On Linux it is one fstatat relative to the folder's
// descriptor the walk holds open, with no allocation; elsewhere it is f.Dir.Lstat.
// Contract: called from work only, as f.Dir.
func (f ScanFile) Lstat() (ScanStat, error) { return f.lstat() }

// Scan walks every folder of fence as grep does: .git folders and what the ignore files
// exclude are skipped, symbolic links are not followed, folders that cannot be read are
// skipped. work runs for each file found, from the walk's goroutines, concurrently (the
// files of one folder one after another, in the goroutine that listed it); visit gets each
// file's path and work's result on the caller's goroutine, one at a time, in walk order. A
// file under two nested folders is visited once per folder; callers key by path. It stops
// with ctx's error when ctx ends, or with visit's error.
//
// Contract: work must not keep f.Dir after it returns and must return promptly once ctx
// ends; visit must not start another walk of fence. Every goroutine Scan starts has ended
// when it returns.
func Scan[R any](ctx context.Context, fence Fence, work func(f ScanFile) R, visit func(path string, res R) error) error {
	for _, folder := range fence.Folders() {
		spec := Spec[R]{
			Want:   func(n *Node) bool { return !n.isDir },
			Inline: true, // work is a stat, mostly: a task per file would cost more
			Work: func(d Dir, n *Node) R {
				return work(ScanFile{Path: n.Path(), Dir: d.Root, Name: n.e.Name, Type: n.e.Type, dirfd: d.fd, fdOK: d.fdOK})
			},
			Visit: func(n *Node, res R) error {
				if n.isDir {
					return nil
				}
				return visit(n.Path(), res)
			},
		}
		if _, err := Walk(ctx, fence, folder, spec); err != nil {
			return err
		}
	}
	return nil
}

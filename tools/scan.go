// This file lets another package walk the workspace as grep does (Scan), for the checkpoints'
// snapshots, and reach a file through the os.Root of the workspace folder holding it (At).

package tools

import (
	"context"
	"io/fs"
	"os"
	"strings"
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

// Scan walks every workspace folder as grep does: .git folders and what the ignore files
// exclude are skipped, symbolic links are not followed, folders that cannot be read are
// skipped. work runs for each file found, from the walk's goroutines, concurrently (the
// files of one folder one after another, in the goroutine that listed it); visit
// gets each file's path and work's result on the caller's goroutine, one at a time, in walk
// order. A file under two nested workspace folders is visited once per folder; callers key
// by path. It stops with ctx's error when ctx ends, or with visit's error.
//
// Contract: work must not keep f.Dir after it returns and must return promptly once ctx
// ends; visit must not call back into the workspace's walk. Every goroutine Scan starts has
// ended when it returns.
func (w *Workspace) Scan(ctx context.Context, work func(f ScanFile) any, visit func(path string, res any) error) error {
	for i := range w.roots {
		spec := walkSpec{
			want:   func(n *walkNode) bool { return !n.isDir },
			inline: true, // work is a stat, mostly: a task per file would cost more
			work: func(dir *os.Root, n *walkNode) any {
				p := n.parent
				return work(ScanFile{Path: n.path(), Dir: dir, Name: n.e.name, Type: n.e.typ, dirfd: p.fd, fdOK: p.fdOK})
			},
			visit: func(n *walkNode, res any) error {
				if n.isDir {
					return nil
				}
				return visit(n.path(), res)
			},
		}
		if _, err := w.walk(ctx, w.roots[i].real, spec); err != nil {
			return err
		}
	}
	return nil
}

// At returns the os.Root of the workspace folder holding the real absolute path p and p
// relative to it ("." for the folder itself), or an error wrapping ErrOutsideWorkspace when
// no folder holds it. Contract: the root belongs to the workspace: callers use it while the
// workspace is open and never close it.
func (w *Workspace) At(p string) (*os.Root, string, error) { return w.at(p) }

// Folders returns the real paths of the workspace folders.
func (w *Workspace) Folders() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.real
	}
	return out
}

// FileDiff returns the unified diff from old to new of the file shown as name (three lines
// of context, at most MaxDiffBytes, cut at a line's end), "" when they are the same. created
// marks a file that did not exist (its old side is /dev/null), deleted one that no longer
// does (its new side is /dev/null).
func FileDiff(name, old, new string, created, deleted bool) string {
	fd := unifiedDiff(name, old, new, created)
	if deleted {
		fd.setText(strings.Replace(fd.text, "+++ b/"+name+"\n", "+++ /dev/null\n", 1))
	}
	return fd.text
}

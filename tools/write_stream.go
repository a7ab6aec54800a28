// This file replaces a file atomically with content streamed in pieces, so that an edit of
// a large file never holds the new content whole (fsroot.go's replaceFile takes it whole).

package tools

import (
	"crypto/sha256"
	"errors"
	"github.com/pid-agent/pid/workspace"
	"io/fs"
	"os"
)

// replaceFileStream replaces the content of the existing file name (relative to r)
// atomically, as replaceFile does: a temporary file next to it, with permission bits mode,
// receives the content, is synced and is renamed over the file, so a reader sees the old
// content or the new, never a mix. The content is what pieces passes to yield, in order;
// each piece goes to the file without being copied, and is hashed on the way. It returns
// the sha256 of the content written. On failure (of a write, or of pieces itself) the file
// is untouched and the temporary file removed. dirReal is the real path of name's folder,
// for sweepTemps.
func (w *Workspace) replaceFileStream(r *os.Root, name, dirReal string, mode fs.FileMode, pieces func(yield func(string) error) error) (workspace.Digest, error) {
	dir, base, err := parentOf(r, name, false)
	if err != nil {
		return workspace.Digest{}, err
	}
	defer dir.Close()
	w.sweepTemps(dir, dirReal)
	var f *os.File
	var tmp string
	for range 10 {
		tmp = tempName(base)
		f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return workspace.Digest{}, err
	}
	h := sha256.New()
	err = pieces(func(s string) error {
		if _, err := f.WriteString(s); err != nil {
			return err
		}
		workspace.HashString(h, s)
		return nil
	})
	sum := workspace.Digest(h.Sum(nil))
	if err == nil {
		err = finishTemp(f, mode)
	} else {
		f.Close()
	}
	if err == nil {
		err = dir.Rename(tmp, base)
	}
	if err != nil {
		_ = dir.Remove(tmp)
		return workspace.Digest{}, err
	}
	return sum, nil
}

// finishTemp gives the written temporary file f exactly the permission bits mode, syncs it
// to disk and closes it; f is closed whatever fails.
func finishTemp(f *os.File, mode fs.FileMode) error {
	err := f.Chmod(mode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

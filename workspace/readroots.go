// This file holds the workspace's read-only folders: folders outside the workspace folders
// that read may read, never write (a skill's folder, once the model loaded the skill). Only
// read consults them; write, edit, grep, find, ls and bash's sandbox never do.

package workspace

import (
	"errors"
	"path/filepath"
)

// AllowRead lets read read the files of the folder dir (an absolute path; its links are
// resolved now), and nothing else outside the workspace folders: the file is opened through
// an os.Root held on dir, so a link leading out of it is not followed. A folder inside the
// workspace folders needs nothing. The folder stays readable until the workspace closes.
//
// Contract: safe for concurrent use; it opens one descriptor per new folder (closed by
// Close). It fails for a path that is not an absolute path of an existing folder.
func (w *Workspace) AllowRead(dir string) error {
	if !filepath.IsAbs(dir) {
		return errors.New("a read-only folder must be an absolute path")
	}
	shown := filepath.Clean(dir)
	real, fi, err := realDir(shown)
	if err != nil {
		return err
	}
	if w.insideReal(real) {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		return ErrClosed
	}
	for _, r := range w.readOnly {
		if r.real == real {
			return nil
		}
	}
	d, err := openRoot(real, fi)
	if err != nil {
		return err
	}
	w.readOnly = append(w.readOnly, root{shown: shown, real: real, dir: d})
	return nil
}

// ResolveRead is Resolve for read: a path outside the workspace folders that leads into a
// read-only folder (AllowRead) is its real path too.
func (w *Workspace) ResolveRead(path string) (string, error) {
	real, err := w.Resolve(path)
	if err == nil || !errors.Is(err, ErrOutside) {
		return real, err
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.cwd, abs)
	}
	r, rerr := realPath(filepath.Clean(abs))
	if rerr != nil {
		return "", err
	}
	if w.readOnlyRoot(r) != nil {
		return r, nil
	}
	return "", err
}

// readOnlyRoot returns the read-only folder holding the real path p (the deepest), or nil.
func (w *Workspace) readOnlyRoot(p string) *root {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best *root
	for i := range w.readOnly {
		r := &w.readOnly[i]
		if within(p, r.real) && (best == nil || len(r.real) > len(best.real)) {
			best = r
		}
	}
	return best
}

// closeReadOnly closes the read-only folders' descriptors.
func (w *Workspace) closeReadOnly() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.readOnly {
		r.dir.Close()
	}
	w.readOnly = nil
}

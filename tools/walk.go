// This file walks a folder tree for grep and find: in name order, skipping .git and what
// .gitignore files exclude, never following symbolic links, through a directory handle
// (an os.Root) per folder so that the walk cannot leave the workspace folder; and it loads
// those .gitignore files, leaving out (and reporting) any that is not a small regular file.

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxIgnoreFileBytes is the largest .gitignore pid reads; a larger one is left out.
const MaxIgnoreFileBytes = 1 << 20

// ignoreName is the one ignore file pid reads.
const ignoreName = ".gitignore"

// unknownType stands for a file type not known yet.
const unknownType = ^fs.FileMode(0)

// SkippedFile is a file a tool left out, and why: a .gitignore that is not a regular
// file, leads outside the workspace or is too big.
type SkippedFile struct {
	Path   string `json:"path"` // as shown in results: relative to the cwd when inside it
	Reason string `json:"reason"`
}

// maxSkippedListed is how many left-out files a result names in its text.
const maxSkippedListed = 10

// skippedNote returns the lines that tell the model and the user which .gitignore files
// were left out, or "" when none was.
func skippedNote(skipped []SkippedFile) string {
	var sb strings.Builder
	for i, s := range skipped {
		if i == maxSkippedListed {
			fmt.Fprintf(&sb, "[And %d more .gitignore files left out.]\n", len(skipped)-i)
			break
		}
		fmt.Fprintf(&sb, "[%s was not applied: %s.]\n", s.Path, s.Reason)
	}
	return sb.String()
}

// visitFunc is called for every entry a walk visits, with dir, an os.Root on the folder
// holding the entry (valid during the call only: open the entry as e.name in it), the
// entry's real path, and its path relative to the walk's root (slash-separated). Returning
// fs.SkipDir for a folder skips its content; fs.SkipAll ends the walk without error;
// another error ends it with that error.
type visitFunc func(dir *os.Root, real, rel string, e entry) error

// entry is one entry of a folder: its name, and its type bits (0 for a regular file,
// fs.ModeDir, fs.ModeSymlink...) as the folder records them, or from an lstat relative to
// the folder when the file system does not record them.
type entry struct {
	name string
	typ  fs.FileMode
}

// listFolder returns the entries of the folder dir is open on (real is its real path),
// sorted by name. It lists through a second descriptor on the folder opened through dir,
// so no entry costs a stat; nothing here looks a path up from the top.
func listFolder(dir *os.Root, real string) ([]entry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := f
	if g, err := dupFile(f, real); err == nil {
		defer g.Close()
		rd = g
	}
	des, err := rd.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]entry, len(des))
	for i, d := range des {
		out[i] = entry{name: d.Name(), typ: d.Type()} // never d.Info(): it would stat by path
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// walker is one walk's state.
type walker struct {
	ws      *Workspace
	ctx     context.Context
	visit   visitFunc
	skipped []SkippedFile
}

// walk visits everything under the folder start (a real path), depth first in name order.
// It skips .git, entries ignored by the .gitignore files of start, of its subfolders and of
// its parents up to the repository (the nearest folder holding .git) or the workspace
// folder, whichever is nearer. Symbolic links are visited but not followed; folders that
// cannot be read are skipped. Each folder is opened from its parent's handle by name, and
// its files are opened from its own handle, so no path is resolved again from the top and
// a link swapped in cannot lead the walk outside. It returns the .gitignore files it left
// out, and stops with ctx's error when ctx is done.
func (ws *Workspace) walk(ctx context.Context, start string, visit visitFunc) ([]SkippedFile, error) {
	r, rel, err := ws.at(start)
	if err != nil {
		return nil, err
	}
	dir, err := r.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	w := &walker{ws: ws, ctx: ctx, visit: visit}
	stack := w.parentIgnores(start)
	err = w.walkDir(dir, start, "", stack)
	if errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return w.skipped, err
}

func (w *walker) walkDir(dir *os.Root, real, rel string, stack ignoreStack) error {
	entries, err := listFolder(dir, real)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if e.name == ignoreName {
			if ig := w.loadIgnore(dir, real, e.typ); ig != nil {
				stack = stack.with(ig)
			}
			break
		}
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := e.name
		if name == ".git" {
			continue
		}
		p := real + "/" + name
		if real == "/" {
			p = "/" + name
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		isDir := e.typ.IsDir() // false for a symbolic link, whatever it points to
		if stack.ignored(p, isDir) {
			continue
		}
		switch err := w.visit(dir, p, r, e); {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		}
		if isDir {
			// OpenRoot refuses a link swapped in for the folder if it leads out of dir.
			sub, err := dir.OpenRoot(name)
			if err != nil {
				continue
			}
			err = w.walkDir(sub, p, r, stack)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// parentIgnores loads the .gitignore files of start's parents that apply to it: up to the
// repository's top (a folder holding .git) but not above the workspace folder holding
// start. It looks through the workspace folder's root.
func (w *walker) parentIgnores(start string) ignoreStack {
	if w.exists(filepath.Join(start, ".git")) {
		return nil
	}
	top := w.ws.rootOf(start)
	var dirs []string
	for d := filepath.Dir(start); top != "" && within(d, top) && d != start; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || w.exists(filepath.Join(d, ".git")) {
			break
		}
	}
	slices.Reverse(dirs)
	var stack ignoreStack
	for _, d := range dirs {
		if ig := w.loadIgnore(nil, d, unknownType); ig != nil {
			stack = stack.with(ig)
		}
	}
	return stack
}

// exists reports whether something is at the real path p (a link counts, whatever it
// points to), looking through the workspace folder's root.
func (w *walker) exists(p string) bool {
	r, rel, err := w.ws.at(p)
	if err != nil {
		return false
	}
	_, err = r.Lstat(rel)
	return err == nil
}

// loadIgnore reads and parses the .gitignore of the folder at the real path dirReal, or
// returns nil when there is none or it is left out (then recorded in w.skipped). dir is an
// os.Root on that folder, or nil to go through the workspace folder's root; typ is the
// file's type from the folder listing, or unknownType.
//
// The file must be a regular file of at most MaxIgnoreFileBytes. A symbolic link is
// followed when Resolve finds that it leads to a place inside the workspace folders; the
// target is then read through the root of the folder holding it.
func (w *walker) loadIgnore(dir *os.Root, dirReal string, typ fs.FileMode) *ignoreFile {
	p := filepath.Join(dirReal, ignoreName)
	shown := w.ws.display(p)
	r, rel := dir, ignoreName
	if r == nil {
		var err error
		if r, rel, err = w.ws.at(p); err != nil {
			return nil
		}
	}
	if typ == unknownType {
		fi, err := r.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			w.skip(shown, fmt.Sprintf("it could not be looked at (%v)", err))
			return nil
		}
		typ = fi.Mode().Type()
	}
	if typ&fs.ModeSymlink != 0 {
		target, _ := r.Readlink(rel)
		real, err := w.ws.Resolve(p)
		switch {
		case errors.Is(err, ErrOutsideWorkspace):
			w.skip(shown, fmt.Sprintf("it is a symbolic link to %s, outside the workspace folders", target))
			return nil
		case err != nil:
			w.skip(shown, fmt.Sprintf("it is a symbolic link that cannot be followed (%v)", err))
			return nil
		}
		if r, rel, err = w.ws.at(real); err != nil {
			return nil
		}
		if fi, err := r.Stat(rel); errors.Is(err, fs.ErrNotExist) {
			w.skip(shown, fmt.Sprintf("it is a symbolic link to %s, which does not exist", target))
			return nil
		} else if err != nil {
			w.skip(shown, fmt.Sprintf("it is a symbolic link to %s, which cannot be read (%v)", target, err))
			return nil
		} else if !fi.Mode().IsRegular() {
			w.skip(shown, fmt.Sprintf("it is a symbolic link to %s, which is %s, not a regular file", target, kindOf(fi.Mode())))
			return nil
		}
	} else if !typ.IsRegular() {
		w.skip(shown, fmt.Sprintf("it is %s, not a regular file", kindOf(typ)))
		return nil
	}
	data, err := readSmall(r, rel, shown, MaxIgnoreFileBytes)
	var nr *notRegularError
	var big *tooBigError
	switch {
	case errors.As(err, &nr):
		w.skip(shown, fmt.Sprintf("it is %s, not a regular file", kindOf(nr.mode)))
		return nil
	case errors.As(err, &big):
		w.skip(shown, big.Error())
		return nil
	case err != nil:
		w.skip(shown, fmt.Sprintf("it could not be read (%v)", err))
		return nil
	}
	return parseIgnore(dirReal, data)
}

// skip records a .gitignore left out.
func (w *walker) skip(shown, reason string) {
	w.skipped = append(w.skipped, SkippedFile{Path: shown, Reason: reason})
}

// folder resolves path ("" meaning the cwd) to an existing folder of the workspace, or fails
// saying why; hint is added to the "not a folder" message.
func (ws *Workspace) folder(path, hint string) (string, error) {
	if path == "" {
		path = "."
	}
	real, err := ws.Resolve(path)
	if err != nil {
		return "", err
	}
	r, rel, err := ws.at(real)
	if err != nil {
		return "", err
	}
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("path not found: %s", path)
	case err != nil:
		return "", ws.explain(path, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a folder%s", path, hint)
	}
	return real, nil
}

// Package workspace holds a session's Workspace: its cwd and its workspace folders,
// each with an os.Root held open on it, the path resolution that checks every file tool's
// path and words its refusals (Resolve), the reach of a checked path through the os.Root of
// the folder holding it (At), and the read-only folders read may read besides; and the
// stale-edit guard (StaleGuard), which refuses an edit or write of a file that changed
// since the agent read it. Its entry point is New, then NewStaleGuard on the Workspace it
// returns. A Workspace is the search.Fence of the session's searches and checkpoints;
// package tools' Workspace is built on one, with what the file tools keep beside it. How
// bash's commands are started in the kernel sandbox is the subpackage workspace/launch.
//
// This file holds the Workspace and its path confinement.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pid-agent/pid/search"
)

// ErrOutside is wrapped by the error Resolve returns for a path that leads outside the
// workspace folders, so callers can tell it apart with errors.Is. It is the search engine's
// search.ErrOutside, so that a Fence's refusals read the same.
var ErrOutside = search.ErrOutside

// Workspace is where one session's file tools may act: a cwd that relative paths start
// from, and the workspace folders (roots) that every path must stay inside once symbolic
// links are followed. Resolve checks a path and says why it refuses one; every open,
// create, rename, stat and listing then goes through an os.Root held open on the workspace
// folder (At), so a link swapped in after the check cannot lead outside.
//
// A Workspace is safe for concurrent use. Close it when the session ends.
type Workspace struct {
	cwd     string // absolute and clean, as given
	cwdReal string // cwd with symbolic links resolved
	roots   []root
	closed  atomic.Bool // set by Close: the roots are closed

	// mu guards the read-only folders.
	mu sync.Mutex
	// readOnly are the folders outside the workspace folders that read may read
	// (readroots.go).
	readOnly []root
}

// The folders are the fence of the session's searches.
var _ search.Fence = (*Workspace)(nil)

// root is one workspace folder.
type root struct {
	shown string   // absolute and clean, as given: used in messages
	real  string   // with symbolic links resolved: used for the confinement check
	dir   *os.Root // open on real: every file access goes through it
}

// New returns the workspace of a session whose cwd is cwd and whose workspace folders are
// roots (absolute paths of existing folders, as the editor named them in initialize). No
// roots means the cwd is the only folder.
//
// Contract: called once per session by whoever builds the session's tools. It fails when cwd
// or a root is not an absolute path of an existing folder, or when cwd is outside every
// root (relative paths would then all be refused). It opens one file descriptor per
// workspace folder (an os.Root) and starts no goroutine. The caller must Close the
// workspace, which closes those descriptors.
func New(cwd string, roots []string) (*Workspace, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("cwd %q is not an absolute path", cwd)
	}
	w := &Workspace{cwd: filepath.Clean(cwd)}
	real, _, err := realDir(w.cwd)
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	w.cwdReal = real
	if len(roots) == 0 {
		roots = []string{cwd}
	}
	ok := false
	defer func() {
		if !ok {
			w.closeRoots()
		}
	}()
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("workspace folder %q is not an absolute path", r)
		}
		shown := filepath.Clean(r)
		real, fi, err := realDir(shown)
		if err != nil {
			return nil, fmt.Errorf("workspace folder: %w", err)
		}
		dir, err := openRoot(real, fi)
		if err != nil {
			return nil, fmt.Errorf("workspace folder %s: %w", shown, err)
		}
		w.roots = append(w.roots, root{shown: shown, real: real, dir: dir})
	}
	if !w.insideReal(w.cwdReal) {
		return nil, fmt.Errorf("cwd %s is outside the workspace folders: %s", w.cwd, w.rootList())
	}
	ok = true
	return w, nil
}

// realDir resolves dir's symbolic links and checks that it is an existing folder, whose
// FileInfo it returns too.
func realDir(dir string) (string, fs.FileInfo, error) {
	real, err := realPath(dir)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, err
	}
	if !fi.IsDir() {
		return "", nil, fmt.Errorf("%s is not a folder", dir)
	}
	return real, fi, nil
}

// openRoot opens an os.Root on the folder real, and checks that it is the folder fi
// describes (not one swapped in since it was resolved).
func openRoot(real string, fi fs.FileInfo) (*os.Root, error) {
	dir, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	if got, err := dir.Stat("."); err != nil || !os.SameFile(got, fi) {
		dir.Close()
		return nil, fmt.Errorf("%s changed while it was being opened; try again", real)
	}
	return dir, nil
}

// closeRoots closes the roots opened so far.
func (w *Workspace) closeRoots() {
	for _, r := range w.roots {
		r.dir.Close()
	}
}

// Cwd returns the session's cwd as given to New (cleaned). Safe for concurrent
// use; it cannot fail.
func (w *Workspace) Cwd() string { return w.cwd }

// Roots returns the workspace folders as given to New (cleaned), in a new slice
// the caller may keep. Safe for concurrent use; it cannot fail.
func (w *Workspace) Roots() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.shown
	}
	return out
}

// CwdReal returns the cwd with its symbolic links resolved (as when New ran). Safe for
// concurrent use; it cannot fail.
func (w *Workspace) CwdReal() string { return w.cwdReal }

// Folders returns the real paths of the workspace folders.
func (w *Workspace) Folders() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.real
	}
	return out
}

// Close closes the workspace folders' descriptors and the read-only folders'. From then on
// At fails with ErrClosed; a call already under way finishes or fails cleanly. Contract:
// called by the session owner when the session ends; safe to call again.
func (w *Workspace) Close() {
	if !w.closed.Swap(true) {
		w.closeRoots()
		w.closeReadOnly()
	}
}

// Closed reports whether Close has run.
func (w *Workspace) Closed() bool { return w.closed.Load() }

// ErrClosed is what At (and so the file tools) return once the workspace is closed.
var ErrClosed = errors.New("the workspace is closed (its session has ended), so the file tools no longer work; start a new session")

// At returns the os.Root of the workspace folder holding the real path p (the deepest one
// when folders nest) and p relative to that folder ("." for the folder itself). p comes
// from Resolve, so it is inside a folder; it fails only once the workspace is closed.
func (w *Workspace) At(p string) (*os.Root, string, error) {
	if w.closed.Load() {
		return nil, "", ErrClosed
	}
	var best *root
	for i := range w.roots {
		r := &w.roots[i]
		if within(p, r.real) && (best == nil || len(r.real) > len(best.real)) {
			best = r
		}
	}
	if best == nil {
		best = w.readOnlyRoot(p) // read's read-only folders (readroots.go): only read resolves into them
	}
	if best == nil {
		return nil, "", &outsideError{msg: fmt.Sprintf("path %s is outside the workspace folders: %s", p, w.rootList())}
	}
	rel := strings.TrimPrefix(p[len(best.real):], "/")
	if rel == "" {
		rel = "."
	}
	return best.dir, rel, nil
}

// Explain returns the error to report for err, which an operation through a root gave for
// path (the argument as the model gave it). When Resolve now refuses path, the file system
// changed under the call, and Resolve's error says why; a root refusing a link that leads
// out (os.Root says "path escapes from parent") is said in words; anything else is err.
func (w *Workspace) Explain(path string, err error) error {
	if err == nil || errors.Is(err, ErrClosed) {
		return err
	}
	if errors.Is(err, os.ErrClosed) && w.closed.Load() {
		return ErrClosed // Close ran while the call was under way
	}
	if _, rerr := w.Resolve(path); rerr != nil {
		return rerr
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("path %s changed while pid was using it: a symbolic link on the way led outside the workspace folders (or was absolute), so it was not followed; try again once it has settled", path)
	}
	return err
}

// Resolve turns a path a tool was given into the absolute path to act on: relative paths
// start at the cwd, and every symbolic link on the way is followed (for a path that does not
// exist yet, those of its longest existing prefix), so the result is the real location.
//
// Contract: safe for concurrent use; it only reads the file system. It fails, with an error
// that says why and names the workspace folders, for an empty path, a path with a NUL byte,
// a path starting with ~ (home folders are not expanded), a symbolic-link loop, and any path
// whose real location is outside every workspace folder (the error then wraps
// ErrOutside). It never creates anything.
//
// Resolve is the check and the source of the error messages, not the guard: it looks the
// path up by name, so the answer can be stale by the time it is used. The file tools use
// its result only through the os.Root of the workspace folder holding it (At), which
// cannot be led outside; to anyone else it is a path to show or to key on, not one that is
// safe to open with the os package.
func (w *Workspace) Resolve(path string) (string, error) {
	switch {
	case path == "":
		return "", errors.New("path is empty")
	case strings.ContainsRune(path, 0):
		return "", fmt.Errorf("path %q contains a NUL byte", path)
	case tildePath(path):
		return "", fmt.Errorf("path %s starts with ~, which is not expanded (there are no home-folder paths here); give a path relative to the cwd %s or an absolute path inside the workspace folders (for a file really named so, write ./%s)", path, w.cwd, path)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.cwd, abs)
	}
	abs = filepath.Clean(abs)
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", path, err)
	}
	if w.insideReal(real) {
		return real, nil
	}
	if w.insideShown(abs) || w.insideReal(abs) {
		return "", &outsideError{msg: fmt.Sprintf("path %s is outside the workspace folders: it leads through a symbolic link to %s (workspace folders: %s)", path, real, w.rootList())}
	}
	return "", &outsideError{msg: fmt.Sprintf("path %s is outside the workspace folders: %s", path, w.rootList())}
}

// Leads returns where a path a tool was given leads once every symbolic link on the way is
// followed as the kernel would follow it, one component at a time, a dangling last link
// included (a write through it creates the link's target): the workspace folder holding
// that place, as given to New, and the place relative to it ("." for the folder
// itself). ok is false for a path Resolve refuses (empty, ~, a loop of links) and for one
// that leads outside every workspace folder.
//
// Contract: safe for concurrent use; it only reads the file system (lstat and readlink),
// and its answer can be stale by the time it is used, as Resolve's. Every decision made on
// a write's path (the modes, the protected paths, the permission rules on paths) uses it,
// so that they decide on the file the write would change.
func (w *Workspace) Leads(path string) (root, rel string, ok bool) {
	real, err := w.Resolve(path)
	if err != nil {
		return "", "", false
	}
	best := -1
	for i, r := range w.roots {
		if within(real, r.real) && (best < 0 || len(r.real) > len(w.roots[best].real)) {
			best = i
		}
	}
	if best < 0 {
		return "", "", false
	}
	r := w.roots[best]
	if real == r.real {
		return r.shown, ".", true
	}
	if r.real == "/" {
		return r.shown, real[1:], true
	}
	return r.shown, real[len(r.real)+1:], true
}

// outsideError is Resolve's error for a path outside the workspace.
type outsideError struct{ msg string }

func (e *outsideError) Error() string { return e.msg }
func (e *outsideError) Unwrap() error { return ErrOutside }

// tildePath reports whether path starts with ~ or ~user, which a shell would expand to a
// home folder.
func tildePath(path string) bool {
	if !strings.HasPrefix(path, "~") {
		return false
	}
	first, _, _ := strings.Cut(path, "/")
	for _, c := range first[1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// insideReal reports whether the real path p is one of the workspace folders or inside one.
func (w *Workspace) insideReal(p string) bool {
	for _, r := range w.roots {
		if within(p, r.real) {
			return true
		}
	}
	return false
}

// insideShown reports whether the lexical path p is inside a workspace folder as given.
func (w *Workspace) insideShown(p string) bool {
	for _, r := range w.roots {
		if within(p, r.shown) {
			return true
		}
	}
	return false
}

// FolderOf returns the real path of the workspace folder holding the real path p, or "".
func (w *Workspace) FolderOf(p string) string {
	best := ""
	for _, r := range w.roots {
		if within(p, r.real) && len(r.real) > len(best) {
			best = r.real
		}
	}
	return best
}

func (w *Workspace) rootList() string { return strings.Join(w.Roots(), ", ") }

// within reports whether p is dir or inside it; both are absolute and clean.
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// Display returns how a real path is shown in results: relative to the cwd when inside it,
// absolute otherwise.
func (w *Workspace) Display(real string) string {
	if real == w.cwdReal {
		return "."
	}
	if within(real, w.cwdReal) {
		return real[len(w.cwdReal)+1:]
	}
	return real
}

// maxLinks bounds the symbolic links followed while resolving one path, as the kernel's
// ELOOP does.
const maxLinks = 40

// realPath resolves every symbolic link of the absolute, clean path abs, one component at a
// time, like filepath.EvalSymlinks, except that it does not fail on components that do not
// exist: from the first missing one on, the rest is taken as written. So a dangling link
// and a file not yet created under a symlinked folder resolve to where the file would be
// created. A loop of links fails.
func realPath(abs string) (string, error) {
	resolved := "/"
	todo := abs
	links := 0
	missing := false
	for todo != "" {
		var c string
		c, todo, _ = strings.Cut(todo, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			// resolved has no links left in it, so going up is lexical.
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		if missing {
			resolved = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missing = true
			resolved = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		todo = target + "/" + todo
	}
	return resolved, nil
}

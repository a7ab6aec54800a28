// This file finds and loads the ignore files a walk applies: each folder's .gitignore and
// .ignore, a repository's .git/info/exclude, and git's global excludes file; those of the
// parents of the folder a search starts in; and which of them are left out, and why.

package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/internal/safefile"
)

// MaxIgnoreFileBytes is the largest ignore file pid reads; a larger one is left out.
const MaxIgnoreFileBytes = 1 << 20

// The ignore files pid reads in each folder.
const (
	gitignoreName = ".gitignore"
	dotIgnoreName = ".ignore"
)

// ignoreSource is the parsed global excludes file, shared by the repositories of a walk.
type ignoreSource struct {
	path string
	pats []ignorePattern
}

// GlobalExcludesPath returns the path of git's global excludes file: core.excludesFile
// from the user's git configuration ($XDG_CONFIG_HOME/git/config, then ~/.gitconfig,
// the later winning as in git), else $XDG_CONFIG_HOME/git/ignore (XDG_CONFIG_HOME
// defaulting to ~/.config). It returns "" when there is no home folder to look in. The
// tests of packages that walk replace it (before any walk), so that the user's own
// excludes cannot change what they see.
var GlobalExcludesPath = func() string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var cfgs []string
	if xdg != "" {
		cfgs = append(cfgs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		cfgs = append(cfgs, filepath.Join(home, ".gitconfig"))
	}
	path := ""
	for _, cfg := range cfgs {
		if p := excludesFileSetting(cfg); p != "" {
			path = p
		}
	}
	if path == "" && xdg != "" {
		path = filepath.Join(xdg, "git", "ignore")
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok && home != "" {
		path = filepath.Join(home, rest)
	}
	return path
}

// excludesFileSetting returns core.excludesFile as set in the git configuration file cfg,
// or "" when it is not set there (or cfg cannot be read). It reads the plain
// "[core] excludesFile = path" form; includes and conditional sections are not followed.
func excludesFileSetting(cfg string) string {
	data, err := safefile.Read(cfg, MaxIgnoreFileBytes)
	if err != nil {
		return ""
	}
	inCore, val := false, ""
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inCore = strings.EqualFold(strings.TrimSpace(strings.Trim(line, "[]")), "core")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if inCore && ok && strings.EqualFold(strings.TrimSpace(k), "excludesfile") {
			val = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return val
}

// loadGlobalExcludes reads git's global excludes file, or returns nil when there is none
// or it cannot be read (it is the user's own configuration: nothing is reported).
func loadGlobalExcludes() *ignoreSource {
	p := GlobalExcludesPath()
	if p == "" {
		return nil
	}
	data, err := safefile.Read(p, MaxIgnoreFileBytes)
	if err != nil {
		return nil
	}
	f := parseIgnoreRank("", data, rankGlobal)
	if len(f.pats) == 0 {
		return nil
	}
	return &ignoreSource{path: p, pats: f.pats}
}

// repoTop returns the stack for the top folder (real path dir) of a git repository: the
// outer repository's git ignore files dropped, the global excludes and the repository's
// .git/info/exclude added. r is an os.Root on dir, or nil to go through the fence.
// It returns the exclude file left out, if any.
func (w *walker) repoTop(stack ignoreStack, r *os.Root, dir string, gitIsDir bool) (ignoreStack, *SkippedFile) {
	stack = stack.enterRepo()
	if w.global != nil {
		stack = stack.with(&ignoreFile{dir: dir, rank: rankGlobal, pats: w.global.pats})
	}
	if !gitIsDir {
		return stack, nil // a submodule's or worktree's .git file: its exclude is elsewhere
	}
	const rel = ".git/info/exclude"
	p := filepath.Join(dir, rel)
	shown := w.fence.Display(p)
	name := rel
	if r == nil {
		var err error
		if r, name, err = w.fence.At(p); err != nil {
			return stack, nil
		}
	}
	data, err := rootfile.ReadSmall(r, name, shown, MaxIgnoreFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return stack, nil
	}
	if err != nil {
		return stack, &SkippedFile{Path: shown, Reason: readFailure(err)}
	}
	return stack.with(parseIgnoreRank(dir, data, rankExclude)), nil
}

// folderIgnores returns the stack that applies to the entries of the folder n, whose
// listing is entries: n's own stack with the folder's ignore files, after a repository's
// top when the folder holds .git. The files left out are recorded in n.skipped.
func (w *walker) folderIgnores(n *Node, entries []Entry) ignoreStack {
	stack := n.stack
	find := func(name string) (Entry, bool) {
		i, ok := slices.BinarySearchFunc(entries, name, func(e Entry, name string) int { return strings.Compare(e.Name, name) })
		if !ok {
			return Entry{}, false
		}
		return entries[i], true
	}
	if e, ok := find(".git"); ok {
		var sk *SkippedFile
		stack, sk = w.repoTop(stack, n.root, n.real, e.Type.IsDir())
		if sk != nil {
			n.skipped = append(n.skipped, *sk)
		}
	}
	for _, k := range []struct {
		name string
		rank ignoreRank
	}{{gitignoreName, rankGitignore}, {dotIgnoreName, rankDotIgnore}} {
		if e, ok := find(k.name); ok {
			ig, sk := w.loadIgnore(n.root, n.real, k.name, e.Type, k.rank)
			if sk != nil {
				n.skipped = append(n.skipped, *sk)
			}
			if ig != nil {
				stack = stack.with(ig)
			}
		}
	}
	return stack
}

// parentIgnores returns the ignore files of start's parents that apply to it, from the
// workspace folder holding start down: their .gitignore and .ignore files, and a
// repository's exclude and global files when one of them (or a folder above the workspace
// folder) holds .git. Files above the workspace folder are never read. The files left out
// are recorded in w.skipped (it runs before the walk's goroutines start).
func (w *walker) parentIgnores(start string) ignoreStack {
	top := w.fence.FolderOf(start)
	if top == "" {
		return nil
	}
	var dirs []string
	for d := start; d != top && within(d, top); {
		d = filepath.Dir(d)
		dirs = append(dirs, d)
	}
	slices.Reverse(dirs)
	var stack ignoreStack
	if w.global != nil {
		if repo := gitAbove(top); repo != "" {
			stack = stack.with(&ignoreFile{dir: repo, rank: rankGlobal, pats: w.global.pats})
		}
	}
	for _, d := range dirs {
		if typ, ok := w.lstatType(filepath.Join(d, ".git")); ok {
			var sk *SkippedFile
			stack, sk = w.repoTop(stack, nil, d, typ.IsDir())
			if sk != nil {
				w.skipped = append(w.skipped, *sk)
			}
		}
		for _, k := range []struct {
			name string
			rank ignoreRank
		}{{gitignoreName, rankGitignore}, {dotIgnoreName, rankDotIgnore}} {
			ig, sk := w.loadIgnore(nil, d, k.name, unknownType, k.rank)
			if sk != nil {
				w.skipped = append(w.skipped, *sk)
			}
			if ig != nil {
				stack = stack.with(ig)
			}
		}
	}
	return stack
}

// gitAbove returns the nearest folder above dir (a workspace folder) holding .git, or ""
// when none does: the workspace folder is then inside that repository. Only whether .git
// exists is looked at.
func gitAbove(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// lstatType returns the type of what is at the real path p (a link counts, whatever it
// points to), looking through the workspace folder's root, and whether there is anything.
func (w *walker) lstatType(p string) (fs.FileMode, bool) {
	r, rel, err := w.fence.At(p)
	if err != nil {
		return 0, false
	}
	fi, err := r.Lstat(rel)
	if err != nil {
		return 0, false
	}
	return fi.Mode().Type(), true
}

// readFailure says why an ignore file could not be read, for a "was not applied" note.
func readFailure(err error) string {
	var nr *rootfile.NotRegularError
	var big *rootfile.TooBigError
	switch {
	case errors.As(err, &nr):
		return fmt.Sprintf("it is %s, not a regular file", rootfile.KindOf(nr.Mode))
	case errors.As(err, &big):
		return big.Error()
	}
	return fmt.Sprintf("it could not be read (%v)", err)
}

// loadIgnore reads and parses the ignore file name (of the given rank) of the folder at the
// real path dirReal, or returns nil when there is none, or it is left out (then with the
// reason). dir is an os.Root on that folder, or nil to go through the workspace folder's
// root; typ is the file's type from the folder listing, or unknownType.
//
// The file must be a regular file of at most MaxIgnoreFileBytes. A symbolic link is
// followed when Resolve finds that it leads to a place inside the workspace folders; the
// target is then read through the root of the folder holding it.
func (w *walker) loadIgnore(dir *os.Root, dirReal, name string, typ fs.FileMode, rank ignoreRank) (*ignoreFile, *SkippedFile) {
	p := filepath.Join(dirReal, name)
	shown := w.fence.Display(p)
	skip := func(reason string) (*ignoreFile, *SkippedFile) {
		return nil, &SkippedFile{Path: shown, Reason: reason}
	}
	r, rel := dir, name
	if r == nil {
		var err error
		if r, rel, err = w.fence.At(p); err != nil {
			return nil, nil
		}
	}
	if typ == unknownType {
		fi, err := r.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return skip(fmt.Sprintf("it could not be looked at (%v)", err))
		}
		typ = fi.Mode().Type()
	}
	if typ&fs.ModeSymlink != 0 {
		target, _ := r.Readlink(rel)
		real, err := w.fence.Resolve(p)
		switch {
		case errors.Is(err, ErrOutside):
			return skip(fmt.Sprintf("it is a symbolic link to %s, outside the workspace folders", target))
		case err != nil:
			return skip(fmt.Sprintf("it is a symbolic link that cannot be followed (%v)", err))
		}
		if r, rel, err = w.fence.At(real); err != nil {
			return nil, nil
		}
		if fi, err := r.Stat(rel); errors.Is(err, fs.ErrNotExist) {
			return skip(fmt.Sprintf("it is a symbolic link to %s, which does not exist", target))
		} else if err != nil {
			return skip(fmt.Sprintf("it is a symbolic link to %s, which cannot be read (%v)", target, err))
		} else if !fi.Mode().IsRegular() {
			return skip(fmt.Sprintf("it is a symbolic link to %s, which is %s, not a regular file", target, rootfile.KindOf(fi.Mode())))
		}
	} else if !typ.IsRegular() {
		return skip(fmt.Sprintf("it is %s, not a regular file", rootfile.KindOf(typ)))
	}
	data, err := rootfile.ReadSmall(r, rel, shown, MaxIgnoreFileBytes)
	if err != nil {
		return skip(readFailure(err))
	}
	return parseIgnoreRank(dirReal, data, rank), nil
}

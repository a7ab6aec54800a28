// This file parses ignore files (.gitignore, .ignore, .git/info/exclude and git's global
// excludes file) and decides whether a path is ignored, for grep and find. It covers the
// common subset of gitignore(5): comments, negation (!), folder-only patterns (trailing /),
// anchored patterns (a / at the start or in the middle), *, ?, [...] and **. Precedence
// follows git and ripgrep: .ignore files over .gitignore files over .git/info/exclude over
// the global excludes file, and among files of one kind the deeper one wins.

package search

import (
	"path/filepath"
	"strings"
)

// ignoreRank orders the kinds of ignore file by precedence, lowest first.
type ignoreRank uint8

const (
	rankGlobal    ignoreRank = iota // git's core.excludesFile
	rankExclude                     // a repository's .git/info/exclude
	rankGitignore                   // .gitignore
	rankDotIgnore                   // .ignore (ripgrep's and fd's own ignore file)
)

// ignoreFile is one ignore file: the real path of the folder its patterns are relative to,
// its kind and its patterns in file order.
type ignoreFile struct {
	dir  string
	rank ignoreRank
	pats []ignorePattern
}

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	m        globMatcher
	negate   bool // "!pat": re-include what an earlier pattern excluded
	dirOnly  bool // "pat/": matches folders only
	anchored bool // has a "/" before its end: matched against the path from the file's folder
}

// parseIgnore parses the content of a .gitignore whose patterns are relative to dir. Lines
// that do not compile are skipped, as git skips patterns it cannot use.
func parseIgnore(dir string, data []byte) *ignoreFile {
	return parseIgnoreRank(dir, data, rankGitignore)
}

// parseIgnoreRank parses the content of an ignore file of the given kind.
func parseIgnoreRank(dir string, data []byte, rank ignoreRank) *ignoreFile {
	f := &ignoreFile{dir: dir, rank: rank}
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := parseIgnoreLine(line); ok {
			f.pats = append(f.pats, p)
		}
	}
	return f
}

func parseIgnoreLine(line string) (ignorePattern, bool) {
	var p ignorePattern
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are ignored unless quoted with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return p, false
	}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return p, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
		// "**/x" with no other "/" matches x at any depth: the name alone decides.
		if rest, ok := strings.CutPrefix(line, "**/"); ok && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") {
			p.anchored = false
			line = rest
		}
	}
	m, err := compileGlob(line)
	if err != nil {
		return p, false
	}
	p.m = m
	return p, true
}

// decide returns whether the file's last pattern matching the entry name in the folder
// relDir (slash-separated, from the file's folder; "" for that folder itself) ignores it
// (+1) or re-includes it (-1), or 0 when none matches. The entry's path is only built for
// an anchored pattern.
func (f *ignoreFile) decide(relDir, name string, isDir bool) int {
	rel, built := "", false
	for i := len(f.pats) - 1; i >= 0; i-- {
		p := &f.pats[i]
		if p.dirOnly && !isDir {
			continue
		}
		s := name
		if p.anchored {
			if !built {
				rel, built = name, true
				if relDir != "" {
					rel = relDir + "/" + name
				}
			}
			s = rel
		}
		if p.m.match(s) {
			if p.negate {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ignoreStack is the ignore files that apply in a folder, in increasing precedence: by rank,
// then shallowest first. It is never modified in place once built (walks share them).
type ignoreStack []*ignoreFile

// with returns the stack plus f at its place by precedence, leaving s as it was.
func (s ignoreStack) with(f *ignoreFile) ignoreStack {
	i := len(s)
	for i > 0 && s[i-1].rank > f.rank {
		i--
	}
	out := make(ignoreStack, 0, len(s)+1)
	out = append(out, s[:i]...)
	out = append(out, f)
	return append(out, s[i:]...)
}

// enterRepo returns the stack for the top folder of a git repository: the git ignore files
// of outer folders (their .gitignore, exclude and global files) no longer apply, as in git;
// .ignore files still do, as in ripgrep. s is left as it was.
func (s ignoreStack) enterRepo() ignoreStack {
	var out ignoreStack
	for _, f := range s {
		if f.rank == rankDotIgnore {
			out = append(out, f)
		}
	}
	return out
}

// ignored reports whether the entry at the real path p (a folder when isDir) is ignored.
func (s ignoreStack) ignored(p string, isDir bool) bool {
	i := strings.LastIndexByte(p, '/')
	dir := p[:i]
	if i == 0 {
		dir = "/"
	}
	return s.ignoredIn(dir, p[i+1:], isDir)
}

// ignoredIn reports whether the entry name of the folder at the real path dir (a folder
// when isDir) is ignored: the ignore file of highest precedence with a pattern matching it
// decides, and within a file the last matching pattern.
func (s ignoreStack) ignoredIn(dir, name string, isDir bool) bool {
	for i := len(s) - 1; i >= 0; i-- {
		f := s[i]
		var relDir string
		switch {
		case dir == f.dir:
		case f.dir == "/":
			relDir = dir[1:]
		case len(dir) > len(f.dir) && dir[len(f.dir)] == '/' && dir[:len(f.dir)] == f.dir:
			relDir = dir[len(f.dir)+1:]
		default:
			continue
		}
		if filepath.Separator != '/' {
			relDir = filepath.ToSlash(relDir)
		}
		switch f.decide(relDir, name, isDir) {
		case 1:
			return true
		case -1:
			return false
		}
	}
	return false
}

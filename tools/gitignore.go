// This file parses .gitignore files and decides whether a path is ignored, for grep and
// find. It covers the common subset of gitignore(5): comments, negation (!), folder-only
// patterns (trailing /), anchored patterns (a / at the start or in the middle), *, ?, [...]
// and **, with deeper .gitignore files taking precedence over shallower ones.

package tools

import (
	"path/filepath"
	"regexp"
	"strings"
)

// ignoreFile is one .gitignore: the real path of its folder and its patterns in file order.
type ignoreFile struct {
	dir  string
	pats []ignorePattern
}

// ignorePattern is one line of a .gitignore.
type ignorePattern struct {
	re       *regexp.Regexp
	negate   bool // "!pat": re-include what an earlier pattern excluded
	dirOnly  bool // "pat/": matches folders only
	anchored bool // has a "/" before its end: matched against the path from the .gitignore's folder
}

// parseIgnore parses the content of the .gitignore in dir. Lines that do not compile are
// skipped, as git skips patterns it cannot use.
func parseIgnore(dir string, data []byte) *ignoreFile {
	f := &ignoreFile{dir: dir}
	for _, line := range strings.Split(string(data), "\n") {
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
	}
	re, err := regexp.Compile("^" + globRegexp(line) + "$")
	if err != nil {
		return p, false
	}
	p.re = re
	return p, true
}

// match reports whether the pattern matches rel, the slash-separated path of an entry from
// the .gitignore's folder.
func (p *ignorePattern) match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.anchored {
		return p.re.MatchString(rel)
	}
	return p.re.MatchString(rel[strings.LastIndexByte(rel, '/')+1:])
}

// ignoreStack is the .gitignore files that apply in a folder, shallowest first.
type ignoreStack []*ignoreFile

// with returns the stack plus f, leaving s as it was.
func (s ignoreStack) with(f *ignoreFile) ignoreStack {
	out := make(ignoreStack, len(s), len(s)+1)
	copy(out, s)
	return append(out, f)
}

// ignored reports whether the entry at the real path p (a folder when isDir) is ignored:
// the last pattern that matches it, deepest .gitignore last, decides.
func (s ignoreStack) ignored(p string, isDir bool) bool {
	ignored := false
	for _, f := range s {
		if !within(p, f.dir) || p == f.dir {
			continue
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p[len(f.dir):], "/"))
		for i := range f.pats {
			if f.pats[i].match(rel, isDir) {
				ignored = !f.pats[i].negate
			}
		}
	}
	return ignored
}

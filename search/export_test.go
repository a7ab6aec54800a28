// This file exposes the matching under grep and find (ignore files, globs, a file's line
// finding) to the tests of package search_test.

package search

import "io"

// Ignored reports whether rel (slash-separated, from the folder of a .gitignore holding
// gitignore) is ignored.
func Ignored(gitignore, rel string, isDir bool) bool {
	s := ignoreStack{parseIgnore("/r", []byte(gitignore))}
	return s.ignored("/r/"+rel, isDir)
}

// GlobMatch reports whether a find/grep glob matches rel.
func GlobMatch(glob, rel string) (bool, error) {
	g, err := NewGlob(glob)
	if err != nil {
		return false, err
	}
	name := rel
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			name = rel[i+1:]
			break
		}
	}
	return g.Match(rel, name), nil
}

// GrepLines returns the numbers of the lines of what r yields (size bytes, or to its end
// when size is 0) that pattern matches, as grep finds them; binary reports a file grep
// skips, binaryLine where a NUL stopped it, longLines the lines cut. It fails only on an
// invalid pattern.
func GrepLines(pattern string, r io.Reader, size int64) (lines []int, texts []string, binary bool, binaryLine int, longLines []int, err error) {
	m, err := NewMatcher(pattern)
	if err != nil {
		return nil, nil, false, 0, nil, err
	}
	s := grepSearch{m: m, max: 1 << 30, quit: func() bool { return false }, res: &FileMatches{}, line: 1}
	s.run(r, size)
	for _, l := range s.res.Lines {
		lines = append(lines, l.No)
		texts = append(texts, l.Text)
	}
	return lines, texts, s.res.Binary, s.res.BinaryLine, s.res.LongLines, s.res.Err
}

// GrepLiteral returns the literal grep looks for first in pattern ("" for none), and
// whether finding it on a line is a match.
func GrepLiteral(pattern string) (string, bool) {
	m, err := NewMatcher(pattern)
	if err != nil || m.lit == nil {
		return "", false
	}
	return string(m.lit.run.b), m.exact
}

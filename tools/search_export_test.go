// This file exposes grep's line finding and the global excludes lookup to the tests of
// package tools_test.

package tools

import (
	"io"
	"os"
)

// GrepLines returns the numbers of the lines of what r yields (size bytes, or to its end
// when size is 0) that pattern matches, as grep finds them; binary reports a file grep
// skips, binaryLine where a NUL stopped it, longLines the lines cut. It fails only on an
// invalid pattern.
func GrepLines(pattern string, r io.Reader, size int64) (lines []int, texts []string, binary bool, binaryLine int, longLines []int, err error) {
	m, err := newGrepMatcher(pattern)
	if err != nil {
		return nil, nil, false, 0, nil, err
	}
	s := grepSearch{m: m, max: 1 << 30, quit: func() bool { return false }, res: &grepResult{}, line: 1}
	s.run(r, size)
	for _, l := range s.res.lines {
		lines = append(lines, l.no)
		texts = append(texts, l.text)
	}
	return lines, texts, s.res.binary, s.res.binaryLine, s.res.longLines, s.res.err
}

// GrepLiteral returns the literal grep looks for first in pattern ("" for none), and
// whether finding it on a line is a match.
func GrepLiteral(pattern string) (string, bool) {
	m, err := newGrepMatcher(pattern)
	if err != nil || m.lit == nil {
		return "", false
	}
	return string(m.lit.run.b), m.exact
}

// SetGrepFileHook makes grep call f with the real path of each file it is about to search,
// from the goroutine searching it, until the test ends. Tests set it before any search.
func SetGrepFileHook(t interface{ Cleanup(func()) }, f func(real string)) {
	grepFileHook = f
	t.Cleanup(func() { grepFileHook = nil })
}

// GlobalExcludesEnv, set to 1, lets a test's grep and find read git's global excludes
// file (from HOME and XDG_CONFIG_HOME, which that test points at a home of its own). Without
// it they read none, so that the user's own excludes cannot change what tests see.
const GlobalExcludesEnv = "PID_TEST_GLOBAL_EXCLUDES"

func init() {
	real := globalExcludesPath
	globalExcludesPath = func() string {
		if os.Getenv(GlobalExcludesEnv) != "1" {
			return ""
		}
		return real()
	}
}

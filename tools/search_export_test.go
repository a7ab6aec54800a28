// This file exposes grep's per-file hook and the global excludes lookup to the tests of
// package tools_test.

package tools

import (
	"os"

	"github.com/pid-agent/pid/search"
)

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
	real := search.GlobalExcludesPath
	search.GlobalExcludesPath = func() string {
		if os.Getenv(GlobalExcludesEnv) != "1" {
			return ""
		}
		return real()
	}
}

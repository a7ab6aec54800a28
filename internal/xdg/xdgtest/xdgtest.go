// Package xdgtest gives a test user folders of its own (home, config, state), so that no
// settings, sessions, permissions or audit log of whoever runs the tests are read or
// written. The entry point is Isolate.
package xdgtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dirs are the folders Isolate made: HOME, XDG_CONFIG_HOME and XDG_STATE_HOME. pid's own
// files go in the "pid" folder of Config and of State.
type Dirs struct {
	Home, Config, State string
}

// Isolate creates fresh, empty home, config and state folders under t.TempDir and points
// HOME, XDG_CONFIG_HOME and XDG_STATE_HOME at them for the rest of the test (t.Setenv: the
// test cannot be parallel).
func Isolate(t testing.TB) Dirs {
	t.Helper()
	root := t.TempDir()
	d := Dirs{Home: filepath.Join(root, "home"), Config: filepath.Join(root, "config"), State: filepath.Join(root, "state")}
	for _, v := range [][2]string{{"HOME", d.Home}, {"XDG_CONFIG_HOME", d.Config}, {"XDG_STATE_HOME", d.State}} {
		if err := os.MkdirAll(v[1], 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(v[0], v[1])
	}
	return d
}

// Tests of OpenStore: where the store lives, and that a disabled one leaves nothing behind.

package rewind

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOpenStore(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	st, err := OpenStore(true, 0)
	if st != nil || err != nil {
		t.Fatalf("a disabled store: %v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(state, "pid")); !os.IsNotExist(err) {
		t.Errorf("a disabled store made its folder: %v", err)
	}
	st, err = OpenStore(false, 0)
	if err != nil || st == nil {
		t.Fatalf("OpenStore: %v, %v", st, err)
	}
	if fi, err := os.Stat(filepath.Join(state, "pid", "checkpoints")); err != nil || !fi.IsDir() {
		t.Errorf("the store is not in pid's state folder: %v", err)
	}
	// Without a state folder (no XDG_STATE_HOME, no home), it says why.
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if st, err := OpenStore(false, 0); err == nil || st != nil {
		t.Errorf("without a state folder: %v, %v; want an error", st, err)
	}
}

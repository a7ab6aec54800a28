package settings_test

// Shared test helpers: goleak over the package, a bounded poll for conditions reached by
// another goroutine (the Loader's reload) and files written the way editors save them. The
// tests isolate the user's folders with internal/xdg/xdgtest and build specs and calls for
// the policies the Loader hands out with permissions/permtest.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reloadTimeout bounds the wait for a Loader to reload after a file changed.
const reloadTimeout = 10 * time.Second

// writeFile writes data the way editors save: to a temporary file in the same folder, then
// renamed over the target. It creates the folders.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp~"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

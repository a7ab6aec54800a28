package permissions_test

// Shared test helpers: goleak over the package, a per-test XDG environment, and building
// specs and calls.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/permissions"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env points HOME and the XDG folders at fresh temporary folders and returns them.
type testEnv struct {
	home, config, state string
}

func setEnv(t *testing.T) testEnv {
	t.Helper()
	root := t.TempDir()
	e := testEnv{home: filepath.Join(root, "home"), config: filepath.Join(root, "config"), state: filepath.Join(root, "state")}
	for _, d := range []string{e.home, e.config, e.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", e.home)
	t.Setenv("XDG_CONFIG_HOME", e.config)
	t.Setenv("XDG_STATE_HOME", e.state)
	return e
}

// spec parses a permissions object or fails the test.
func spec(t *testing.T, s string) *permissions.Spec {
	t.Helper()
	p, err := permissions.ParseSpec([]byte(s))
	if err != nil {
		t.Fatalf("ParseSpec(%s): %v", s, err)
	}
	return p
}

// call builds a Call from a tool and a JSON arguments literal.
func call(tool, args string) permissions.Call {
	return permissions.Call{Tool: tool, Args: json.RawMessage(args)}
}

// argsJSON encodes one string argument as an arguments object.
func argsJSON(key, value string) string {
	b, _ := json.Marshal(map[string]string{key: value})
	return string(b)
}

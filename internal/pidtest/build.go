// This file builds the binaries the tests and commands run: pid itself, and helpers of
// this module such as the test MCP server.

package pidtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
)

// PidPackage is the import path of the daemon's main package.
const PidPackage = "github.com/pid-agent/pid/cmd/pid"

// Build compiles the main package pkg (an import path of this module) into dir, named
// after the last element of pkg, with -race when race is set, and returns the binary's
// path. It runs `go build`, so the working directory must be inside the module.
func Build(dir, pkg string, race bool) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// Race reports whether the running binary was built with -race: a test binary that was
// builds its daemon with it too, so that the daemon's data races show on its stderr.
func Race() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "-race" {
				return st.Value == "true"
			}
		}
	}
	return false
}

// Binary returns the pid binary to run: $PID_BIN when it is set (the binary under test, as
// the ACP SDK tests name it), else pid built into dir by Build.
func Binary(dir string, race bool) (string, error) {
	if bin := os.Getenv("PID_BIN"); bin != "" {
		return bin, nil
	}
	return Build(dir, PidPackage, race)
}

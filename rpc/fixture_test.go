// This file runs the headless fixtures (testdata/*.txtar, docs/fixtures.md) against the pid
// binary, built once for the test (with -race when the test runs with it, so that the
// daemon's data races fail the fixture that showed them).
//
//	go test ./rpc -run Fixture            check every fixture
//	go test ./rpc -run Fixture -update    rewrite their expected messages from what pid sends

package rpc_test

import (
	"flag"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pid-agent/pid/fixture"
)

// The -update flag may be defined by another test file of this package's test binary; it
// is then shared.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the expected messages of the fixtures in testdata/ from what pid sends")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in ../testdata")
	}
	bin := filepath.Join(t.TempDir(), "pid")
	args := []string{"build", "-o", bin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	args = append(args, "github.com/pid-agent/pid/cmd/pid")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	update := updating()
	// A race-enabled pid would otherwise sleep a second when it exits.
	env := []string{"GORACE=atexit_sleep_ms=0"}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			rep := fixture.RunFile(file, bin, fixture.Options{Update: update, Env: env})
			if !rep.OK() {
				t.Errorf("%s\npid's stderr:\n%s", rep.Failure, tail(rep.Stderr, 60))
				return
			}
			if strings.Contains(string(rep.Stderr), "WARNING: DATA RACE") {
				t.Errorf("%s: pid reported a data race:\n%s", file, rep.Stderr)
			}
			if update {
				t.Logf("updated %s", file)
			}
		})
	}
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

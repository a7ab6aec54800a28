// This file runs the headless fixtures (testdata/*.txtar, docs/fixtures.md) against the pid
// binary, built once for the test (with -race when the test runs with it, so that the
// daemon's data races fail the fixture that showed them).
//
//	go test ./rpc -run Fixture            check every fixture
//	go test ./rpc -run Fixture -update    rewrite their expected messages from what pid sends
//
// It also checks that the built-in tool list is written down in one fixture only.

package rpc_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/pid-agent/pid/fixture"
	"github.com/tidwall/gjson"
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

// toolsListFixture is the one fixture that compares the whole built-in tool list.
const toolsListFixture = "tools_list.txtar"

// TestFixturesCopyNoBuiltinTool checks that no fixture but tools_list.txtar holds a
// built-in tool's description: the others check the tools they are about with the rules only
// and names (docs/fixtures.md), so that adding a tool or rewording one changes one fixture.
func TestFixturesCopyNoBuiltinTool(t *testing.T) {
	dir := filepath.Join("..", "testdata")
	descriptions := builtinDescriptions(t, filepath.Join(dir, toolsListFixture))
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if filepath.Base(file) == toolsListFixture {
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var copied []string
		for name, desc := range descriptions {
			if strings.Contains(string(text), desc) {
				copied = append(copied, name)
			}
		}
		if len(copied) > 0 {
			sort.Strings(copied)
			t.Errorf("%s copies the descriptions of the built-in tools %s: compare the built-in tools in %s alone, and check the tools this fixture is about with a rule (only result.tools NAMES, names result.tools NAMES, any result.capabilities; docs/fixtures.md)", file, strings.Join(copied, ", "), toolsListFixture)
		}
	}
}

// builtinDescriptions returns the descriptions of the built-in tools, as JSON strings, by
// tool name, from the initialize response of the tools_list fixture.
func builtinDescriptions(t *testing.T, file string) map[string]string {
	t.Helper()
	fx, err := fixture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range fx.Lines {
		if l.Kind != fixture.Expect {
			continue
		}
		for _, tool := range gjson.GetBytes(l.JSON, "result.capabilities.experimental.pid.tools").Array() {
			if d := tool.Get("description"); d.Type == gjson.String && len(d.Str) > 0 {
				out[tool.Get("name").String()] = d.Raw
			}
		}
	}
	if len(out) < 7 {
		t.Fatalf("%s lists %d built-in tools with descriptions in initialize's capabilities.experimental.pid.tools; want read, write, edit, bash, grep, find, ls and more", file, len(out))
	}
	return out
}

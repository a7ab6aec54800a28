package launch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/workspace/launch"
)

// runTerminal runs a terminal's command line as an editor's terminal would: a plain child
// of this process with an environment of its own, and returns what it printed.
func runTerminal(t *testing.T, argv []string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the terminal's command %q: %v\n%s", argv, err, out)
	}
	return string(out)
}

// A session that uses both of its holders (the host's network, then plan mode's read-only
// sandbox with the session's own network) can run commands in an editor's terminal through
// each: each holder serves terminals in a folder of its own. With one folder for the
// session, the second holder could not listen there and every later terminal command failed.
func TestTerminalCommandsThroughBothHolders(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	r := sandbox.Default()
	r.Net.Mode, r.Network = netproxy.ModeOn, true
	l.Configure(launch.Config{Settings: r})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	var sockets []string
	for i, step := range []struct {
		readOnly bool
		command  string
		want     string
	}{
		{false, "echo written > one.txt && echo first", "first"},
		{true, "cat one.txt; { echo x > two.txt; } 2>/dev/null || echo refused", "written\nrefused"},
	} {
		l.ForceReadOnly(step.readOnly)
		argv, box, _, err := l.TerminalCommand(bash, step.command, false, launch.Caller{ID: "t", Command: step.command}, self)
		if err != nil {
			t.Fatalf("step %d: TerminalCommand: %v", i, err)
		}
		if box == nil || len(argv) < 4 || argv[2] != "--holder" {
			t.Fatalf("step %d: not a sandboxed terminal command: %q", i, argv)
		}
		sockets = append(sockets, argv[3])
		if got := strings.TrimSpace(runTerminal(t, argv)); got != step.want {
			t.Errorf("step %d printed %q, want %q", i, got, step.want)
		}
		box.CheckAfter()
	}
	if sockets[0] == sockets[1] || filepath.Dir(filepath.Dir(sockets[0])) != filepath.Dir(filepath.Dir(sockets[1])) {
		t.Errorf("the two holders' sockets %q: want one folder each, side by side", sockets)
	}
	if _, err := os.Stat(filepath.Join(dir, "two.txt")); err == nil {
		t.Error("the read-only step wrote in the workspace")
	}
}

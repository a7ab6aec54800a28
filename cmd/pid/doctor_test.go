package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/pid-agent/pid/sandbox"
)

// pid doctor says what initialize's capabilities.experimental.pid.sandbox says, and its
// exit code tells whether bash can run sandboxed.
func TestDoctorReportsTheSandbox(t *testing.T) {
	out, err := exec.Command(pidBin, "doctor").CombinedOutput()
	c := sandbox.Probe()
	text := string(out)
	switch {
	case c.Available && err != nil:
		t.Fatalf("pid doctor failed with a sandbox available: %v\n%s", err, text)
	case !c.Available && err == nil:
		t.Fatalf("pid doctor succeeded without a sandbox:\n%s", text)
	}
	want := []string{fmt.Sprintf("user namespaces:   %s", map[bool]string{true: "yes", false: "no"}[c.UserNamespaces]),
		fmt.Sprintf("PID namespace:     %s", map[bool]string{true: "yes", false: "no"}[c.PidNamespaces])}
	if c.Available {
		want = append(want, "sandbox for bash:    available", fmt.Sprintf("Landlock:          yes, ABI %d", c.LandlockABI))
	} else {
		want = append(want, "NOT available", c.Reason)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("pid doctor lacks %q:\n%s", w, text)
		}
	}
}

// `pid sandbox-exec` started by hand (not by pid, so without a policy) refuses to run
// anything.
func TestSandboxExecNeedsPid(t *testing.T) {
	out, err := exec.Command(pidBin, "sandbox-exec", "--", "/bin/echo", "ran").CombinedOutput()
	if err == nil || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "no policy") {
		t.Errorf("sandbox-exec without pid: err=%v\n%s", err, out)
	}
}

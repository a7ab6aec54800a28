package main

// The sandbox through the real daemon: initialize reports what the kernel gives, and a bash
// call of a session is contained by the real helper (pid's own binary).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/sandbox"
)

func TestInitializeReportsTheSandbox(t *testing.T) {
	d := startDaemon(t)
	r := d.request(t, 1, "initialize", map[string]any{"processId": nil, "capabilities": map[string]any{}}, true)
	got := r.Get("capabilities.experimental.pid.sandbox")
	want, _ := json.Marshal(sandbox.Probe())
	var g, w map[string]any
	if err := json.Unmarshal([]byte(got.Raw), &g); err != nil {
		t.Fatalf("capabilities.experimental.pid.sandbox: %q", got.Raw)
	}
	json.Unmarshal(want, &w)
	// The probe's fields, and the network the settings give commands (issue 37): the
	// default allowlist, through the proxy when the kernel gives a network namespace.
	c := sandbox.Probe()
	if len(g) != len(w)+2 || g["available"] != w["available"] || g["landlockAbi"] != w["landlockAbi"] || g["userNamespaces"] != w["userNamespaces"] ||
		g["network"] != "allowlist" || g["proxy"] != (c.Available && c.NetworkNamespaces) {
		t.Errorf("initialize says %s, the probe %s (and network \"allowlist\", proxy %v)", got.Raw, want, c.Available && c.NetworkNamespaces)
	}
}

func TestDaemonBashIsContained(t *testing.T) {
	if c := sandbox.Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-SECRET")
	wd, _ := os.Getwd()
	outside, err := os.MkdirTemp(wd, ".outside-") // not in /tmp, which the command sees empty
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	d := startDaemon(t)
	sid := d.session(t)
	target := filepath.Join(outside, "x")
	r := d.bash(t, 3, sid, "echo $ANTHROPIC_API_KEY-$PID_SANDBOX_POLICY > in.txt; echo x > "+target, true)
	msg := r.Get("messages.0")
	if !msg.Get("isError").Bool() || !strings.Contains(msg.Get("content.0.text").String(), "Permission denied") {
		t.Errorf("a write outside the workspace: %s", msg.Raw)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the command wrote outside the workspace")
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "in.txt"))
	if err != nil || string(b) != "-\n" {
		t.Errorf("in the workspace: %q, %v", b, err)
	}
}

// A daemon killed with SIGKILL leaves no process of a sandboxed command, not one that left
// its process group (setsid) either: the helper dies of its parent-death signal, and with
// it, as the init of the command's PID namespace, everything in the namespace.
func TestKilledDaemonLeavesNoSandboxedProcess(t *testing.T) {
	if c := sandbox.Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
	d := startDaemon(t)
	sid := d.session(t)
	marker := "pidkilled" + strconv.Itoa(os.Getpid())
	d.bash(t, 3, sid, "setsid bash -c 'exec -a "+marker+"a sleep 1000' & (exec -a "+marker+"b sleep 1000)", false)
	proctest.WaitUntil(t, 20*time.Second, "the command's two processes", func() bool { return len(withMarker(t, marker)) == 2 })
	if err := d.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.waitExit(t, 10*time.Second)
	proctest.WaitUntil(t, 10*time.Second, "the command's processes to die with pid", func() bool { return len(withMarker(t, marker)) == 0 })
}

// withMarker returns the live processes (not zombies) whose argv[0] starts with marker.
func withMarker(t *testing.T, marker string) []int {
	t.Helper()
	var out []int
	for _, p := range proctest.Processes(t) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/cmdline")
		if err == nil && p.State != "Z" && strings.HasPrefix(string(b), marker) {
			out = append(out, p.Pid)
		}
	}
	return out
}

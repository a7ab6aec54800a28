package main

// The sandbox through the real daemon: initialize reports what the kernel gives, and a bash
// call of a session is contained by the real helper (pid's own binary).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if len(g) != len(w) || g["available"] != w["available"] || g["landlockAbi"] != w["landlockAbi"] || g["userNamespaces"] != w["userNamespaces"] {
		t.Errorf("initialize says %s, the probe %s", got.Raw, want)
	}
}

func TestDaemonBashIsContained(t *testing.T) {
	if c := sandbox.Probe(); !c.Available {
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-api03-SECRET")
	outside := t.TempDir()
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

//go:build linux

package tools_test

// The bash tool on the sandbox, through the real helper (this test binary is its own
// helper: the sandbox package intercepts `sandbox-exec` before the tests start): what the
// tool adds to the launcher (package workspace/launch, whose tests hold what the sandbox
// keeps a command from) is checked here: the call's arguments, details.sandbox, the note
// after a refusal and the check after the command in the result. They skip only where the
// kernel cannot give a sandbox, and say why; with PID_REQUIRE_SANDBOX=1 (make test) they
// fail there instead.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/tools"
)

// sandboxDetails returns a bash result's details.sandbox.
func sandboxDetails(t *testing.T, r result) tools.SandboxDetails {
	t.Helper()
	d, ok := r.details.(tools.BashDetails)
	if !ok || d.Sandbox == nil {
		t.Fatalf("no details.sandbox in %#v", r.details)
	}
	return *d.Sandbox
}

func bashArgs(t *testing.T, command string) string {
	return jsonArgs(t, map[string]any{"command": command})
}

// A sandboxed call's result carries how it was contained (details.sandbox), the note after
// a refusal in an error result, and what the check after it removed (in the text and in
// details.sandbox.reverted, kept on an error result too); an escalated call needs a
// justification and says it ran outside.
func TestBashResultCarriesTheSandbox(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	ws, dir := newWorkspace(t, nil)
	outside := testfs.OutsideTemp(t)
	r := call(t, ws, "bash", bashArgs(t, "echo in > in.txt"))
	mustOK(t, r)
	if d := sandboxDetails(t, r); d.Mode != sandbox.ModeWorkspaceWrite || d.Network || !d.Proxy || d.Limits == nil || !d.Limits.PidNamespace {
		t.Errorf("details.sandbox %+v", d)
	}
	target := filepath.Join(outside, "out.txt")
	mustFail(t, call(t, ws, "bash", bashArgs(t, "echo out > "+target)), "Permission denied", "Command exited with code 1.",
		"pid's sandbox (workspace-write) may have refused this", "unsandboxed: true")
	r = call(t, ws, "bash", bashArgs(t, "echo '{}' > .mcp.json; exit 3"))
	p := filepath.Join(dir, ".mcp.json")
	mustFail(t, r, "created "+p+", which pid removed", "Command exited with code 3.")
	if d, ok := r.details.(tools.BashDetails); !ok || d.Sandbox == nil || !slices.Equal(d.Sandbox.Reverted, []string{p}) || d.SandboxReverted() == nil {
		t.Errorf("the error result's details %#v", r.details)
	}
	mustFail(t, call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "echo x > " + target, "unsandboxed": true})), "needs a justification")
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a call without a justification ran")
	}
	r = call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "echo x > " + target, "unsandboxed": true, "justification": "write the report"}))
	mustOK(t, r)
	if d := sandboxDetails(t, r); d.Mode != sandbox.ModeOff || !d.Escalated || !d.Network {
		t.Errorf("details.sandbox %+v", d)
	}
	if readFile(t, target) != "x\n" {
		t.Error("the unsandboxed call did not write")
	}
}

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bash asking to run outside the sandbox: session/request_permission's title says so with
// the model's justification, and its "always" options say they cover running the command
// outside the sandbox.
func TestEscalationAsksWithItsJustification(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), script("",
		toolTurn(call("b1", "bash", `{"command":"true","unsandboxed":true,"justification":"needs the registry"}`)), textTurn("done")))
	var titles []string
	c.result(c.prompt(sid, "run"), func(m *msg) {
		titles = append(titles, m.get("params.toolCall.title").String())
		if names := m.get("params.options.#.name").String(); !strings.Contains(names, "outside the sandbox") {
			t.Errorf("options %s do not say they cover running outside the sandbox", names)
		}
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
	})
	if len(titles) != 1 || !strings.Contains(titles[0], "OUTSIDE THE SANDBOX") || !strings.Contains(titles[0], "needs the registry") {
		t.Errorf("permission titles %q", titles)
	}
}

// _meta.pid.sandbox narrows the session's sandbox: a read-only one keeps the command from
// writing in the cwd, and the tool's end says how it ran.
func TestMetaSandboxReadOnly(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	sid := c.newSession(dir, script(`"sandbox":{"mode":"read-only"},"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", `{"command":"echo x > f"}`)), textTurn("done")))
	c.result(c.prompt(sid, "run"), nil)
	if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
		t.Error("a read-only sandbox let the command write in the cwd")
	}
}

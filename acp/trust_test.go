package acp

// ACP has no trust request: a session's cwd is its workspace folder, whose
// .pid/settings.json only narrows unless the user's trustedFolders (or trust.json) lists it.
// Permission requests name what an "always" answer covers, and offer none when it cannot be
// scoped.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// askedAbout runs a prompt whose one turn calls write on path, answering any permission
// request with reject_once, and returns the requests.
func askedAbout(t *testing.T, dir, path string) []*msg {
	t.Helper()
	c := start(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false})
	sid := c.newSession(dir, script("", toolTurn(call("w1", "write", `{"path":"`+path+`","content":"x"}`)), textTurn("done")))
	var asked []*msg
	c.result(c.prompt(sid, "write"), func(m *msg) {
		asked = append(asked, m)
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
	})
	return asked
}

func TestUntrustedCwdSettingsOnlyNarrow(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config")
	t.Setenv("XDG_CONFIG_HOME", config)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".pid"), 0o755)
	os.WriteFile(filepath.Join(dir, ".pid", "settings.json"), []byte(`{"permissions":{"tools":{"write":[{"pattern":"notes/**","decision":"allow"}]}}}`), 0o644)

	asked := askedAbout(t, dir, "notes/a.txt")
	if len(asked) != 1 {
		t.Fatalf("untrusted cwd: %d permission requests, want 1 (its allow rule ignored)", len(asked))
	}
	names := asked[0].get("params.options.#.name").String()
	if !strings.Contains(names, "notes/a.txt") {
		t.Errorf("the always options %s do not say what they cover", names)
	}

	os.MkdirAll(filepath.Join(config, "pid"), 0o755)
	os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(`{"trustedFolders":["`+dir+`"]}`), 0o644)
	if asked := askedAbout(t, dir, "notes/b.txt"); len(asked) != 0 {
		t.Errorf("a cwd in trustedFolders: %d permission requests, want none", len(asked))
	}
}

func TestPermissionOptionsWithoutScope(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), script("", toolTurn(call("b1", "bash", `{"command":"echo $(date)"}`)), textTurn("done")))
	n := 0
	c.result(c.prompt(sid, "run"), func(m *msg) {
		n++
		if kinds := m.get("params.options.#.kind").String(); kinds != `["allow_once","reject_once"]` {
			t.Errorf("options %s; want only once-answers for a command no always answer can scope", kinds)
		}
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
	})
	if n != 1 {
		t.Errorf("%d permission requests, want 1", n)
	}
}

func TestCwdModelOnlyWhenTrusted(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config")
	t.Setenv("XDG_CONFIG_HOME", config)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".pid"), 0o755)
	os.WriteFile(filepath.Join(dir, ".pid", "settings.json"), []byte(script("", textTurn("from the workspace"))), 0o644)
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(dir, "")
	if m := c.wantError(c.prompt(sid, "go"), codeAuthRequired); !strings.Contains(m.Error.Message, "no model") {
		t.Errorf("an untrusted cwd's model was used: %s", m.raw)
	}
	os.MkdirAll(filepath.Join(config, "pid"), 0o755)
	os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(`{"trustedFolders":["`+dir+`"]}`), 0o644)
	c2 := start(t)
	c2.initialize(nil)
	sid = c2.newSession(dir, "")
	if res, _ := c2.result(c2.prompt(sid, "go"), nil); res.Get("stopReason").String() != "end_turn" {
		t.Errorf("a trusted cwd's model: %s", res.Raw)
	}
}

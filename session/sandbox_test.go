package session_test

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/session"
)

// session/new's "sandbox" comes over initializationOptions' key by key: a key it leaves out
// keeps the editor's default, denyRead lists add up.
func TestSandboxSettingsMergeKeyByKey(t *testing.T) {
	init := session.Config{Sandbox: json.RawMessage(`{"network": true, "denyRead": ["/a"], "writableRoots": ["/w"]}`)}
	got := init.Merge(session.Config{Sandbox: json.RawMessage(`{"mode": "read-only", "denyRead": ["/b"]}`)})
	s, err := sandbox.Parse(got.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != sandbox.ModeReadOnly || s.Network == nil || *s.Network != "on" || len(s.DenyRead) != 2 || len(s.WritableRoots) != 1 {
		t.Errorf("merged %s", got.Sandbox)
	}
	// A malformed one is kept as it is, for session/new to refuse.
	bad := init.Merge(session.Config{Sandbox: json.RawMessage(`{"mode": "none"}`)})
	if string(bad.Sandbox) != `{"mode": "none"}` {
		t.Errorf("malformed: %s", bad.Sandbox)
	}
}

// This file tests, through the daemon, that a key pid login saved is redacted from tool
// output like a key from the environment, in its encodings too, also when it was saved
// after pid started (pid login while the editor runs).

package rpc

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/credentials"
)

func TestSavedKeyIsRedacted(t *testing.T) {
	// No prefix a built-in pattern knows: only the saved key's own redaction can catch it.
	key := "Zq8Lw3Nx5Pv7Rt2Ks9Hm4Jd6Fb1Yc0"
	_, ws := newWorkspaceDir(t, map[string]string{"k": key})
	config, _ := xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{})
	// Saved after the daemon started.
	f := &credentials.File{Credentials: map[string]credentials.Entry{
		"localhost:11434": {Provider: "openai", BaseURL: "http://localhost:11434/v1", APIKey: key}}}
	if _, err := credentials.Save(filepath.Join(config, "pid", credentials.FileName), f); err != nil {
		t.Fatal(err)
	}
	cmd := `K=$(cat k); printf '%s\n' "$K"; printf %s "$K" | base64`
	m, _ := wsOne(t, d, sid, wsDecide("allow"), "k1", "bash", obj{"command": cmd})
	wsWantOK(t, m)
	out := m.Get("content.0.text").String()
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	for _, part := range []string{key, key[:12], key[12:24], b64[:12], b64[12:24]} {
		if strings.Contains(out, part) {
			t.Errorf("the result holds %q of the saved key or its base64: %q", part, out)
		}
	}
	if strings.Count(out, "[REDACTED:credentials localhost:11434]") != 2 {
		t.Errorf("result %q: want the key and its base64 redacted as the saved key", out)
	}
}

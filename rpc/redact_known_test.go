// This file tests, through the daemon, the redaction of what the probe of issue 19 found
// passing: pid's own API key printed by a command in base64 or hex, and a secret quoted in
// the audit log's decidedBy.

package rpc

import (
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestKnownKeyEncodedIsRedacted(t *testing.T) {
	key := "sk-" + "proj-Wq3Xz7Lm1Tv5Rp9Kn2Hb6Jd4Fs8"
	t.Setenv("OPENAI_API_KEY", key)
	// A command never has the key in its environment (the sandbox's rule, issue 22): it reads
	// it from a file here, as a command that found it somewhere would.
	_, ws := newWorkspaceDir(t, map[string]string{"k": key})
	xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{})
	cmd := `K=$(cat k); printf %s "$K" | base64; printf x%s "$K" | base64; printf %s "$K" | od -An -tx1 | tr -d ' \n'`
	m, _ := wsOne(t, d, sid, wsDecide("allow"), "k1", "bash", obj{"command": cmd})
	wsWantOK(t, m)
	out := m.Get("content.0.text").String()
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	hx := hex.EncodeToString([]byte(key))
	for _, part := range []string{key[3:15], b64[:12], b64[12:24], b64[24:36], hx[:16], hx[16:32], hx[40:56]} {
		if strings.Contains(out, part) {
			t.Errorf("the result holds %q of the key's encodings: %q", part, out)
		}
	}
	if strings.Count(out, "[REDACTED:env OPENAI_API_KEY]") != 3 {
		t.Errorf("result %q: want the three encodings redacted", out)
	}
}

// decidedBy names the session rule's bash part; a token in it is redacted as in args, for a
// call that ran (the afterToolCall chain) and for one denied (written by the session).
func TestAuditDecidedByIsRedacted(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	_, state := xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"permissions": obj{"tools": obj{"bash": []obj{
		{"pattern": "printf", "decision": "allow"}, {"pattern": "echo", "decision": "deny"}}}}})
	m, _ := wsOne(t, d, sid, nil, "a1", "bash", obj{"command": "printf %s " + testGitHubToken})
	wsWantOK(t, m)
	m, _ = wsOne(t, d, sid, nil, "a2", "bash", obj{"command": "echo " + testGitHubToken})
	wsWantError(t, m, "denied")
	data := wsReadFile(t, filepath.Join(state, "pid", "audit.log"))
	if strings.Contains(data, testGitHubToken) || strings.Contains(data, testGitHubToken[4:16]) {
		t.Fatalf("the audit log holds the token: %s", data)
	}
	lines := strings.Split(strings.TrimSpace(data), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2: %s", len(lines), data)
	}
	for _, l := range lines {
		if by := gjson.Get(l, "decidedBy").String(); !strings.HasPrefix(by, "session (") || !strings.Contains(by, "[REDACTED:github-token]") {
			t.Errorf("decidedBy %q, want the session's rule with the token redacted", by)
		}
	}
}

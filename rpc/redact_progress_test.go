// This file tests that progress ($/toolUpdate) is redacted like results, that the start of a
// secret cut off at the end of a progress update never leaves, and that calls the user
// denied reach the audit log with the decision and who made it.

package rpc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestProgressIsRedacted(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	half := testGitHubToken[:20]
	sid := d.newSession(obj{"scriptedTools": []obj{{"name": "leak", "steps": []obj{
		updateStep("token " + testGitHubToken + " done\n"),
		updateStep("key " + testAWSKey + "\nnext " + half),
		resultStep("ok"),
	}}}})
	wsExecute(t, d, sid, "", nil, wsCall("p1", "leak", obj{}))
	var updates []string
	for _, m := range d.notes(sid) {
		if m.method() == "$/toolUpdate" {
			updates = append(updates, m.get("params.partialResult.content.0.text").String())
		}
	}
	if len(updates) != 2 {
		t.Fatalf("%d progress updates, want 2", len(updates))
	}
	all := strings.Join(updates, "\n")
	for _, secret := range []string{testGitHubToken, testAWSKey, half, half[:10]} {
		if strings.Contains(all, secret) {
			t.Errorf("progress carries %q: %q", secret, all)
		}
	}
	if !strings.Contains(updates[0], "[REDACTED:github-token]") || !strings.Contains(updates[1], "next …") {
		t.Errorf("progress %q; want the token redacted and the unfinished last word held back", updates)
	}
}

func TestDeniedByUserIsAudited(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	_, state := xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{})
	wsExecute(t, d, sid, "", wsDecide("deny"), wsCall("u1", "bash", obj{"command": "echo no"}))
	wsExecute(t, d, sid, "", wsDecide("allow"), wsCall("u2", "bash", obj{"command": "echo yes"}))
	data := wsReadFile(t, filepath.Join(state, "pid", "audit.log"))
	byID := map[string]gjson.Result{}
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		byID[gjson.Get(l, "toolCallId").String()] = gjson.Parse(l)
	}
	if e := byID["u1"]; e.Get("decision").String() != "deny" || e.Get("decidedBy").String() != "user" {
		t.Errorf("audit line for the call the user denied: %s", e.Raw)
	}
	if e := byID["u2"]; e.Get("decision").String() != "allow" || e.Get("decidedBy").String() != "user" || e.Get("isError").Bool() {
		t.Errorf("audit line for the call the user allowed: %s", e.Raw)
	}
}

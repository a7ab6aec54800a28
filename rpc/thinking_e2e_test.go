// This file checks that a model entry's "thinking" reaches the server (issue 20): session/new's
// level goes out as reasoning_effort, session/setModel changes it for the next call, "off"
// sends nothing, and a level pid does not know is refused naming the setting.

package rpc

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestE2EThinkingLevel(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, sseAnswer(textAnswer("one")...), sseAnswer(textAnswer("two")...))
	d := startProcess(t, processOptions{Env: e2eEnv})
	d.initialize(nil)
	model := e2eModel(srv)
	model["thinking"] = "medium"
	sid := d.newSession(obj{"cwd": t.TempDir(), "model": model})
	d.call("session/prompt", obj{"sessionId": sid, "text": "hi"})

	off := e2eModel(srv)
	off["thinking"] = "off"
	d.call("session/setModel", obj{"sessionId": sid, "model": off})
	d.call("session/prompt", obj{"sessionId": sid, "text": "again"})

	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := gjson.GetBytes(reqs[0].body, "reasoning_effort").String(); got != "medium" {
		t.Errorf("first call: reasoning_effort %q, want medium", got)
	}
	if r := gjson.GetBytes(reqs[1].body, "reasoning_effort"); r.Exists() {
		t.Errorf("after setModel with thinking off: reasoning_effort %s", r.Raw)
	}

	bad := e2eModel(srv)
	bad["thinking"] = "max"
	code, msg := d.callErr("session/setModel", obj{"sessionId": sid, "model": bad})
	if code == 0 || !strings.Contains(msg, "thinking") || !strings.Contains(msg, `"high"`) {
		t.Errorf("thinking max: error %d %q, want one naming thinking and its values", code, msg)
	}
	stopDaemon(t, d)
}

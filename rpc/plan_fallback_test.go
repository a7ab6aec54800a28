// This file tests exit_plan_mode with an editor that does not answer beforeToolCall: the
// window/showMessageRequest fallback shows the whole plan (it used to be cut at 400
// characters) and offers the modes to go on in.

package rpc

import (
	"strings"
	"testing"
)

func TestPlanThroughShowMessageRequest(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	plan := "1. Read the code.\n" + strings.Repeat("2. Change the parser, step by step, carefully. ", 30) + "\n3. The end of the plan."
	sid := d.newSession(obj{"cwd": ws, "mode": "plan", "model": scriptModel(
		turn(toolCall("p1", "exit_plan_mode", obj{"plan": plan})), turn(text("planned")))})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "plan it"})
	req := d.await("window/showMessageRequest", func(m *wireMsg) bool { return m.isRequest() && m.method() == "window/showMessageRequest" })
	if msg := req.get("params.message").String(); !strings.Contains(msg, plan) {
		t.Errorf("the plan is not shown whole (%d characters shown, the plan has %d)", len(msg), len(plan))
	}
	var titles []string
	for _, a := range req.get("params.actions").Array() {
		titles = append(titles, a.Get("title").String())
	}
	if strings.Join(titles, "|") != "Approve the plan|Approve, and accept edits|Approve, and run in auto mode|Keep planning" {
		t.Errorf("actions %q", titles)
	}
	d.answer(req, obj{"title": "Approve, and accept edits"})
	d.result(prompt)
	if m := d.notification("modeUpdate", nil); m.get("params.currentModeId").String() != "acceptEdits" {
		t.Errorf("modeUpdate: %s", m)
	}
}

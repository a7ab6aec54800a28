// This file tests agent files through the real daemon (issue 39): agents/list (an
// untrusted folder's agents ignored, then used once trusted), task's enum and description
// naming them, and a .claude/agents/reviewer.md with tools: Read, Grep and model: inherit
// running as task {agent: "reviewer"} with only read and grep, its body in the child's
// system prompt, on the parent's model.

package rpc

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestAgentsNative(t *testing.T) {
	env, home, _ := homeEnv(t)
	wsWriteFile(t, filepath.Join(home, ".claude", "agents", "writer.md"), "---\nname: writer\ndescription: Writes docs\nmodel: opus\n---\nWRITER PROMPT\n")
	_, ws := newWorkspaceDir(t, map[string]string{
		".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep, Task\nmodel: inherit\npermissionMode: bypassPermissions\n---\nREVIEWER PROMPT: look for bugs only.\n",
		"main.go":                    "package main\n",
	})
	srv := newFakeOpenAI(t,
		callsAnswer([3]string{"t1", "task", `{"description":"review","prompt":"review main.go","agent":"reviewer"}`}),
		sseAnswer(textAnswer("no bugs")...),
		sseAnswer(textAnswer("all reviewed")...),
	)
	d := startProcess(t, processOptions{Env: append(env, e2eEnv...)})
	initWorkspace(d, obj{}, ws)

	// Untrusted: listed, not used.
	sid0 := d.newSession(obj{"cwd": ws, "model": e2eModel(srv)})
	list := d.call("agents/list", obj{"sessionId": sid0})
	rev := list.Get(`agents.#(name=="reviewer")`)
	if rev.Get("source").String() != "workspace" || !strings.Contains(rev.Get("ignored").String(), "not trusted") || rev.Get("path").String() != filepath.Join(ws, ".claude/agents/reviewer.md") {
		t.Errorf("the untrusted folder's reviewer: %s", list.Raw)
	}
	if w := list.Get(`agents.#(name=="writer")`); w.Get("source").String() != "user" || w.Get("ignored").Exists() {
		t.Errorf("the person's writer: %s", list.Raw)
	}
	d.call("session/close", obj{"sessionId": sid0})

	if r := d.call("trust/grant", obj{"folder": ws}); r.Raw != "null" {
		t.Fatalf("trust/grant: %s", r.Raw)
	}
	sid := d.newSession(obj{"cwd": ws, "model": e2eModel(srv)})
	list = d.call("agents/list", obj{"sessionId": sid})
	rev = list.Get(`agents.#(name=="reviewer")`)
	if rev.Get("ignored").Exists() || !strings.Contains(rev.Get("warnings").Raw, "permissionMode") {
		t.Errorf("the trusted reviewer must be used, its permissionMode named in warnings: %s", rev.Raw)
	}
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "review"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (parent, child, parent)", len(reqs))
	}
	// The parent's task names the agents.
	task := gjson.GetBytes(reqs[0].body, `tools.#(function.name=="task").function.parameters.properties.agent`)
	var enum []string
	for _, e := range task.Get("enum").Array() {
		enum = append(enum, e.String())
	}
	if !slices.Equal(enum, []string{"explore", "general", "reviewer", "writer"}) || !strings.Contains(task.Get("description").String(), "reviewer: Reviews code for bugs") {
		t.Errorf("task's agent: %s", task.Raw)
	}
	// The child: only read and grep, the agent's prompt after pid's, the parent's model.
	var names []string
	for _, tl := range gjson.GetBytes(reqs[1].body, "tools").Array() {
		names = append(names, tl.Get("function.name").String())
	}
	if !slices.Equal(names, []string{"read", "grep"}) {
		t.Errorf("the reviewer's tools = %v, want [read grep]", names)
	}
	sys := gjson.GetBytes(reqs[1].body, "messages.0.content").String()
	if i := strings.Index(sys, "REVIEWER PROMPT: look for bugs only."); i < 0 || i < len(sys)/2 {
		t.Errorf("the reviewer's body must end the child's system prompt:\n%s", sys)
	}
	if m := gjson.GetBytes(reqs[1].body, "model").String(); m != "test-model" {
		t.Errorf("the child's model %q, want the parent's (inherit)", m)
	}
	if got := toolMessage(reqs[2].body, "t1"); !strings.Contains(got, "no bugs") {
		t.Errorf("task's result: %q", got)
	}
	// The Task tool of its file was left out, and said so in the task's progress.
	progress := ""
	for _, m := range d.notes(sid) {
		if m.method() == "$/toolUpdate" {
			progress += m.get("params").Raw + "\n"
		}
	}
	if !strings.Contains(progress, "Task is left out") {
		t.Errorf("the task's progress does not say Task was left out:\n%s", progress)
	}
}

// This file tests writing subagents in git worktrees of their own through the real daemon
// and a real git repository (issue 39): two general children of one batch edit one file in
// different places (one of them a line only the main tree's uncommitted change has): both
// work in worktrees, both merge, the file holds both changes, the checkpoint lists it and a
// rewind takes both back, no worktree or branch is left; two children changing one line:
// the second to finish conflicts, the file keeps the first's change, and its result names
// the conflict and where its worktree is kept.

package rpc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/worktree"
)

// gitRepo makes ws a git repository whose one commit holds files.
func gitRepo(t *testing.T, ws string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		wsWriteFile(t, filepath.Join(ws, name), content)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "start"}} {
		gitIn(t, ws, args...)
	}
}

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// childEdits is a child's script: read f.txt, replace old with new, answer.
func childEdits(id, old, new string) obj {
	return scriptModel(
		turn(toolCall("r-"+id, "read", obj{"path": "f.txt"})),
		turn(toolCall("e-"+id, "edit", obj{"path": "f.txt", "edits": []obj{{"oldText": old, "newText": new}}})),
		turn(text("edited "+id)))
}

// taskResult returns the toolEnd params of the task call id.
func taskResult(d *daemon, sid, id string) gjson.Result {
	for _, m := range d.notes(sid) {
		if m.method() == "toolEnd" && m.get("params.toolCallId").String() == id {
			return m.get("params")
		}
	}
	return gjson.Result{}
}

func TestWorktreesMergeBoth(t *testing.T) {
	env := sessionEnv(t)
	state := strings.TrimPrefix(env[1], "XDG_STATE_HOME=")
	_, ws := newWorkspaceDir(t, nil)
	gitRepo(t, ws, map[string]string{"f.txt": "alpha\nb\nc\nd\nepsilon\n"})
	// The main tree's uncommitted change: the second child edits what only it has.
	wsWriteFile(t, filepath.Join(ws, "f.txt"), "alpha\nb\nc\nd\nuncommitted epsilon\n")
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "one", "prompt": "edit the top", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "two", "prompt": "edit the bottom", "agent": "general"})),
		turn(text("both done")))
	model["subagents"] = obj{"one": childEdits("one", "alpha\n", "ALPHA one\n"), "two": childEdits("two", "uncommitted epsilon\n", "EPSILON two\n")}
	sid := d.newSession(obj{"cwd": ws, "model": model, "mode": "acceptEdits"})
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "split"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	for _, id := range []string{"t1", "t2"} {
		r := taskResult(d, sid, id)
		if r.Get("isError").Bool() {
			t.Errorf("task %s failed: %s", id, r.Raw)
		}
		w := r.Get("result.details.worktree")
		if w.Get("applied.0.path").String() != filepath.Join(ws, "f.txt") || w.Get("applied.0.change").String() != "modified" || w.Get("conflicts").Raw != "[]" {
			t.Errorf("task %s's worktree: %s", id, r.Raw)
		}
	}
	for _, s := range subagentNotes(d, sid, "subagentStart") {
		if !strings.HasPrefix(s.Get("worktree").String(), filepath.Join(state, "pid", "worktrees", sid)+"/") {
			t.Errorf("subagentStart without its worktree: %s", s.Raw)
		}
	}
	want := "ALPHA one\nb\nc\nd\nEPSILON two\n"
	if got := wsReadFile(t, filepath.Join(ws, "f.txt")); got != want {
		t.Errorf("f.txt = %q, want both changes %q", got, want)
	}
	// No worktree, branch or folder left.
	if wl := gitIn(t, ws, "worktree", "list"); strings.Count(strings.TrimSpace(wl), "\n") != 0 {
		t.Errorf("git worktree list:\n%s", wl)
	}
	if br := gitIn(t, ws, "branch", "--list", "pid/*"); strings.TrimSpace(br) != "" {
		t.Errorf("branches left: %s", br)
	}
	if wsExists(filepath.Join(state, "pid", "worktrees", sid)) {
		t.Errorf("the session's worktrees folder is left")
	}
	// The checkpoint lists the file; a rewind takes both changes back.
	cps := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints")
	cp := cps.Get("0")
	if cp.Get("files.0.path").String() != filepath.Join(ws, "f.txt") {
		t.Fatalf("checkpoints/list: %s", cps.Raw)
	}
	rw := d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cp.Get("id").String(), "restore": "files"})
	if got := wsReadFile(t, filepath.Join(ws, "f.txt")); got != "alpha\nb\nc\nd\nuncommitted epsilon\n" {
		t.Errorf("after the rewind (%s) f.txt = %q", rw.Raw, got)
	}
}

func TestWorktreesConflict(t *testing.T) {
	env := sessionEnv(t)
	state := strings.TrimPrefix(env[1], "XDG_STATE_HOME=")
	_, ws := newWorkspaceDir(t, nil)
	gitRepo(t, ws, map[string]string{"f.txt": "a\nb\nc\nd\ne\n"})
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "one", "prompt": "change c", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "two", "prompt": "change c too", "agent": "general"})),
		turn(text("done")))
	model["subagents"] = obj{"one": childEdits("one", "c\n", "c by one\n"), "two": childEdits("two", "c\n", "c by two\n")}
	sid := d.newSession(obj{"cwd": ws, "model": model})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "split"})
	// Both children wait at their edit's approval: two first finishes.
	asks := awaitApprovals(d, 2)
	children := map[string]string{}
	for _, s := range subagentNotes(d, sid, "subagentStart") {
		children[s.Get("childSessionId").String()] = s.Get("toolCallId").String()
	}
	byCall := map[string]*wireMsg{}
	for _, a := range asks {
		byCall[children[a.get("params.sessionId").String()]] = a
	}
	d.answer(byCall["t2"], obj{"decision": "allow"})
	d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "t2" })
	d.answer(byCall["t1"], obj{"decision": "allow"})
	if r := d.result(prompt); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	if got := wsReadFile(t, filepath.Join(ws, "f.txt")); got != "a\nb\nc by two\nd\ne\n" {
		t.Errorf("f.txt = %q, want the first finisher's change", got)
	}
	r1 := taskResult(d, sid, "t1")
	w := r1.Get("result.details.worktree")
	text := r1.Get("result.content.0.text").String()
	if w.Get("conflicts.0.path").String() != filepath.Join(ws, "f.txt") || w.Get("conflicts.0.hunks.0.subagent").String() != "c by one\n" || w.Get("applied").Raw != "[]" || !strings.Contains(text, "f.txt") || !strings.Contains(text, "c by one") {
		t.Errorf("the second finisher's result must name the conflict: %s", r1.Raw)
	}
	kept := w.Get("path").String()
	if !strings.HasPrefix(kept, filepath.Join(state, "pid", "worktrees", sid)) || !wsExists(filepath.Join(kept, "f.txt")) || !strings.Contains(text, kept) {
		t.Errorf("the conflicting worktree must be kept and named: %s", r1.Raw)
	}
	if got := taskResult(d, sid, "t2").Get("result.details.worktree.applied.0.path").String(); got != filepath.Join(ws, "f.txt") {
		t.Errorf("t2's merge: %s", taskResult(d, sid, "t2").Raw)
	}
	// Deleting the session removes the kept worktree and its branch.
	d.call("session/delete", obj{"sessionId": sid})
	if wsExists(kept) || wsExists(filepath.Join(state, "pid", "worktrees", sid)) {
		t.Errorf("the kept worktree outlived its session")
	}
	if wl := gitIn(t, ws, "worktree", "list"); strings.Count(strings.TrimSpace(wl), "\n") != 0 {
		t.Errorf("git worktree list after the delete:\n%s", wl)
	}
	if br := gitIn(t, ws, "branch", "--list", "pid/*"); strings.TrimSpace(br) != "" {
		t.Errorf("branches left after the delete: %s", br)
	}
	// A bad isolation is refused.
	if code, _ := d.callErr("session/new", obj{"cwd": ws, "subagents": obj{"isolation": "sometimes"}}); code != -32602 {
		t.Errorf("subagents.isolation sometimes: code %d, want -32602", code)
	}
}

// TestWorktreesSweptAtStart: a kept worktree of a session whose file is gone (deleted while
// no pid ran) is removed, with its branch, when the next pid starts.
func TestWorktreesSweptAtStart(t *testing.T) {
	env := sessionEnv(t)
	state := strings.TrimPrefix(env[1], "XDG_STATE_HOME=")
	_, ws := newWorkspaceDir(t, nil)
	gitRepo(t, ws, map[string]string{"f.txt": "a\n"})
	kept := filepath.Join(state, "pid", "worktrees", "0gonesession", "0child")
	t.Setenv("XDG_STATE_HOME", state)
	tree, err := worktree.Create(context.Background(), worktree.Options{Folder: ws, Dir: kept, ID: "0child"})
	if err != nil {
		t.Fatal(err)
	}
	wsWriteFile(t, filepath.Join(tree.Path, "f.txt"), "changed in the kept worktree\n")
	if wl := gitIn(t, ws, "worktree", "list"); strings.Count(strings.TrimSpace(wl), "\n") != 1 {
		t.Fatalf("the kept worktree is not there to sweep:\n%s", wl)
	}
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	if wsExists(kept) || wsExists(filepath.Dir(kept)) {
		t.Errorf("the kept worktree of a gone session is left after the start")
	}
	if wl := gitIn(t, ws, "worktree", "list"); strings.Count(strings.TrimSpace(wl), "\n") != 0 {
		t.Errorf("git worktree list after the start:\n%s", wl)
	}
	if br := gitIn(t, ws, "branch", "--list", "pid/*"); strings.TrimSpace(br) != "" {
		t.Errorf("branches left after the start: %s", br)
	}
	if got := wsReadFile(t, filepath.Join(ws, "f.txt")); got != "a\n" {
		t.Errorf("the main tree changed: %q", got)
	}
}

// TestWorktreeChildInstructions: with "isolation": "worktree" a single general child works in
// a worktree, and gets the repository's AGENTS.md (its worktree's copy) as a child in the
// trusted folder would.
func TestWorktreeChildInstructions(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	gitRepo(t, ws, map[string]string{"AGENTS.md": "REPO RULES: tabs only.\n", "f.txt": "a\n"})
	srv := newFakeOpenAI(t,
		callsAnswer([3]string{"t1", "task", `{"description":"one","prompt":"look","agent":"general"}`}),
		sseAnswer(textAnswer("looked")...),
		sseAnswer(textAnswer("done")...),
	)
	d := startProcess(t, processOptions{Env: append(sessionEnv(t), e2eEnv...)})
	initWorkspace(d, obj{}, ws)
	d.call("trust/grant", obj{"folder": ws})
	sid := d.newSession(obj{"cwd": ws, "model": e2eModel(srv), "subagents": obj{"isolation": "worktree"}})
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "go"}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	starts := subagentNotes(d, sid, "subagentStart")
	if len(starts) != 1 || starts[0].Get("worktree").String() == "" {
		t.Fatalf("the child must work in a worktree: %v", starts)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if sys := gjson.GetBytes(reqs[1].body, "messages.0.content").String(); !strings.Contains(sys, "REPO RULES: tabs only.") {
		t.Errorf("the worktree child's system prompt lacks the repository's AGENTS.md:\n%s", sys)
	}
}

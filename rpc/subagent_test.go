// This file tests subagents through the real daemon: a parent's three task calls run their
// children at once (each held at its approval, asked with its own sessionId and its
// parent's), end in completion order and give their results in source order;
// maxConcurrent holds the third; an explore child cannot change files; two general children
// cannot change one file at once; a cancel ends the children; a child is saved and loads.

package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// childWrites is a child's script: write NAME, then answer ANSWER.
func childWrites(name, answer string) obj {
	return scriptModel(turn(toolCall("w-"+name, "write", obj{"path": name, "content": name + "\n"})), turn(text(answer)))
}

// approvals returns the beforeToolCall requests received so far.
func approvals(d *daemon) []*wireMsg {
	var out []*wireMsg
	for _, m := range d.snapshot() {
		if m.isRequest() && m.method() == "beforeToolCall" {
			out = append(out, m)
		}
	}
	return out
}

// awaitApprovals waits until n beforeToolCall requests have arrived and returns them.
func awaitApprovals(d *daemon, n int) []*wireMsg {
	d.await(fmt.Sprintf("%d approvals", n), func(*wireMsg) bool { return len(approvals(d)) >= n })
	return approvals(d)
}

func subagentNotes(d *daemon, sid, method string) []gjson.Result {
	var out []gjson.Result
	for _, m := range d.notes(sid) {
		if m.method() == method {
			out = append(out, m.get("params"))
		}
	}
	return out
}

func TestSubagentsRunInParallel(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "one", "prompt": "write one", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "two", "prompt": "write two", "agent": "general"}),
			toolCall("t3", "task", obj{"description": "three", "prompt": "write three", "agent": "general"})),
		turn(text("all done")))
	model["subagents"] = obj{"one": childWrites("one.txt", "wrote one"), "two": childWrites("two.txt", "wrote two"), "three": childWrites("three.txt", "wrote three")}
	sid := d.newSession(obj{"cwd": ws, "model": model})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "split the work"})

	// All three children are running at once: each waits for its approval.
	asks := awaitApprovals(d, 3)
	starts := subagentNotes(d, sid, "subagentStart")
	children := map[string]string{} // child session -> task call
	for _, s := range starts {
		children[s.Get("childSessionId").String()] = s.Get("toolCallId").String()
		if s.Get("agent").String() != "general" || s.Get("description").String() == "" {
			t.Errorf("subagentStart: %s", s.Raw)
		}
	}
	if len(children) != 3 {
		t.Fatalf("subagentStart for %d children, want 3: %v", len(children), starts)
	}
	byCall := map[string]*wireMsg{}
	for _, a := range asks {
		child := a.get("params.sessionId").String()
		if a.get("params.parentSessionId").String() != sid || children[child] == "" {
			t.Errorf("a child's approval must carry its own sessionId and its parent's: %s", a)
		}
		byCall[children[child]] = a
	}
	// Answer in the order t3, t1, t2: the task calls end in that order.
	for _, id := range []string{"t3", "t1", "t2"} {
		d.answer(byCall[id], obj{"decision": "allow"})
		d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == id })
	}
	res := d.result(prompt)
	if res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", res.Raw)
	}
	var ends []string
	for _, m := range d.notes(sid) {
		if m.method() == "toolEnd" {
			ends = append(ends, m.get("params.toolCallId").String())
		}
	}
	if !slices.Equal(ends, []string{"t3", "t1", "t2"}) {
		t.Errorf("toolEnd order %v, want completion order t3 t1 t2", ends)
	}
	var results []string
	for _, m := range d.notes(sid) {
		if m.method() == "turnEnd" && len(m.get("params.toolResults").Array()) == 3 {
			for _, r := range m.get("params.toolResults").Array() {
				results = append(results, r.Get("toolCallId").String()+"="+r.Get("content.0.text").String())
			}
		}
	}
	if !slices.Equal(results, []string{"t1=wrote one", "t2=wrote two", "t3=wrote three"}) {
		t.Errorf("results %v, want source order with each child's answer", results)
	}
	if n := len(subagentNotes(d, sid, "subagentEnd")); n != 3 {
		t.Errorf("%d subagentEnd, want 3", n)
	}
	for _, f := range []string{"one.txt", "two.txt", "three.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("a child did not write %s: %v", f, err)
		}
	}
	// The children are saved sessions naming their parent, and load.
	list := d.call("session/list", obj{}).Get("sessions").Array()
	kids := 0
	var kid string
	for _, s := range list {
		if s.Get("parentSessionId").String() == sid {
			kids++
			kid = s.Get("sessionId").String()
		}
	}
	if kids != 3 {
		t.Errorf("session/list shows %d sessions whose parent is %s, want 3", kids, sid)
	}
	if kid != "" {
		msgs := d.call("session/load", obj{"sessionId": kid}).Get("messages").Array()
		if len(msgs) == 0 || !strings.HasPrefix(msgs[0].Get("content.0.text").String(), "write ") {
			t.Errorf("loading a child: %v", msgs)
		}
	}
}

func TestSubagentsMaxConcurrent(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "one", "prompt": "p", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "two", "prompt": "p", "agent": "general"}),
			toolCall("t3", "task", obj{"description": "three", "prompt": "p", "agent": "general"})),
		turn(text("done")))
	model["subagents"] = obj{"one": childWrites("one.txt", "1"), "two": childWrites("two.txt", "2"), "three": childWrites("three.txt", "3")}
	sid := d.newSession(obj{"cwd": ws, "model": model, "subagents": obj{"maxConcurrent": 2}})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	asks := awaitApprovals(d, 2)
	// The third task has not started: its toolExecutionStart would have been sent before
	// the first two began, had it been granted a slot.
	for _, m := range d.notes(sid) {
		if m.method() == "toolExecutionStart" && m.get("params.toolCallId").String() == "t3" {
			t.Fatalf("the third task started although maxConcurrent is 2")
		}
	}
	if n := len(subagentNotes(d, sid, "subagentStart")); n != 2 {
		t.Errorf("%d children started, want 2", n)
	}
	d.answer(asks[0], obj{"decision": "allow"})
	asks = awaitApprovals(d, 3) // the third starts once a slot is free
	d.answer(asks[1], obj{"decision": "allow"})
	d.answer(asks[2], obj{"decision": "allow"})
	if res := d.result(prompt); res.Get("stopReason").String() != "stop" {
		t.Errorf("prompt: %s", res.Raw)
	}
}

func TestExploreChildCannotChangeFiles(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "a\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(turn(toolCall("t1", "task", obj{"description": "look", "prompt": "look around"})), turn(text("done")))
	model["subagents"] = obj{"look": scriptModel(
		turn(toolCall("w", "write", obj{"path": "x.txt", "content": "x"})),
		turn(toolCall("b", "bash", obj{"command": "echo y > y.txt"})),
		turn(toolCall("r", "read", obj{"path": "a.txt"})),
		turn(text("explored")))}
	sid := d.newSession(obj{"cwd": ws, "model": model, "permissions": obj{"default": "allow"}})
	d.call("session/prompt", obj{"sessionId": sid, "text": "explore"})
	for _, f := range []string{"x.txt", "y.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("an explore child created %s", f)
		}
	}
	e := toolEnds(d, sid)["t1"]
	if e.Get("isError").Bool() || e.Get("result.content.0.text").String() != "explored" || e.Get("result.details.toolCalls").Int() != 3 {
		t.Errorf("the task's result: %s", e.Raw)
	}
	updates := 0
	for _, m := range d.notes(sid) {
		if m.method() == "$/toolUpdate" && m.get("params.toolCallId").String() == "t1" && m.get("params.partialResult.details.childSessionId").String() != "" {
			updates++
		}
	}
	if updates == 0 {
		t.Errorf("no progress of the child reached the task call")
	}
}

func TestGeneralChildrenDoNotWriteOneFileAtOnce(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "first writer", "prompt": "p", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "second writer", "prompt": "p", "agent": "general"})),
		turn(text("done")))
	model["subagents"] = obj{
		"first writer": scriptModel(turn(toolCall("a1", "write", obj{"path": "f.txt", "content": "A\n"})),
			turn(toolCall("a2", "write", obj{"path": "g.txt", "content": "A\n"})), turn(text("A done"))),
		"second writer": scriptModel(turn(toolCall("b1", "write", obj{"path": "f.txt", "content": "B\n"})), turn(text("B done"))),
	}
	sid := d.newSession(obj{"cwd": ws, "model": model})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	asks := awaitApprovals(d, 2)
	ask := map[string]*wireMsg{}
	for _, a := range asks {
		ask[a.get("params.toolCallId").String()] = a
	}
	d.answer(ask["a1"], obj{"decision": "allow"}) // A writes f.txt, then asks about g.txt
	a2 := d.serverRequest("beforeToolCall", "a2")
	d.answer(ask["b1"], obj{"decision": "allow"}) // B's write of f.txt, while A still runs
	d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "b1" })
	d.answer(a2, obj{"decision": "allow"})
	d.result(prompt)
	var b1 gjson.Result
	for _, m := range d.snapshot() {
		if m.method() == "toolEnd" && m.get("params.toolCallId").String() == "b1" {
			b1 = m.get("params")
		}
	}
	if !b1.Get("isError").Bool() || !strings.Contains(b1.Get("result.content.0.text").String(), `"first writer"`) {
		t.Errorf("the second child's write of the file the first changed: %s", b1.Raw)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(data) != "A\n" {
		t.Errorf("f.txt = %q, want the first child's", data)
	}
}

func TestCancelEndsChildren(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("t1", "task", obj{"description": "one", "prompt": "p", "agent": "general"}),
			toolCall("t2", "task", obj{"description": "two", "prompt": "p", "agent": "general"})),
		turn(text("done")))
	model["subagents"] = obj{"one": childWrites("one.txt", "1"), "two": childWrites("two.txt", "2")}
	sid := d.newSession(obj{"cwd": ws, "model": model})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	awaitApprovals(d, 2)
	d.cancel(prompt)
	d.response(prompt)
	ends := subagentNotes(d, sid, "subagentEnd")
	if len(ends) != 2 {
		t.Fatalf("%d subagentEnd after the cancel, want 2", len(ends))
	}
	for _, e := range ends {
		if e.Get("stopReason").String() != "aborted" {
			t.Errorf("subagentEnd after a cancel: %s", e.Raw)
		}
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("a cancelled child wrote %s", f)
		}
	}
}

func TestChildTurnLimit(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(turn(toolCall("t1", "task", obj{"description": "loop", "prompt": "p"})), turn(text("done")))
	var turns []obj
	for i := range 6 {
		turns = append(turns, turn(toolCall(fmt.Sprintf("l%d", i), "ls", obj{"path": "."})))
	}
	model["subagents"] = obj{"loop": scriptModel(append(turns, turn(text("never")))...)}
	sid := d.newSession(obj{"cwd": ws, "model": model, "subagents": obj{"maxTurns": 2}})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	e := toolEnds(d, sid)["t1"]
	if !e.Get("isError").Bool() || !strings.Contains(e.Get("result.content.0.text").String(), "stopped after 2 turns") {
		t.Errorf("a child past its turn limit: %s", e.Raw)
	}
	ends := subagentNotes(d, sid, "subagentEnd")
	if len(ends) != 1 || ends[0].Get("stopReason").String() != "maxTurns" {
		t.Errorf("subagentEnd: %v", ends)
	}
}

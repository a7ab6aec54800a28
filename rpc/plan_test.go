// This file tests, through the real daemon, the plan (issue 24): todo_write runs without
// asking in every mode, planUpdate follows each change (source order in a batch), a failed
// call changes nothing, session/load sends the last plan after its answer; what a
// compaction keeps word for word (the latest request, the plan, the files' paths) in the
// request the model gets next, and compactionEnd's summary and kept; and usageUpdate with
// the context meter and the cost.

package rpc

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// planEntry is a todo_write entry.
func planEntry(content, status, priority string) obj {
	e := obj{"content": content, "status": status}
	if priority != "" {
		e["priority"] = priority
	}
	return e
}

// methodsOf returns the methods of the notifications of sid, in order.
func methodsOf(d *daemon, sid string, keep ...string) []string {
	var out []string
	for _, m := range d.notes(sid) {
		if slices.Contains(keep, m.method()) {
			out = append(out, m.method()+" "+m.get("params.toolCallId").String())
		}
	}
	return out
}

func TestPlanTodoWrite(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\n"})
	d := startProcess(t, processOptions{Env: env})
	// The editor answers beforeToolCall: any question about todo_write would show.
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	first := []obj{planEntry("Read a.txt", "in_progress", "high"), planEntry("Change it", "pending", "")}
	second := []obj{planEntry("Read a.txt", "completed", "high"), planEntry("Change it", "in_progress", "low")}
	// Plan mode: nothing may change files, and the plan still runs without asking.
	sid := d.newSession(obj{"cwd": ws, "mode": "plan", "model": scriptModel(
		turn(toolCall("t1", "todo_write", obj{"todos": first}), toolCall("r1", "read", obj{"path": "a.txt"}), toolCall("t2", "todo_write", obj{"todos": second})),
		turn(toolCall("t3", "todo_write", obj{"todos": []obj{{"content": "x", "status": "started"}}})),
		turn(text("planned")),
	)})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "plan it"})
	if res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s\n%s", res.Raw, d.dump())
	}
	for _, m := range d.snapshot() {
		if m.isRequest() && m.method() == "beforeToolCall" {
			t.Errorf("todo_write asked the editor: %s", m)
		}
	}
	for _, r := range res.Get(`messages.#(role=="toolResult")#`).Array() {
		id, isErr := r.Get("toolCallId").String(), r.Get("isError").Bool()
		switch id {
		case "t1", "t2":
			if isErr || !strings.Contains(r.Get("content.0.text").String(), "The plan was saved") {
				t.Errorf("result of %s: %s", id, r.Raw)
			}
		case "t3":
			if !isErr {
				t.Errorf("a todo_write with an unknown status did not fail: %s", r.Raw)
			}
		}
	}
	// planUpdate right after the toolEnd of each call that changed the plan, in source
	// order (the calls share the plan as their resource); none for the failed call.
	// (r1 runs alongside the plan's calls: where its end falls is not fixed.)
	got := slices.DeleteFunc(methodsOf(d, sid, "toolEnd", "planUpdate"), func(s string) bool { return s == "toolEnd r1" })
	want := []string{"toolEnd t1", "planUpdate ", "toolEnd t2", "planUpdate ", "toolEnd t3"}
	if !slices.Equal(got, want) {
		t.Errorf("toolEnd and planUpdate order = %q, want %q", got, want)
	}
	var plans []string
	for _, m := range d.notes(sid) {
		if m.method() == "planUpdate" {
			plans = append(plans, compactJSON(m.get("params.entries").Raw))
		}
	}
	wantFirst := `[{"content":"Read a.txt","status":"in_progress","priority":"high"},{"content":"Change it","status":"pending","priority":"medium"}]`
	wantSecond := `[{"content":"Read a.txt","status":"completed","priority":"high"},{"content":"Change it","status":"in_progress","priority":"low"}]`
	if !slices.Equal(plans, []string{wantFirst, wantSecond}) {
		t.Errorf("planUpdate entries = %q, want the first plan (priority medium by default), then the second", plans)
	}
	tl := d.call("tools/list", obj{"sessionId": sid})
	if src := tl.Get(`tools.#(name=="todo_write").source`).String(); src != "builtin" {
		t.Errorf("tools/list: todo_write source %q, want builtin (%s)", src, tl.Raw)
	}
	d.call("shutdown", omit)
	d.notify("exit", omit)
	d.wait()

	// Another daemon loads the session: its last plan comes after the answer.
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	loadID := d2.request("session/load", obj{"sessionId": sid})
	note := d2.await("planUpdate", func(m *wireMsg) bool { return m.method() == "planUpdate" })
	resp := d2.response(loadID)
	if note.seq < resp.seq {
		t.Errorf("planUpdate came before session/load's answer")
	}
	if got := compactJSON(note.get("params.entries").Raw); got != wantSecond || note.get("params.sessionId").String() != sid {
		t.Errorf("planUpdate after load = %s, want the session's last plan %s", note, wantSecond)
	}
	// A fork before the second call has the first plan, sent after its answer too: the
	// items are the user message, the assistant's batch and its three results.
	forkID := d2.request("session/fork", obj{"sessionId": sid, "messageCount": 5})
	forked := d2.response(forkID)
	fsid := forked.get("result.sessionId").String()
	fnote := d2.notification("planUpdate", func(m *wireMsg) bool { return m.get("params.sessionId").String() == fsid })
	if fnote.seq < forked.seq {
		t.Errorf("the fork's planUpdate came before its answer")
	}
	if got := compactJSON(fnote.get("params.entries").Raw); got != wantSecond {
		t.Errorf("planUpdate after a fork of the whole first turn = %s, want %s", got, wantSecond)
	}
	forkID = d2.request("session/fork", obj{"sessionId": sid, "messageCount": 1})
	forked = d2.response(forkID)
	fsid = forked.get("result.sessionId").String()
	d2.call("tools/list", obj{"sessionId": fsid}) // answered after anything the fork sent
	for _, m := range d2.notes(fsid) {
		if m.method() == "planUpdate" {
			t.Errorf("a fork before any todo_write sent %s", m)
		}
	}
}

// TestPlanNoneOnLoad: a session that never wrote a plan gets no planUpdate on load.
func TestPlanNoneOnLoad(t *testing.T) {
	env := sessionEnv(t)
	d := startProcess(t, processOptions{Env: env})
	d.initialize(nil)
	sid := d.newSession(obj{"model": scriptModel(turn(text("hi")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "hello"})
	d.call("session/close", obj{"sessionId": sid})
	d.call("session/load", obj{"sessionId": sid})
	// A request answered after the load's: anything the load sent came before it.
	d.call("tools/list", obj{"sessionId": sid})
	for _, m := range d.snapshot() {
		if m.method() == "planUpdate" {
			t.Errorf("a session without a plan sent %s", m)
		}
	}
}

// bodyMessages returns the messages of a recorded chat-completions request.
func bodyMessages(body []byte) []gjson.Result {
	return gjson.GetBytes(body, "messages").Array()
}

// messageText is the text of a chat-completions message: its content string, or its text
// parts joined by line breaks.
func messageText(m gjson.Result) string {
	c := m.Get("content")
	if c.Type == gjson.String {
		return c.String()
	}
	var parts []string
	for _, p := range c.Array() {
		if p.Get("type").String() == "text" {
			parts = append(parts, p.Get("text").String())
		}
	}
	return strings.Join(parts, "\n")
}

func TestCompactionKeepsRequestPlanFiles(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\n", "notes/b.txt": "beta\n"})
	const request = "Rename every alpha to ALPHA in a.txt, and keep notes/b.txt as it is. ZEBRA-7"
	plan := []obj{planEntry("Read the files", "completed", "high"), planEntry("Rename alpha", "in_progress", "")}
	srv := newFakeOpenAI(t,
		sseAnswer(textAnswer("## Goal\nRename alpha. SUMMARY-MARK")...), // the summary request
		sseAnswer(textAnswer("going on")...),                            // the next model call
		sseAnswer(textAnswer("after the load")...),                      // the same call, after a reload
	)
	d := startProcess(t, processOptions{Env: append(env, e2eEnv...)})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"cwd": ws, "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "a.txt"}), toolCall("r2", "read", obj{"path": "notes/b.txt"})),
		turn(toolCall("w1", "write", obj{"path": "a.txt", "content": "ALPHA\n"}), toolCall("t1", "todo_write", obj{"todos": plan})),
		turn(text("half done")),
	)})
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": request}); r.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s", r.Raw)
	}
	// The real provider at the local server, keeping as little as possible word for word.
	model := e2eModel(srv)
	model["compaction"] = obj{"keepRecentTokens": 1}
	d.call("session/setModel", obj{"sessionId": sid, "model": model})
	comp := d.call("session/compact", obj{"sessionId": sid})
	if !strings.Contains(comp.Get("summary").String(), "SUMMARY-MARK") {
		t.Fatalf("session/compact: %s", comp.Raw)
	}
	end := d.notification("compactionEnd", nil)
	if got := compactJSON(end.get("params.kept").Raw); got != `{"userMessage":true,"planEntries":2,"files":["a.txt","notes/b.txt"]}` {
		t.Errorf("compactionEnd kept = %s", got)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "go on"})
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the summary and one call", len(reqs))
	}
	msgs := bodyMessages(reqs[1].body)
	// messages[0] is the system prompt; then the summary message.
	if len(msgs) < 3 {
		t.Fatalf("the call after the compaction has %d messages: %s", len(msgs), reqs[1].body)
	}
	seen := messageText(msgs[1])
	for _, want := range []string{"SUMMARY-MARK", request, "[completed] Read the files (priority high)", "[in_progress] Rename alpha (priority medium)", "- a.txt", "- notes/b.txt"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the message after the summary lacks %q:\n%s", want, seen)
		}
	}
	// The request is quoted once: the summary took it away from the conversation.
	if n := strings.Count(string(reqs[1].body), "ZEBRA-7"); n != 1 {
		t.Errorf("the latest request appears %d times in the call after the compaction, want 1", n)
	}
	// compactionEnd's summary is the text the model now sees.
	if got := end.get("params.summary").String(); got != seen {
		t.Errorf("compactionEnd summary differs from what the model got:\n%s\n---\n%s", got, seen)
	}

	// A daemon that loads the session sends the same summary message, byte for byte.
	d.call("shutdown", omit)
	d.notify("exit", omit)
	d.wait()
	d2 := startProcess(t, processOptions{Env: append(env, e2eEnv...)})
	initWorkspace(d2, obj{}, ws)
	d2.call("session/load", obj{"sessionId": sid})
	d2.call("session/prompt", obj{"sessionId": sid, "text": "go on"})
	reqs = srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests after the reload, want 3", len(reqs))
	}
	if a, b := bodyMessages(reqs[1].body)[1].Raw, bodyMessages(reqs[2].body)[1].Raw; a != b {
		t.Errorf("the summary message changed with the reload:\n%s\n---\n%s", a, b)
	}
}

func TestUsageUpdate(t *testing.T) {
	srv := newFakeOpenAI(t,
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "one"}, nil), sseChunk(obj{}, "stop"), sseUsage(1000, 400, 50), sseDone),
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "two"}, nil), sseChunk(obj{}, "stop"), sseUsage(2000, 1000, 100), sseDone),
	)
	d := startProcess(t, processOptions{Env: append(sessionEnv(t), e2eEnv...)})
	d.initialize(map[string]any{"usage": true})
	model := e2eModel(srv)
	model["contextWindow"] = 200000
	model["price"] = obj{"input": 3, "output": 15, "cacheRead": 0.3}
	sid := d.newSession(obj{"model": model})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "second"})
	var ups []*wireMsg
	for _, m := range d.notes(sid) {
		if m.method() == "usageUpdate" {
			ups = append(ups, m)
		}
	}
	if len(ups) != 2 {
		t.Fatalf("%d usageUpdate, want one per model call:\n%s", len(ups), d.dump())
	}
	// Input is the prompt less what was cached.
	cost1 := (600*3 + 50*15 + 400*0.3) / 1e6
	cost2 := cost1 + (1000*3+100*15+1000*0.3)/1e6
	for i, c := range []struct{ used, cost float64 }{{1050, cost1}, {2100, cost2}} {
		u := ups[i]
		if u.get("params.used").Float() != c.used || u.get("params.size").Int() != 200000 || u.get("params.cost.currency").String() != "USD" ||
			math.Abs(u.get("params.cost.amount").Float()-c.cost) > 1e-12 {
			t.Errorf("usageUpdate %d = %s, want used %v, size 200000, cost %v USD", i, u, c.used, c.cost)
		}
	}
	// Each comes right after its assistant message's messageEnd.
	notes := d.notes(sid)
	for i, m := range notes {
		if m.method() == "usageUpdate" && (i == 0 || notes[i-1].method() != "messageEnd" || notes[i-1].get("params.message.role").String() != "assistant") {
			t.Errorf("usageUpdate does not follow an assistant's messageEnd: %s", m)
		}
	}
}

// TestUsageUpdateEstimatedNoPrice: a model that reports no usage gets an estimate; one
// without a price no cost; an editor that did not declare usage gets none.
func TestUsageUpdateEstimatedNoPrice(t *testing.T) {
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	d.initialize(map[string]any{"usage": true})
	sid := d.newSession(obj{"model": obj{"provider": "script", "contextWindow": 5000, "turns": []obj{turn(text(strings.Repeat("word ", 200)))}}})
	d.call("session/prompt", obj{"sessionId": sid, "text": "hi"})
	u := d.notification("usageUpdate", nil)
	// 1000 characters of answer and 2 of prompt: about 251 tokens.
	if used := u.get("params.used").Int(); used < 250 || used > 260 || u.get("params.size").Int() != 5000 || u.get("params.cost").Exists() {
		t.Errorf("usageUpdate = %s, want an estimate of about 251 tokens, size 5000, no cost", u)
	}

	// An editor that declared nothing gets it too: the issue names no capability.
	d2 := startProcess(t, processOptions{Env: sessionEnv(t)})
	d2.initialize(nil)
	sid2 := d2.newSession(obj{"model": scriptModel(turn(text("hi")))})
	d2.call("session/prompt", obj{"sessionId": sid2, "text": "hi"})
	if u := d2.notification("usageUpdate", nil); u.get("params.sessionId").String() != sid2 || u.get("params.size").Int() == 0 {
		t.Errorf("usageUpdate to an editor that declared nothing: %s", u)
	}
}

// TestPlanRewound: a rewind of the conversation takes the plan back to the one of its
// point, and says so with planUpdate after its answer.
func TestPlanRewound(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	planA := []obj{planEntry("First plan", "in_progress", "")}
	planB := []obj{planEntry("Second plan", "pending", "high")}
	sid := d.newSession(obj{"cwd": ws, "model": scriptModel(
		turn(toolCall("a1", "todo_write", obj{"todos": planA})), turn(text("one")),
		turn(toolCall("b1", "todo_write", obj{"todos": planB})), turn(text("two")),
	)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "second"})
	cps := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(cps) != 2 {
		t.Fatalf("checkpoints: %d, want 2", len(cps))
	}
	id := d.request("session/rewind", obj{"sessionId": sid, "checkpointId": cps[1].Get("id").String(), "restore": "conversation"})
	resp := d.response(id)
	note := d.notification("planUpdate", func(m *wireMsg) bool { return m.seq > resp.seq })
	if got := compactJSON(note.get("params.entries").Raw); got != `[{"content":"First plan","status":"in_progress","priority":"medium"}]` {
		t.Errorf("planUpdate after the rewind = %s, want the first plan", got)
	}
	// A rewind to before any plan clears it.
	id = d.request("session/rewind", obj{"sessionId": sid, "checkpointId": cps[0].Get("id").String(), "restore": "conversation"})
	resp = d.response(id)
	note = d.notification("planUpdate", func(m *wireMsg) bool { return m.seq > resp.seq })
	if got := note.get("params.entries").Raw; got != `[]` {
		t.Errorf("planUpdate after a rewind to before any plan = %s, want []", got)
	}
}

// The cost counts everything the session paid for: a loaded session's includes the calls of
// a branch a rewind took back (its file keeps them), not only the branch it goes on from.
func TestUsageCostKeepsRewoundCallsAfterLoad(t *testing.T) {
	srv := newFakeOpenAI(t,
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "one"}, nil), sseChunk(obj{}, "stop"), sseUsage(1000, 0, 100), sseDone),
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "two"}, nil), sseChunk(obj{}, "stop"), sseUsage(2000, 0, 200), sseDone),
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "three"}, nil), sseChunk(obj{}, "stop"), sseUsage(3000, 0, 300), sseDone),
	)
	d := startProcess(t, processOptions{Env: append(sessionEnv(t), e2eEnv...)})
	d.initialize(map[string]any{"usage": true})
	model := e2eModel(srv)
	model["price"] = obj{"input": 1, "output": 10}
	sid := d.newSession(obj{"model": model, "cwd": t.TempDir()})
	d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
	d.call("session/prompt", obj{"sessionId": sid, "text": "second"})
	cps := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(cps) != 2 {
		t.Fatalf("%d checkpoints, want 2", len(cps))
	}
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": cps[1].Get("id").String(), "restore": "conversation"})
	d.call("session/close", obj{"sessionId": sid})
	d.call("session/load", obj{"sessionId": sid})
	d.call("session/prompt", obj{"sessionId": sid, "text": "third"})
	var last *wireMsg
	for _, m := range d.notes(sid) {
		if m.method() == "usageUpdate" {
			last = m
		}
	}
	want := (1000*1 + 100*10 + 2000*1 + 200*10 + 3000*1 + 300*10) / 1e6
	if last == nil || math.Abs(last.get("params.cost.amount").Float()-want) > 1e-12 {
		t.Fatalf("the cost after the load = %v, want %v (the rewound call included)", last, want)
	}
}

// Tests of prompt turns: message and thought chunks, stop reasons, tool calls and their
// updates in completion order, permission requests, cancellation, and the rule that no
// update follows a prompt's response.

package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestPromptChunksAndStopReasons(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	sid := c.newSession(dir, script("",
		`{"content":[{"type":"thinking","thinking":"Let me think."},{"type":"text","text":"Hello, "},{"type":"text","text":"world."}]}`,
		`{"content":[{"type":"text","text":"cut"}],"stopReason":"length"}`,
		`{"content":[],"stopReason":"error","errorMessage":"the provider said no"}`,
	))
	res, before := c.result(c.prompt(sid, "hi"), nil)
	if got := res.Get("stopReason").String(); got != "end_turn" {
		t.Errorf("stopReason %q, want end_turn", got)
	}
	var kinds, texts []string
	for _, u := range updates(t, sid, before) {
		kinds = append(kinds, u.Get("sessionUpdate").String())
		texts = append(texts, u.Get("content.text").String())
	}
	if strings.Join(kinds, ",") != "agent_thought_chunk,agent_message_chunk,agent_message_chunk" ||
		strings.Join(texts, "|") != "Let me think.|Hello, |world." {
		t.Errorf("updates %v %q", kinds, texts)
	}
	c.quiet(50 * time.Millisecond)

	res, _ = c.result(c.prompt(sid, "more"), nil)
	if got := res.Get("stopReason").String(); got != "max_tokens" {
		t.Errorf("a turn cut at the token limit: stopReason %q, want max_tokens", got)
	}
	// A failed model call is an error response with the provider's message.
	m := c.wantError(c.prompt(sid, "again"), codeInternalError)
	if !strings.Contains(m.Error.Message, "the provider said no") {
		t.Errorf("error message %q", m.Error.Message)
	}
	// Bad prompts.
	c.wantError(c.request("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]any{"type": "text", "text": "x"}}}), codeNotFound)
	c.wantError(c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{}}), codeInvalidParams)
	c.requestID("90", "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "video"}}})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("unknown block type: %s", m.raw)
	}
	c.requestID("91", "session/prompt", map[string]any{"sessionId": sid})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("no prompt: %s", m.raw)
	}
}

func TestPromptWithoutModel(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), "")
	m := c.wantError(c.prompt(sid, "hi"), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "no model") {
		t.Errorf("message %q", m.Error.Message)
	}
	// The session is free again.
	c.wantError(c.prompt(sid, "hi"), codeAuthRequired)
}

func TestUserMessageFromContentBlocks(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"Look at this:"}`),
		json.RawMessage(`{"type":"resource_link","uri":"file:///p/src/main.go","name":"main.go"}`),
		json.RawMessage(`{"type":"resource","resource":{"uri":"file:///p/notes.md","text":"remember"}}`),
		json.RawMessage(`{"type":"resource","resource":{"uri":"file:///p/logo.png","blob":"AAAA"}}`),
		json.RawMessage(`{"type":"image","data":"iVBOR","mimeType":"image/png"}`),
	}
	m, err := userMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Look at this:", "[@main.go](file:///p/src/main.go)", "<context ref=\"file:///p/notes.md\">\nremember\n</context>", "[@logo.png](file:///p/logo.png)"}
	if len(m.Content) != 5 || m.Role != "user" {
		t.Fatalf("message %+v", m)
	}
	for i, w := range want {
		if m.Content[i].Text != w {
			t.Errorf("block %d: %q, want %q", i, m.Content[i].Text, w)
		}
	}
	if m.Content[4].Type != "image" || m.Content[4].MimeType != "image/png" || m.Content[4].Data != "iVBOR" {
		t.Errorf("image block %+v", m.Content[4])
	}
	if _, err := userMessage([]json.RawMessage{json.RawMessage(`{"type":"audio","data":"x","mimeType":"audio/wav"}`)}); err == nil {
		t.Errorf("audio was accepted though promptCapabilities.audio is false")
	}
}

// toolEvents returns the tool updates of a turn as "kind id status" lines; an update
// without a status (progress content) reads "progress".
func toolEvents(us []gjson.Result) []string {
	var out []string
	for _, u := range us {
		switch k := u.Get("sessionUpdate").String(); k {
		case "tool_call", "tool_call_update":
			status := u.Get("status").String()
			if status == "" {
				status = "progress"
			}
			out = append(out, k+" "+u.Get("toolCallId").String()+" "+status)
		}
	}
	return out
}

func TestToolCallsInCompletionOrder(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	// Three scripted tools in one parallel batch; each waits for the next one's end, so
	// they end in the reverse of their source order: c3, c2, c1. c3 reports progress.
	tools := `"scriptedTools":[
		{"name":"first","steps":[{"waitForEnd":"c2"},{"result":{"content":[{"type":"text","text":"one"}]}}]},
		{"name":"second","steps":[{"waitForEnd":"c3"},{"error":"second failed"}]},
		{"name":"third","steps":[{"update":{"content":[{"type":"text","text":"half way\n"}]}},{"result":{"content":[{"type":"text","text":"three"}],"details":{"n":3}}}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("c1", "first", `{}`), call("c2", "second", `{}`), call("c3", "third", `{"x":1}`)),
		textTurn("all done")))
	res, before := c.result(c.prompt(sid, "go"), nil)
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", res.Raw)
	}
	us := updates(t, sid, before)
	got := strings.Join(toolEvents(us), "\n")
	// R13: the three start executing together once all are prepared, in source order;
	// each goes in_progress once, and c3's progress carries content only.
	want := strings.Join([]string{
		"tool_call c1 pending", "tool_call c2 pending", "tool_call c3 pending",
		"tool_call_update c1 in_progress", "tool_call_update c2 in_progress", "tool_call_update c3 in_progress",
		"tool_call_update c3 progress", "tool_call_update c3 completed",
		"tool_call_update c2 failed", "tool_call_update c1 completed",
	}, "\n")
	if got != want {
		t.Errorf("tool updates:\n%s\nwant:\n%s", got, want)
	}
	for _, u := range us {
		id := u.Get("toolCallId").String()
		switch u.Get("sessionUpdate").String() + " " + u.Get("status").String() {
		case "tool_call pending":
			if u.Get("kind").String() != "other" || u.Get("title").String() == "" || !u.Get("rawInput").IsObject() {
				t.Errorf("tool_call %s: %s", id, u.Raw)
			}
		case "tool_call_update in_progress":
			if u.Get("content").Exists() {
				t.Errorf("the execution start of %s carries content: %s", id, u.Raw)
			}
		case "tool_call_update ":
			// (a progress text's unfinished last word is held back: this one ends a line)
			if id != "c3" || u.Get("content.0.content.text").String() != "half way\n" {
				t.Errorf("progress of %s: %s", id, u.Raw)
			}
		case "tool_call_update completed":
			if id == "c3" && (u.Get("content.0.content.text").String() != "three" || u.Get("rawOutput.details.n").Int() != 3) {
				t.Errorf("end of c3: %s", u.Raw)
			}
		case "tool_call_update failed":
			if !strings.Contains(u.Get("content.0.content.text").String(), "second failed") {
				t.Errorf("end of c2: %s", u.Raw)
			}
		}
	}
	if last := us[len(us)-1]; last.Get("sessionUpdate").String() != "agent_message_chunk" {
		t.Errorf("the last update is %s", last.Raw)
	}
	c.quiet(50 * time.Millisecond)
}

func TestBuiltinToolsPermissionAndDiff(t *testing.T) {
	c := start(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false})
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("one\ntwo\nthree\n"), 0o644)
	sid := c.newSession(dir, script("",
		toolTurn(call("r1", "read", `{"path":"a.txt"}`), call("l1", "ls", `{}`), call("g1", "grep", `{"pattern":"tw"}`)),
		toolTurn(call("e1", "edit", `{"path":"a.txt","edits":[{"oldText":"two","newText":"TWO"}]}`),
			call("w1", "write", `{"path":"new/b.txt","content":"fresh\n"}`),
			call("b1", "bash", `{"command":"echo hi"}`)),
		textTurn("edited")))
	var asked []*msg
	res, before := c.result(c.prompt(sid, "edit it"), func(m *msg) {
		if m.Method != "session/request_permission" {
			t.Fatalf("unexpected request %s", m.raw)
		}
		asked = append(asked, m)
		opts := m.get("params.options.#.kind").String()
		if opts != `["allow_once","allow_always","reject_once","reject_always"]` {
			t.Errorf("options %s", opts)
		}
		switch m.get("params.toolCall.toolCallId").String() {
		case "e1", "w1":
			c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		case "b1":
			c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
		}
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", res.Raw)
	}
	// Read-only tools ran without asking; write, edit and bash asked, in source order.
	var ids []string
	for _, m := range asked {
		ids = append(ids, m.get("params.toolCall.toolCallId").String())
		if m.get("params.sessionId").String() != sid || m.get("params.toolCall.title").String() == "" {
			t.Errorf("request_permission %s", m.raw)
		}
		// ACP's tool call name: the tool's own, in the question too.
		if name, want := m.get("params.toolCall.name").String(), map[string]string{"e1": "edit", "w1": "write", "b1": "bash"}[ids[len(ids)-1]]; name != want {
			t.Errorf("request_permission names the tool %q, want %q", name, want)
		}
	}
	if strings.Join(ids, ",") != "e1,w1,b1" {
		t.Errorf("asked about %v", ids)
	}
	us := updates(t, sid, before)
	byCall := map[string][]gjson.Result{}
	for _, u := range us {
		if id := u.Get("toolCallId").String(); id != "" {
			byCall[id] = append(byCall[id], u)
		}
	}
	wantStart := map[string][2]string{
		"r1": {"read", "Read a.txt"}, "l1": {"search", "List ."}, "g1": {"search", "Search for `tw`"},
		"e1": {"edit", "Edit a.txt"}, "w1": {"edit", "Write new/b.txt"}, "b1": {"execute", "Run `echo hi`"},
	}
	for id, w := range wantStart {
		first := byCall[id][0]
		if first.Get("sessionUpdate").String() != "tool_call" || first.Get("kind").String() != w[0] || first.Get("title").String() != w[1] {
			t.Errorf("%s starts with %s, want kind %s title %q", id, first.Raw, w[0], w[1])
		}
		// ACP 1.22's tool call name is the tool's own (read, ls, grep, edit, write, bash).
		if name := first.Get("name").String(); name != map[string]string{"r1": "read", "l1": "ls", "g1": "grep", "e1": "edit", "w1": "write", "b1": "bash"}[id] {
			t.Errorf("%s: tool_call name %q: %s", id, name, first.Raw)
		}
	}
	if loc := byCall["r1"][0].Get("locations.0.path").String(); loc != file {
		t.Errorf("read location %q, want %q", loc, file)
	}
	statuses := func(id string) string {
		var s []string
		for _, u := range byCall[id] {
			s = append(s, u.Get("status").String())
		}
		return strings.Join(s, ",")
	}
	// Every call that executes goes in_progress once, approved or not; the rejected one
	// never executes.
	for id, want := range map[string]string{
		"r1": "pending,in_progress,completed", "l1": "pending,in_progress,completed", "g1": "pending,in_progress,completed",
		"e1": "pending,in_progress,completed", "w1": "pending,in_progress,completed", "b1": "pending,failed",
	} {
		if got := statuses(id); got != want {
			t.Errorf("%s statuses %s, want %s", id, got, want)
		}
	}
	// The edit's diff: the hunk around the change, with absolute path.
	last := byCall["e1"][len(byCall["e1"])-1]
	d := last.Get(`content.#(type=="diff")`)
	if d.Get("path").String() != file || d.Get("oldText").String() != "one\ntwo\nthree\n" || d.Get("newText").String() != "one\nTWO\nthree\n" {
		t.Errorf("edit diff %s", d.Raw)
	}
	if last.Get("locations.0.line").Int() != 2 {
		t.Errorf("edit location %s", last.Get("locations").Raw)
	}
	w := byCall["w1"][len(byCall["w1"])-1].Get(`content.#(type=="diff")`)
	if w.Get("path").String() != filepath.Join(dir, "new/b.txt") || w.Get("oldText").Type != gjson.Null || w.Get("newText").String() != "fresh\n" {
		t.Errorf("write diff %s", w.Raw)
	}
	if b, _ := os.ReadFile(file); string(b) != "one\nTWO\nthree\n" {
		t.Errorf("file content %q", b)
	}
	if !strings.Contains(byCall["b1"][1].Get("content.0.content.text").String(), "denied") {
		t.Errorf("rejected bash: %s", byCall["b1"][1].Raw)
	}
}

func TestPermissionOutcomes(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"risky","requiresApproval":true,"steps":[{"result":{"content":[{"type":"text","text":"ran"}]}}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("k1", "risky", `{}`)), textTurn("1"),
		toolTurn(call("k2", "risky", `{}`)), textTurn("2"),
		toolTurn(call("k3", "risky", `{}`)), textTurn("3"),
		toolTurn(call("k4", "risky", `{}`)), textTurn("4"),
		toolTurn(call("k5", "risky", `{}`)), textTurn("5"),
		toolTurn(call("k6", "risky", `{}`)), textTurn("6"),
		toolTurn(call("k7", "risky", `{}`)), textTurn("7"),
	))
	run := func(answer any, wantAsk bool) string {
		t.Helper()
		asked := false
		_, before := c.result(c.prompt(sid, "go"), func(m *msg) {
			asked = true
			if answer == nil {
				c.sendJSON("", map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": "editor broke"}}, nil)
				return
			}
			c.respond(m, answer)
		})
		if asked != wantAsk {
			t.Errorf("asked = %v, want %v", asked, wantAsk)
		}
		us := updates(t, sid, before)
		var final gjson.Result
		for _, u := range us {
			if u.Get("sessionUpdate").String() == "tool_call_update" {
				final = u
			}
		}
		return final.Get("status").String() + ": " + final.Get("content.0.content.text").String()
	}
	sel := func(id string) any {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}
	}
	// The person's answers are denials, framed by the daemon; an answer that is no
	// person's is the editor's failure.
	if got := run(map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, true); got != "failed: The user denied this call of risky." {
		t.Errorf("cancelled outcome: %s", got)
	}
	if got := run(sel("reject_once"), true); got != "failed: The user denied this call of risky." {
		t.Errorf("reject_once: %s", got)
	}
	if got := run(sel("no_such_option"), true); got != `failed: Tool risky was not run: the editor chose an unknown permission option "no_such_option".` {
		t.Errorf("unknown option: %s", got)
	}
	if got := run(nil, true); !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "editor broke") {
		t.Errorf("error answer: %s", got)
	}
	if got := run(sel("allow_always"), true); got != "completed: ran" {
		t.Errorf("allow_always: %s", got)
	}
	// Remembered: no question any more.
	if got := run(nil, false); got != "completed: ran" {
		t.Errorf("after allow_always: %s", got)
	}
}

// A rejected call, and a question the person closed (cancelled), reach a real model (a
// recording server) as the daemon's framed denial, and the editor sees the call failed with
// the same words.
func TestDenialReachesTheModelFramed(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
	}
	callTurn := func(id string) []string {
		return []string{chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"risky","arguments":"{}"}}]}`, "null"), chunk(`{}`, `"tool_calls"`)}
	}
	srv := newScriptedServer(t, callTurn("call_k"), callTurn("call_c"), []string{chunk(`{"role":"assistant","content":"I will not."}`, `"stop"`)})
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), fmt.Sprintf(`{"model":{"provider":"openai","id":"m","baseUrl":%q},"scriptedTools":[{"name":"risky","requiresApproval":true,"steps":[{"result":{"content":[{"type":"text","text":"ran"}]}}]}]}`, srv.URL+"/v1"))
	answers := []any{
		map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}},
		map[string]any{"outcome": map[string]any{"outcome": "cancelled"}},
	}
	_, before := c.result(c.prompt(sid, "go"), func(m *msg) {
		c.respond(m, answers[0])
		answers = answers[1:]
	})
	const want = "The user denied this call of risky."
	final := map[string]gjson.Result{}
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "tool_call_update" {
			final[u.Get("toolCallId").String()] = u
		}
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, id := range []string{"call_k", "call_c"} {
		if u := final[id]; u.Get("status").String() != "failed" || u.Get("content.0.content.text").String() != want {
			t.Errorf("%s: the editor saw %s, want failed with %q", id, u.Raw, want)
		}
		// A chat-completions tool message has no error flag: the provider marks it "Error: ".
		if got := gjson.GetBytes(reqs[i+1], `messages.#(tool_call_id=="`+id+`").content`).String(); got != "Error: "+want {
			t.Errorf("%s: the model read %q", id, got)
		}
	}
}

func TestRejectAlwaysIsRemembered(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"nuke","requiresApproval":true,"steps":[{"result":{"content":[]}}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("n1", "nuke", `{}`)), textTurn("1"),
		toolTurn(call("n2", "nuke", `{}`)), textTurn("2")))
	asks := 0
	answer := func(m *msg) {
		asks++
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_always"}})
	}
	c.result(c.prompt(sid, "go"), answer)
	_, before := c.result(c.prompt(sid, "again"), answer)
	if asks != 1 {
		t.Errorf("asked %d times, want 1", asks)
	}
	ev := toolEvents(updates(t, sid, before))
	if strings.Join(ev, ",") != "tool_call n2 pending,tool_call_update n2 failed" {
		t.Errorf("second call: %v", ev)
	}
}

func TestCancelDuringToolsAndPermission(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	// One batch: a tool that runs until cancelled, and one waiting for permission.
	tools := `"scriptedTools":[
		{"name":"slow","steps":[{"update":{"content":[{"type":"text","text":"working"}]}},{"sleepMs":60000}]},
		{"name":"gated","requiresApproval":true,"steps":[{"result":{"content":[]}}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("s1", "slow", `{}`), call("g1", "gated", `{}`)),
		textTurn("never")))
	id := c.prompt(sid, "go")
	// Wait for the permission request (the prepare pass), answer nothing, cancel.
	var perm *msg
	var seen []*msg
	for perm == nil {
		m := c.next()
		seen = append(seen, m)
		if m.Method == "session/request_permission" {
			perm = m
		}
	}
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, rest := c.until(id, nil)
	if resp.Error != nil || resp.get("result.stopReason").String() != "cancelled" {
		t.Fatalf("cancelled prompt answered %s", resp.raw)
	}
	ev := toolEvents(updates(t, sid, append(seen, rest...)))
	final := map[string]string{}
	for _, e := range ev {
		f := strings.Fields(e)
		final[f[1]] = f[2]
	}
	if final["s1"] != "failed" || final["g1"] != "failed" {
		t.Errorf("tool calls not finalized as failed: %v", ev)
	}
	// The late answer to the permission request is dropped; nothing follows the response.
	c.respond(perm, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
	c.quiet(100 * time.Millisecond)
	ping(c)
	// The session takes prompts again; the cancelled turn's script position moved on.
	res, _ := c.result(c.prompt(sid, "again"), nil)
	if res.Get("stopReason").String() != "end_turn" {
		t.Errorf("next prompt: %s", res.Raw)
	}
}

func TestCancelRunningToolInSequence(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"wait","steps":[{"update":{"content":[{"type":"text","text":"started"}]}},{"sleepMs":60000}]},
		{"name":"after","steps":[{"result":{"content":[]}}]}]`
	sid := c.newSession(t.TempDir(), script(`"toolExecution":"sequential",`+tools,
		toolTurn(call("w1", "wait", `{}`), call("w2", "after", `{}`))))
	id := c.prompt(sid, "go")
	var seen []*msg
	for {
		m := c.next()
		seen = append(seen, m)
		if k, u := m.update(); k == "tool_call_update" && u.Get("status").String() == "in_progress" {
			break
		}
	}
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, rest := c.until(id, nil)
	if resp.get("result.stopReason").String() != "cancelled" {
		t.Fatalf("answer %s", resp.raw)
	}
	ev := toolEvents(updates(t, sid, append(seen, rest...)))
	want := "tool_call w1 pending,tool_call_update w1 in_progress,tool_call_update w1 progress,tool_call_update w1 failed,tool_call w2 pending,tool_call_update w2 failed"
	if strings.Join(ev, ",") != want {
		t.Errorf("events %v\nwant %s", ev, want)
	}
	c.quiet(100 * time.Millisecond)
}

func TestCancelRequestAndBusyAndEOF(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"wait","steps":[{"update":{"content":[{"type":"text","text":"started"}]}},{"sleepMs":60000}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("a1", "wait", `{}`)), toolTurn(call("a2", "wait", `{}`))))
	waitRunning := func() {
		for {
			if k, u := c.next().update(); k == "tool_call_update" && u.Get("status").String() == "in_progress" {
				return
			}
		}
	}
	id := c.prompt(sid, "go")
	waitRunning()
	// A second prompt while one runs is refused at once.
	c.wantError(c.prompt(sid, "too"), codeInvalidRequest)
	// $/cancel_request on the prompt cancels its turn, too.
	c.notify("$/cancel_request", map[string]any{"requestId": json.RawMessage(id)})
	resp, _ := c.until(id, nil)
	if resp.get("result.stopReason").String() != "cancelled" {
		t.Fatalf("answer %s", resp.raw)
	}
	// Closing the input while a prompt runs: it is answered "cancelled", then Serve ends.
	id = c.prompt(sid, "again")
	waitRunning()
	c.closeInput()
	resp, _ = c.until(id, nil)
	if resp.get("result.stopReason").String() != "cancelled" {
		t.Fatalf("answer at EOF %s", resp.raw)
	}
}

func TestCancelBeforeTheTurnStarts(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), script("", textTurn("hello")))
	// session/cancel right behind the prompt, before its goroutine runs: still cancelled.
	id := c.prompt(sid, "go")
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, _ := c.until(id, nil)
	if sr := resp.get("result.stopReason").String(); sr != "cancelled" && sr != "end_turn" {
		t.Fatalf("answer %s", resp.raw)
	}
	c.quiet(50 * time.Millisecond)
}

func TestNoticesOnlyWhenDeclared(t *testing.T) {
	for _, declared := range []bool{false, true} {
		c := start(t)
		caps := map[string]any{}
		if declared {
			caps["session"] = map[string]any{"notices": map[string]any{}}
		}
		c.initialize(caps)
		tools := `"scriptedTools":[{"name":"boom","steps":[{"panic":"kaboom"}]}]`
		sid := c.newSession(t.TempDir(), script(tools, toolTurn(call("p1", "boom", `{}`)), textTurn("ok")))
		_, before := c.result(c.prompt(sid, "go"), nil)
		var notices []gjson.Result
		for _, u := range updates(t, sid, before) {
			if u.Get("sessionUpdate").String() == "notice" {
				notices = append(notices, u)
			}
		}
		if declared != (len(notices) > 0) {
			t.Errorf("notices declared=%v: got %d", declared, len(notices))
		}
		if declared && !strings.Contains(notices[0].Get("title").String(), "kaboom") {
			t.Errorf("notice %s", notices[0].Raw)
		}
	}
}

// TestWorkspaceSettingsOfTheCwd: the session's cwd is its workspace folder, so its
// .pid/settings.json counts: here it names the model and denies bash, which is then refused
// without a question. A session in another folder does not see those settings.
func TestWorkspaceSettingsOfTheCwd(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".pid"), 0o755)
	// The workspace is not trusted: its deny applies (it narrows); its model would not.
	settings := `{"permissions":{"tools":{"bash":"deny"}}}`
	if err := os.WriteFile(filepath.Join(dir, ".pid", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := c.newSession(dir, script("", toolTurn(call("b1", "bash", `{"command":"echo no"}`)), textTurn("refused")))
	res, before := c.result(c.prompt(sid, "go"), func(m *msg) { t.Errorf("asked although bash is denied: %s", m.raw) })
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", res.Raw)
	}
	var final gjson.Result
	for _, u := range updates(t, sid, before) {
		if u.Get("toolCallId").String() == "b1" {
			final = u
		}
	}
	if final.Get("status").String() != "failed" || !strings.Contains(final.Get("content.0.content.text").String(), "denied by the permissions") {
		t.Errorf("bash: %s", final.Raw)
	}
	other := c.newSession(t.TempDir(), "")
	m := c.wantError(c.prompt(other, "go"), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "no model") {
		t.Errorf("a session elsewhere saw the settings: %s", m.raw)
	}
}

// Every call that starts executing gets exactly one tool_call_update with status
// in_progress, before its final update, whether it was approved, allowed without asking
// or has no progress to report; a call that ends during the prepare pass (unknown tool,
// invalid arguments, rejected) never gets one. In a parallel batch the approved call goes
// in_progress only when it starts executing, after the whole prepare pass, not when it is
// approved (R13). Before, an approved call went in_progress at its approval and a call
// without approval or progress never did.
func TestInProgressForEveryExecutingCall(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[
		{"name":"quiet","steps":[{"result":{"content":[{"type":"text","text":"done"}]}}]},
		{"name":"gated","requiresApproval":true,"steps":[{"result":{"content":[{"type":"text","text":"ran"}]}}]},
		{"name":"strict","parameters":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]},"steps":[{"result":{"content":[]}}]}]`
	sid := c.newSession(t.TempDir(), script(tools,
		toolTurn(call("q1", "quiet", `{}`), call("a1", "gated", `{}`), call("u1", "nope", `{}`),
			call("v1", "strict", `{"n":"x"}`), call("r1", "gated", `{}`), call("q2", "quiet", `{}`)),
		textTurn("ok")))
	var asked []string
	res, before := c.result(c.prompt(sid, "go"), func(m *msg) {
		id := m.get("params.toolCall.toolCallId").String()
		asked = append(asked, id)
		answer := "allow_once"
		if id == "r1" {
			answer = "reject_once"
		}
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": answer}})
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", res.Raw)
	}
	if strings.Join(asked, ",") != "a1,r1" {
		t.Errorf("permission requests for %v, want a1, r1", asked)
	}
	ev := toolEvents(updates(t, sid, before))
	byCall := map[string][]string{}
	for _, e := range ev {
		f := strings.Fields(e)
		byCall[f[1]] = append(byCall[f[1]], f[2])
	}
	for id, want := range map[string]string{
		"q1": "pending,in_progress,completed", "a1": "pending,in_progress,completed", "q2": "pending,in_progress,completed",
		"u1": "pending,failed", "v1": "pending,failed", "r1": "pending,failed",
	} {
		if got := strings.Join(byCall[id], ","); got != want {
			t.Errorf("%s: statuses %s, want %s", id, got, want)
		}
	}
	// The three executing calls go in_progress after every call of the batch was started
	// and the rejected one has failed: they start executing after the prepare pass.
	at := func(line string) int {
		for i, e := range ev {
			if e == line {
				return i
			}
		}
		t.Fatalf("no %q in %v", line, ev)
		return -1
	}
	for _, id := range []string{"q1", "a1", "q2"} {
		if at("tool_call_update "+id+" in_progress") < at("tool_call_update r1 failed") {
			t.Errorf("%s went in_progress during the prepare pass: %v", id, ev)
		}
	}
	if !(at("tool_call_update q1 in_progress") < at("tool_call_update a1 in_progress") && at("tool_call_update a1 in_progress") < at("tool_call_update q2 in_progress")) {
		t.Errorf("the calls that start together do not go in_progress in source order: %v", ev)
	}
	c.quiet(50 * time.Millisecond)
}

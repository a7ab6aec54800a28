// Tests of saved sessions over ACP: session/load and its replay, session/resume,
// session/list, session/close (which cancels a running prompt) and session/delete, across
// connections that share one sessions folder (TestMain's XDG_STATE_HOME) as pid processes
// do, and a session another connection holds. Every message is validated by the harness.

package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
	"github.com/tidwall/gjson"
)

// loadParams are the params of session/load or session/resume.
func loadParams(sid, cwd string) map[string]any {
	return map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
}

// describe returns an update as "kind detail": the text of a chunk ("image" for an image),
// the call id and status of a tool call or update.
func describe(u gjson.Result) string {
	kind := u.Get("sessionUpdate").String()
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		if u.Get("content.type").String() == "image" {
			return kind + " image"
		}
		return kind + " " + u.Get("content.text").String()
	case "tool_call", "tool_call_update":
		return kind + " " + u.Get("toolCallId").String() + " " + u.Get("status").String()
	case "compaction_update":
		return kind + " " + u.Get("status").String() + " " + u.Get("summary.0.text").String()
	}
	return kind
}

func describeAll(us []gjson.Result) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = describe(u)
	}
	return out
}

// sameJSON reports whether two JSON values are equal as values (member order aside).
func sameJSON(a, b gjson.Result) bool {
	return reflect.DeepEqual(a.Value(), b.Value())
}

// finalOf returns the last tool_call_update with a final status of call id among us.
func finalOf(us []gjson.Result, id string) gjson.Result {
	var last gjson.Result
	for _, u := range us {
		if u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("toolCallId").String() == id {
			if s := u.Get("status").String(); s == "completed" || s == "failed" {
				last = u
			}
		}
	}
	return last
}

func startOf(us []gjson.Result, id string) gjson.Result {
	for _, u := range us {
		if u.Get("sessionUpdate").String() == "tool_call" && u.Get("toolCallId").String() == id {
			return u
		}
	}
	return gjson.Result{}
}

// allow answers every permission request with allow_once.
func allow(c *client) func(*msg) {
	return func(m *msg) {
		if m.Method == "session/request_permission" {
			c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
		}
	}
}

func TestLoadReplaysTheConversation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := `"scriptedTools":[{"name":"broken","steps":[{"error":"it broke"}]}]`
	cfg := script(tools,
		`{"content":[{"type":"thinking","thinking":"Let me look."},{"type":"text","text":"Reading."},`+
			call("r1", "read", `{"path":"a.txt"}`)+`,`+call("x1", "broken", `{"n":1}`)+`,`+
			call("e1", "edit", `{"path":"a.txt","edits":[{"oldText":"two","newText":"TWO"}]}`)+`]}`,
		textTurn("Done."), textTurn("Bye."), textTurn("Continued."))

	a := start(t)
	a.initialize(nil)
	sid := a.newSession(dir, cfg)
	image := map[string]any{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
	_, before := a.result(a.request("session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": "first question"}, image}}), allow(a))
	live := updates(t, sid, before)
	a.result(a.prompt(sid, "second"), nil)
	a.stop()

	// Another connection (another pid, for the session folder) loads it.
	b := start(t)
	b.initialize(nil)
	res, before := b.result(b.request("session/load", loadParams(sid, dir)), nil)
	replayed := updates(t, sid, before)
	want := []string{
		"user_message_chunk first question", "user_message_chunk image",
		"agent_thought_chunk Let me look.", "agent_message_chunk Reading.",
		"tool_call r1 pending", "tool_call x1 pending", "tool_call e1 pending",
		"tool_call_update r1 completed", "tool_call_update x1 failed", "tool_call_update e1 completed",
		"agent_message_chunk Done.",
		"user_message_chunk second", "agent_message_chunk Bye.",
	}
	if got := describeAll(replayed); !reflect.DeepEqual(got, want) {
		t.Errorf("replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(before) != len(replayed) {
		t.Errorf("the load sent %d messages besides its %d updates", len(before)-len(replayed), len(replayed))
	}
	// Each call is shown as it was live: the same tool_call, the same final update (the
	// edit's diff, rebuilt from the saved details, included).
	for _, id := range []string{"r1", "x1", "e1"} {
		if l, r := startOf(live, id), startOf(replayed, id); !l.Exists() || !sameJSON(l, r) {
			t.Errorf("tool_call %s: live %s, replayed %s", id, l.Raw, r.Raw)
		}
		if l, r := finalOf(live, id), finalOf(replayed, id); !l.Exists() || !sameJSON(l, r) {
			t.Errorf("final update of %s: live %s, replayed %s", id, l.Raw, r.Raw)
		}
	}
	if e1 := finalOf(replayed, "e1"); e1.Get(`content.#(type=="diff").newText`).String() != "one\nTWO\n" {
		t.Errorf("the replayed edit has no diff: %s", e1.Raw)
	}
	if img := replayed[1].Get("content"); img.Get("data").String() != "iVBORw0KGgo=" || img.Get("mimeType").String() != "image/png" {
		t.Errorf("replayed image %s", img.Raw)
	}
	if got := res.Get("_meta.pid.cwd").String(); got != dir {
		t.Errorf("_meta.pid.cwd %q, want %q", got, dir)
	}
	// The session is live here now: the model goes on with its next turn.
	res, before = b.result(b.prompt(sid, "again"), nil)
	if got := describeAll(updates(t, sid, before)); res.Get("stopReason").String() != "end_turn" || !reflect.DeepEqual(got, []string{"agent_message_chunk Continued."}) {
		t.Errorf("prompt after the load: %s %v", res.Raw, got)
	}
}

func TestResumeListCloseDelete(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	a := start(t)
	a.initialize(nil)
	s1 := a.newSession(dir, script("", textTurn("one"), textTurn("resumed")))
	a.result(a.prompt(s1, "Fix   the\nbuild"), nil)
	s2 := a.newSession(dir, script("", textTurn("two")))
	a.result(a.prompt(s2, "second session"), nil)
	s3 := a.newSession(other, script("", textTurn("three")))
	a.result(a.prompt(s3, "elsewhere"), nil)

	list := func(c *client, params map[string]any) gjson.Result {
		t.Helper()
		res, _ := c.result(c.request("session/list", params), nil)
		return res
	}
	ids := func(res gjson.Result) []string {
		var out []string
		for _, s := range res.Get("sessions").Array() {
			out = append(out, s.Get("sessionId").String())
		}
		return out
	}
	res := list(a, map[string]any{"cwd": dir})
	if got := ids(res); len(got) != 2 || !(got[0] == s1 && got[1] == s2 || got[0] == s2 && got[1] == s1) {
		t.Fatalf("list of %s: %v, want %s and %s", dir, got, s1, s2)
	}
	var prev time.Time
	for i, s := range res.Get("sessions").Array() {
		at, err := time.Parse(time.RFC3339Nano, s.Get("updatedAt").String())
		if err != nil {
			t.Errorf("updatedAt %s: %v", s.Raw, err)
		}
		if i > 0 && at.After(prev) {
			t.Errorf("sessions are not newest first: %s", res.Raw)
		}
		prev = at
		if s.Get("cwd").String() != dir || s.Get("_meta.pid.messageCount").Int() != 2 || s.Get("_meta.pid.createdAt").String() == "" {
			t.Errorf("session info %s", s.Raw)
		}
		if s.Get("sessionId").String() == s1 && s.Get("title").String() != "Fix the build" {
			t.Errorf("title of %s: %s", s1, s.Raw)
		}
	}
	if res.Get("nextCursor").Exists() {
		t.Errorf("one page has a nextCursor: %s", res.Raw)
	}
	all := strings.Join(ids(list(a, map[string]any{})), " ")
	for _, id := range []string{s1, s2, s3} {
		if !strings.Contains(all, id) {
			t.Errorf("the list of every folder lacks %s: %s", id, all)
		}
	}
	a.wantError(a.request("session/list", map[string]any{"cwd": "relative/dir"}), codeInvalidParams)
	a.wantError(a.request("session/list", map[string]any{"cursor": "not-a-cursor"}), codeInvalidParams)
	a.stop()

	b := start(t)
	b.initialize(nil)
	// Bad requests.
	b.wantError(b.unchecked("session/resume", map[string]any{"sessionId": s1}), codeInvalidParams)
	b.wantError(b.request("session/load", loadParams(s1, "relative")), codeInvalidParams)
	b.wantError(b.request("session/load", loadParams("", dir)), codeInvalidParams)
	for _, id := range []string{"0000000000000000000000000", "../" + s1} {
		m := b.wantError(b.request("session/load", loadParams(id, dir)), codeNotFound)
		if got := m.get("error.data.sessionId").String(); got != id {
			t.Errorf("not found without data.sessionId: %s", m.raw)
		}
	}
	// Resume: live again, no replay, and the model goes on.
	res, before := b.result(b.request("session/resume", loadParams(s1, dir)), nil)
	if len(before) != 0 || res.Get("_meta.pid.cwd").String() != dir {
		t.Errorf("resume sent %d messages first; result %s", len(before), res.Raw)
	}
	_, before = b.result(b.prompt(s1, "go on"), nil)
	if got := describeAll(updates(t, s1, before)); !reflect.DeepEqual(got, []string{"agent_message_chunk resumed"}) {
		t.Errorf("prompt after resume: %v", got)
	}
	// Close: the session leaves this pid; its file stays.
	b.result(b.request("session/close", map[string]any{"sessionId": s1}), nil)
	b.wantError(b.prompt(s1, "closed?"), codeNotFound)
	if m := b.wantError(b.request("session/close", map[string]any{"sessionId": s1}), codeNotFound); m.get("error.data.sessionId").String() != s1 {
		t.Errorf("closing twice: %s", m.raw)
	}
	_, before = b.result(b.request("session/load", loadParams(s1, dir)), nil)
	if got := describeAll(updates(t, s1, before)); len(got) != 4 || got[3] != "agent_message_chunk resumed" {
		t.Errorf("load after close: %v", got)
	}
	// Delete a live session, then one that is only saved.
	b.result(b.request("session/delete", map[string]any{"sessionId": s1}), nil)
	b.wantError(b.prompt(s1, "deleted?"), codeNotFound)
	b.wantError(b.request("session/load", loadParams(s1, dir)), codeNotFound)
	b.result(b.request("session/delete", map[string]any{"sessionId": s2}), nil)
	if got := list(b, map[string]any{"cwd": dir}); got.Get("sessions").Raw != "[]" {
		t.Errorf("after both deletes: %s", got.Raw)
	}
	b.wantError(b.request("session/delete", map[string]any{"sessionId": s2}), codeNotFound)
	b.wantError(b.unchecked("session/delete", map[string]any{}), codeInvalidParams)
	matches, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "pid", "sessions", "*", s2+".*"))
	if len(matches) != 0 {
		t.Errorf("files left after delete: %v", matches)
	}
}

func TestListPages(t *testing.T) {
	dir := t.TempDir()
	c := start(t)
	c.initialize(nil)
	made := map[string]bool{}
	for i := range session.PageSize + 1 {
		sid := c.newSession(dir, script("", textTurn("ok")))
		c.result(c.prompt(sid, fmt.Sprintf("session %d", i)), nil)
		made[sid] = true
	}
	first, _ := c.result(c.request("session/list", map[string]any{"cwd": dir}), nil)
	next := first.Get("nextCursor")
	if n := len(first.Get("sessions").Array()); n != session.PageSize || next.Type != gjson.String {
		t.Fatalf("first page: %d sessions, nextCursor %s", n, next.Raw)
	}
	second, _ := c.result(c.request("session/list", map[string]any{"cwd": dir, "cursor": next.String()}), nil)
	if n := len(second.Get("sessions").Array()); n != 1 || second.Get("nextCursor").Exists() {
		t.Fatalf("second page: %s", second.Raw)
	}
	seen := map[string]bool{}
	for _, s := range append(first.Get("sessions").Array(), second.Get("sessions").Array()...) {
		seen[s.Get("sessionId").String()] = true
	}
	if !reflect.DeepEqual(seen, made) {
		t.Errorf("the pages hold %d sessions, want the %d made", len(seen), len(made))
	}
}

func TestCloseCancelsTheRunningPrompt(t *testing.T) {
	dir := t.TempDir()
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"slow","steps":[{"update":{"content":[{"type":"text","text":"started\n"}]}},{"sleepMs":60000}]}]`
	sid := c.newSession(dir, script(tools, toolTurn(call("s1", "slow", `{}`)), textTurn("never")))
	pid := c.prompt(sid, "go")
	// Wait for the tool to run.
	for {
		m := c.next()
		if kind, u := m.update(); kind == "tool_call_update" && u.Get("content").Exists() {
			break
		}
	}
	closeID := c.request("session/close", map[string]any{"sessionId": sid})
	var order []string
	for len(order) == 0 || order[len(order)-1] != "close" {
		m := c.next()
		switch {
		case m.Method == "" && idKey(m.ID) == idKey(pid):
			order = append(order, "prompt "+m.get("result.stopReason").String())
		case m.Method == "" && idKey(m.ID) == idKey(closeID):
			if m.Error != nil {
				t.Fatalf("close failed: %s", m.raw)
			}
			order = append(order, "close")
		default:
			if kind, u := m.update(); kind != "" {
				order = append(order, describe(u))
			}
		}
	}
	if want := []string{"tool_call_update s1 failed", "prompt cancelled", "close"}; !reflect.DeepEqual(order, want) {
		t.Errorf("after session/close: %v, want %v", order, want)
	}
	c.wantError(c.prompt(sid, "closed?"), codeNotFound)
	// The cancelled call was saved with its result: a load shows it failed.
	_, before := c.result(c.request("session/load", loadParams(sid, dir)), nil)
	want := []string{"user_message_chunk go", "tool_call s1 pending", "tool_call_update s1 failed"}
	if got := describeAll(updates(t, sid, before)); !reflect.DeepEqual(got, want) {
		t.Errorf("replay of the closed session: %v, want %v", got, want)
	}
}

func TestSessionHeldByAnotherPid(t *testing.T) {
	dir := t.TempDir()
	a := start(t)
	a.initialize(nil)
	sid := a.newSession(dir, script("", textTurn("mine"), textTurn("yours")))
	a.result(a.prompt(sid, "hello"), nil)

	// b shares the sessions folder: a holds the session's lock.
	b := start(t)
	b.initialize(nil)
	for _, method := range []string{"session/load", "session/resume"} {
		m := b.wantError(b.request(method, loadParams(sid, dir)), codeRequestFailed)
		if msg := m.Error.Message; !strings.Contains(msg, "open in another pid") || !strings.Contains(msg, fmt.Sprintf("process %d", os.Getpid())) || !strings.Contains(msg, sid) {
			t.Errorf("%s of a held session: %q", method, msg)
		}
	}
	b.wantError(b.request("session/delete", map[string]any{"sessionId": sid}), codeRequestFailed)
	// Listing takes no lock.
	res, _ := b.result(b.request("session/list", map[string]any{"cwd": dir}), nil)
	if res.Get("sessions.0.sessionId").String() != sid {
		t.Errorf("list while another pid holds the session: %s", res.Raw)
	}
	// Once a closes it, b can take it.
	a.result(a.request("session/close", map[string]any{"sessionId": sid}), nil)
	_, before := b.result(b.request("session/load", loadParams(sid, dir)), nil)
	if got := describeAll(updates(t, sid, before)); !reflect.DeepEqual(got, []string{"user_message_chunk hello", "agent_message_chunk mine"}) {
		t.Errorf("replay after the other pid closed it: %v", got)
	}
	a.wantError(a.request("session/load", loadParams(sid, dir)), codeRequestFailed)
}

func TestLoadWithAnotherCwd(t *testing.T) {
	saved, elsewhere := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(saved, "f.txt"), []byte("saved\n"), 0o644)
	a := start(t)
	a.initialize(nil)
	sid := a.newSession(saved, script("", textTurn("hi"), toolTurn(call("r1", "read", `{"path":"f.txt"}`)), textTurn("read it")))
	a.result(a.prompt(sid, "hello"), nil)
	a.stop()

	// The saved cwd wins; a client that shows notices is told.
	b := start(t)
	b.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	res, before := b.result(b.request("session/load", loadParams(sid, elsewhere)), nil)
	us := updates(t, sid, before)
	if len(us) != 3 || us[0].Get("sessionUpdate").String() != "notice" || !strings.Contains(us[0].Get("title").String(), saved) {
		t.Errorf("load with another cwd: %v", describeAll(us))
	}
	if res.Get("_meta.pid.cwd").String() != saved {
		t.Errorf("result %s, want cwd %s", res.Raw, saved)
	}
	_, before = b.result(b.prompt(sid, "read"), nil)
	if loc := startOf(updates(t, sid, before), "r1").Get("locations.0.path").String(); loc != filepath.Join(saved, "f.txt") {
		t.Errorf("the tool ran in %q, want the saved cwd", loc)
	}
	b.stop()

	// A client without notices gets no notice; the same folder through a link is no change.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(saved, link); err != nil {
		t.Fatal(err)
	}
	c := start(t)
	c.initialize(nil)
	_, before = c.result(c.request("session/resume", loadParams(sid, link)), nil)
	if len(before) != 0 {
		t.Errorf("resume through a link sent %d messages", len(before))
	}
	c.stop()

	// The saved folder is gone: the load says which folder.
	os.RemoveAll(saved)
	d := start(t)
	d.initialize(nil)
	m := d.wantError(d.request("session/load", loadParams(sid, elsewhere)), codeRequestFailed)
	if !strings.Contains(m.Error.Message, saved) {
		t.Errorf("load of a session whose folder is gone: %s", m.raw)
	}
}

func TestLoadOfALiveSession(t *testing.T) {
	dir := t.TempDir()
	c := start(t)
	c.initialize(nil)
	tools := `"scriptedTools":[{"name":"slow","steps":[{"update":{"content":[{"type":"text","text":"started\n"}]}},{"sleepMs":60000}]}]`
	sid := c.newSession(dir, script(tools, textTurn("first"), toolTurn(call("s1", "slow", `{}`)), textTurn("third")))
	c.result(c.prompt(sid, "one"), nil)
	pid := c.prompt(sid, "two")
	for {
		m := c.next()
		if kind, u := m.update(); kind == "tool_call_update" && u.Get("content").Exists() {
			break
		}
	}
	// While a prompt runs: no load (its replay would cross the turn), resume is fine.
	c.wantError(c.request("session/load", loadParams(sid, dir)), codeInvalidRequest)
	c.result(c.request("session/resume", loadParams(sid, dir)), nil)
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	if res, _ := c.result(pid, nil); res.Get("stopReason").String() != "cancelled" {
		t.Fatalf("cancelled prompt: %s", res.Raw)
	}
	_, before := c.result(c.request("session/load", loadParams(sid, dir)), nil)
	want := []string{"user_message_chunk one", "agent_message_chunk first", "user_message_chunk two", "tool_call s1 pending", "tool_call_update s1 failed"}
	if got := describeAll(updates(t, sid, before)); !reflect.DeepEqual(got, want) {
		t.Errorf("replay of a live session: %v, want %v", got, want)
	}
	// Still the same session.
	if _, before := c.result(c.prompt(sid, "three"), nil); describe(updates(t, sid, before)[0]) != "agent_message_chunk third" {
		t.Errorf("prompt after reloading a live session: %v", describeAll(updates(t, sid, before)))
	}
}

func TestCompactionShownLiveAndReplayed(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 4000) // about 1000 tokens
	model := `{"model":{"provider":"script","contextWindow":20000,"compaction":{"reserveTokens":2000,"keepRecentTokens":1500},"turns":[` +
		`{"content":[{"type":"text","text":"one"}],"usage":{"input":3000,"output":10}},` +
		`{"content":[{"type":"text","text":"two"}],"usage":{"input":19000,"output":10}},` +
		`{"content":[{"type":"text","text":"three"}]}],` +
		`"summaries":[{"content":[{"type":"text","text":"## Goal\nthe summary"}]}]}}`
	compaction := map[string]any{"session": map[string]any{"compaction": map[string]any{}}}
	a := start(t)
	a.initialize(compaction)
	sid := a.newSession(dir, model)
	a.result(a.prompt(sid, "a "+big), nil)
	a.result(a.prompt(sid, "b "+big), nil)
	_, before := a.result(a.prompt(sid, "c"), nil)
	live := updates(t, sid, before)
	// Live, the summary is the text the model now sees (it kept nothing else here).
	want := []string{"compaction_update in_progress ", "compaction_update completed This session was compacted: the conversation before this point was replaced by the summary below. The messages after this one follow on from where the summary ends.\n\n<summary>\n## Goal\nthe summary\n</summary>", "agent_message_chunk three"}
	if got := describeAll(live); !reflect.DeepEqual(got, want) {
		t.Errorf("live compaction: %q, want %q", got, want)
	}
	a.stop()

	b := start(t)
	b.initialize(compaction)
	_, before = b.result(b.request("session/load", loadParams(sid, dir)), nil)
	got := describeAll(updates(t, sid, before))
	want = []string{"user_message_chunk a " + big, "agent_message_chunk one", "user_message_chunk b " + big, "agent_message_chunk two",
		"user_message_chunk c", "compaction_update completed ## Goal\nthe summary", "agent_message_chunk three"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replay with session.compaction: %q", got)
	}
	b.stop()

	// A client that did not declare session.compaction sees every message and no compaction.
	c := start(t)
	c.initialize(nil)
	_, before = c.result(c.request("session/load", loadParams(sid, dir)), nil)
	got = describeAll(updates(t, sid, before))
	if want := append(want[:5:5], want[6]); !reflect.DeepEqual(got, want) {
		t.Errorf("replay without session.compaction: %q", got)
	}
}

// fakeSite is a session as replayUpdates needs one: every tool shown by its name.
type fakeSite struct{}

func (fakeSite) ToolView(name string, _ json.RawMessage, _ any) session.ToolView {
	return session.ToolView{Kind: "other", Title: name}
}

func TestReplayUpdatesEdgeCases(t *testing.T) {
	s := newServer(strings.NewReader(""), nopWriter{}, Options{})
	user := llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(""), llm.Text("hi")}}
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text(""), llm.Thinking(""),
		llm.NewToolCall("c1", "read", []byte(`{"path":"a"}`)), llm.NewToolCall("c2", "ls", []byte(`{}`))}}
	// c2 has no result; c9 has a result but no call.
	res1 := llm.Message{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Content{llm.Text("A")}}
	res9 := llm.Message{Role: llm.RoleToolResult, ToolCallID: "c9", ToolName: "bash", IsError: true, Content: []llm.Content{llm.Text("no")}}
	items := []session.Item{{Message: &user}, {Message: &asst}, {Compaction: &session.CompactionItem{Summary: "S"}}, {Message: &res1}, {Message: &res9}}
	for _, compaction := range []bool{false, true} {
		var got []string
		s.replayUpdates(fakeSite{}, items, compaction, func(u any) {
			if err := validate(t, "SessionUpdate", rawOf(t, u)); err != nil {
				t.Error(err)
			}
			got = append(got, describe(gjson.ParseBytes(rawOf(t, u))))
		})
		want := []string{"user_message_chunk hi", "tool_call c1 pending", "tool_call c2 pending"}
		if compaction {
			want = append(want, "compaction_update completed S")
		}
		want = append(want, "tool_call_update c1 completed", "tool_call c9 pending", "tool_call_update c9 failed", "tool_call_update c2 failed")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("compaction %v: %q, want %q", compaction, got, want)
		}
	}
}

// unchecked sends a request that breaks the schema on purpose, and returns its id.
func (c *client) unchecked(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.mu.Unlock()
	c.requestID(id, method, params)
	return json.RawMessage(id)
}

// rawOf returns v as JSON.
func rawOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func TestWithoutASessionsFolder(t *testing.T) {
	// A state folder that cannot be made: sessions are not saved, and pid says so.
	notAFolder := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notAFolder, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", notAFolder)
	c := start(t)
	caps := c.initialize(nil)
	if got := caps.Get("agentCapabilities.loadSession").Raw; got != "false" {
		t.Errorf("loadSession %s without a sessions folder", got)
	}
	if got := caps.Get("agentCapabilities.sessionCapabilities").Raw; got != `{"close":{},"fork":{},"additionalDirectories":{}}` {
		t.Errorf("sessionCapabilities %s without a sessions folder", got)
	}
	dir := t.TempDir()
	for _, m := range []string{"session/list", "session/load", "session/resume", "session/delete"} {
		params := map[string]any{"sessionId": "0mx4y7xftz50k0wsj8es1k90m", "cwd": dir, "mcpServers": []any{}}
		if m == "session/list" {
			params = map[string]any{}
		}
		c.wantError(c.request(m, params), codeMethodNotFound)
	}
	// Sessions still work while pid runs, and close.
	sid := c.newSession(dir, script("", textTurn("in memory")))
	if res, _ := c.result(c.prompt(sid, "hi"), nil); res.Get("stopReason").String() != "end_turn" {
		t.Errorf("prompt: %s", res.Raw)
	}
	c.result(c.request("session/resume", loadParams(sid, dir)), nil)
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	c.wantError(c.prompt(sid, "closed?"), codeNotFound)
}

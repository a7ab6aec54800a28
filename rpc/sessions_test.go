// This file tests saved sessions through the protocol, against the real binary: every
// message announced by messageEnd survives a kill -9 at any point of a turn; session/load
// brings back the transcript and the same tools; list, fork, close, delete; two daemons and
// one session; a torn last line; and compaction (manual, at the threshold, on overflow).

package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// sessionEnv is a state and config folder shared by the daemons of one test.
func sessionEnv(t *testing.T) []string {
	t.Helper()
	base := t.TempDir()
	return []string{"XDG_CONFIG_HOME=" + filepath.Join(base, "config"), "XDG_STATE_HOME=" + filepath.Join(base, "state")}
}

// toolTurnModel is a scripted model whose first turn calls a parallel batch of two tools
// (one activating a third), then a second turn calling that third tool, then an answer.
func toolTurnModel() obj {
	return scriptModel(
		turn(toolCall("c1", "slowtool", nil), toolCall("c2", "loader", nil)),
		turn(toolCall("c3", "hidden", nil)),
		turn(text("done")),
	)
}

func toolTurnTools() []obj {
	return []obj{
		tool("slowtool", updateStep("half\n"), waitForEnd("c2"), resultStep("slow ok")),
		{"name": "loader", "steps": []obj{{"result": obj{"content": []obj{text("loaded")}, "addedToolNames": []string{"hidden"}}}}},
		inactive(tool("hidden", resultStep("hidden ok"))),
	}
}

// endedMessages returns the messages announced by messageEnd, in order, as compact JSON.
func endedMessages(d *daemon, sid string) []string {
	var out []string
	for _, m := range d.notes(sid) {
		if m.method() == "messageEnd" {
			out = append(out, compactJSON(m.get("params.message").Raw))
		}
	}
	return out
}

// toolEnds returns the params of the toolEnd notifications the daemon sent, by call id.
func toolEnds(d *daemon, sid string) map[string]gjson.Result {
	out := map[string]gjson.Result{}
	for _, m := range d.notes(sid) {
		if m.method() == "toolEnd" {
			out[m.get("params.toolCallId").String()] = m.get("params")
		}
	}
	return out
}

// loadedMessages returns the messages of a session/load result (compactions left out).
func loadedMessages(res gjson.Result) []string {
	var out []string
	for _, m := range res.Get("messages").Array() {
		if m.Get("role").String() != "compaction" {
			out = append(out, compactJSON(m.Raw))
		}
	}
	return out
}

// allTools lists every tool of a tools result, built-in ones included.
func allTools(res gjson.Result) string {
	var names []string
	for _, t := range res.Get("tools.#.name").Array() {
		names = append(names, t.String())
	}
	return strings.Join(names, ",")
}

// A kill -9 right after each kind of notification of a turn (pid frozen there by
// PID_DEBUG_FREEZE_AFTER) loses no message the editor saw end; the reloaded session holds exactly those (plus an error result for a call the kill
// interrupted) and has the tools the session had.
func TestKillAtEveryPointThenLoad(t *testing.T) {
	kinds := []string{"agentStart", "turnStart", "messageStart", "messageUpdate", "messageEnd", "toolStart",
		"toolExecutionStart", "$/toolUpdate", "toolEnd", "turnEnd"}
	for _, kind := range kinds {
		for _, nth := range []int{1, 2} {
			if nth == 2 && (kind == "agentStart" || kind == "$/toolUpdate") {
				continue
			}
			t.Run(fmt.Sprintf("%s#%d", kind, nth), func(t *testing.T) {
				// Each point has its daemons, state and workspace: they run side by side.
				t.Parallel()
				env := sessionEnv(t)
				_, ws := newWorkspaceDir(t, nil)
				// pid stops dead right after sending that notification, so the kill comes
				// at exactly that point: nothing pid would do next gets done.
				typ := strings.ToUpper(strings.TrimPrefix(kind, "$/")[:1]) + strings.TrimPrefix(kind, "$/")[1:]
				d := startProcess(t, processOptions{Env: append(env, fmt.Sprintf("PID_DEBUG_FREEZE_AFTER=%s:%d", typ, nth))})
				initWorkspace(d, obj{}, ws)
				sid := d.newSession(obj{"model": toolTurnModel(), "scriptedTools": toolTurnTools()})
				d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
				// await scans every message received each time: count each one once.
				counted := map[int]bool{}
				d.await("notification "+kind, func(m *wireMsg) bool {
					if m.method() == kind {
						counted[m.seq] = true
					}
					return len(counted) == nth
				})
				d.kill()
				saw := endedMessages(d, sid)

				d2 := startProcess(t, processOptions{Env: env})
				initWorkspace(d2, obj{}, ws)
				if len(saw) == 0 {
					// Nothing was announced, so nothing need be saved: the session may be unknown.
					return
				}
				res := d2.call("session/load", obj{"sessionId": sid})
				got := loadedMessages(res)
				if len(got) < len(saw) {
					t.Fatalf("loaded %d messages, the editor saw %d end:\nloaded %v\nsaw %v", len(got), len(saw), got, saw)
				}
				for i := range saw {
					if !jsonEq(got[i], saw[i]) {
						t.Errorf("message %d: loaded %s, saw %s", i, got[i], saw[i])
					}
				}
				// What follows is only results: those of the calls whose toolEnd the editor saw,
				// as it saw them (each result is saved before its toolEnd is sent), and the
				// interrupted calls' error results.
				ended := toolEnds(d, sid)
				for _, extra := range got[len(saw):] {
					m := gjson.Parse(extra)
					if end, ok := ended[m.Get("toolCallId").String()]; ok && m.Get("role").String() == "toolResult" {
						if !jsonEq(m.Get("content").Raw, end.Get("result.content").Raw) || m.Get("isError").Bool() != end.Get("isError").Bool() {
							t.Errorf("the result of %s, whose toolEnd the editor saw, loaded as %s; its toolEnd said %s", m.Get("toolCallId"), extra, end.Raw)
						}
						continue
					}
					if m.Get("role").String() != "toolResult" || !m.Get("isError").Bool() || !strings.Contains(m.Get("content.0.text").String(), "interrupted when pid stopped") {
						t.Errorf("an extra loaded message that is not an interrupted call's result: %s\nloaded %d: %v\nsaw %d", extra, len(got), got, len(saw))
					}
				}
				// Tools: hidden is active exactly when the loader's result was saved: once
				// its toolEnd was sent.
				_, loaderSaved := ended["c2"]
				if hasHidden := strings.Contains(allTools(res), "hidden"); hasHidden != loaderSaved {
					t.Errorf("tools after load %s; hidden should be active: %v", allTools(res), loaderSaved)
				}
				stopDaemon(t, d2)
			})
		}
	}
}

// The session goes on after a restart: the scripted model plays its next turn, the tools are
// those it had, and a second load in the same daemon returns the live session.
func TestLoadGoesOn(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	model := scriptModel(turn(toolCall("c1", "loader", nil)), turn(text("first answer")), turn(toolCall("c2", "hidden", nil)), turn(text("second answer")))
	sid := d.newSession(obj{"model": model, "scriptedTools": toolTurnTools()})
	d.call("session/prompt", obj{"sessionId": sid, "text": "one"})
	before := allTools(d.call("tools/list", obj{"sessionId": sid}))
	stopDaemon(t, d)

	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	res := d2.call("session/load", obj{"sessionId": sid})
	if after := allTools(res); after != before {
		t.Errorf("tools after load %s, before %s", after, before)
	}
	if n := len(loadedMessages(res)); n != 4 {
		t.Errorf("loaded %d messages, want 4 (user, call, result, answer)", n)
	}
	r := d2.call("session/prompt", obj{"sessionId": sid, "text": "two"})
	if r.Get("stopReason").String() != "stop" || r.Get("messages.#(role==\"assistant\")#.content.0.text").String() == "" {
		t.Fatalf("prompt after load: %s", r.Raw)
	}
	last := r.Get("messages").Array()
	if got := last[len(last)-1].Get("content.0.text").String(); got != "second answer" {
		t.Errorf("the scripted model did not go on with its next turn: %q", got)
	}
	again := d2.call("session/load", obj{"sessionId": sid})
	if n := len(loadedMessages(again)); n != 8 {
		t.Errorf("a second load of the live session has %d messages, want 8", n)
	}
	stopDaemon(t, d2)
}

func TestListForkCloseDelete(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	long := strings.Repeat("word ", 30)
	model := scriptModel(turn(toolCall("c1", "loader", nil), toolCall("c2", "slowtool", nil)), turn(text("answered")))
	sid := d.newSession(obj{"model": model, "scriptedTools": []obj{
		{"name": "loader", "steps": []obj{resultStep("l")}}, tool("slowtool", resultStep("s")),
	}})
	d.call("session/prompt", obj{"sessionId": sid, "text": "  Please\n" + long})
	empty := d.newSession(obj{}) // never prompted: not saved, not listed

	list := d.call("session/list", obj{})
	if list.Get("sessions.#").Int() != 1 || list.Get("sessions.0.sessionId").String() != sid {
		t.Fatalf("session/list = %s", list.Raw)
	}
	s0 := list.Get("sessions.0")
	if title := s0.Get("title").String(); !strings.HasPrefix(title, "Please word") || len([]rune(title)) > 80 {
		t.Errorf("title %q", title)
	}
	if s0.Get("messageCount").Int() != 5 || s0.Get("cwd").String() != ws || s0.Get("createdAt").String() == "" {
		t.Errorf("summary %s", s0.Raw)
	}
	if other := d.call("session/list", obj{"cwd": t.TempDir()}); other.Get("sessions.#").Int() != 0 {
		t.Errorf("cwd filter: %s", other.Raw)
	}

	// Fork: 2 (user + the assistant with two calls) would leave both calls without results.
	code, msg := d.callErr("session/fork", obj{"sessionId": sid, "messageCount": 2})
	if code != -32602 || !strings.Contains(msg, "1 and 4") {
		t.Errorf("fork at 2: %d %q; want -32602 naming 1 and 4", code, msg)
	}
	fork := d.call("session/fork", obj{"sessionId": sid, "messageCount": 4})
	fid := fork.Get("sessionId").String()
	if fid == "" || fid == sid || len(loadedMessages(fork)) != 4 {
		t.Fatalf("fork = %s", fork.Raw)
	}
	// The fork is a session of its own: it answers, the original keeps its 5 messages.
	d.call("session/prompt", obj{"sessionId": fid, "text": "again"})
	if n := d.call("session/list", obj{}).Get("sessions.#").Int(); n != 2 {
		t.Errorf("%d sessions listed after the fork was prompted, want 2", n)
	}
	if n := len(loadedMessages(d.call("session/load", obj{"sessionId": sid}))); n != 5 {
		t.Errorf("the original has %d messages after the fork, want 5", n)
	}

	// Close: unloaded, its file stays; a prompt to it is -32602 until it is loaded again.
	if r := d.call("session/close", obj{"sessionId": sid}); r.Raw != "null" {
		t.Errorf("close = %s", r.Raw)
	}
	if code, _ := d.callErr("session/prompt", obj{"sessionId": sid, "text": "x"}); code != -32602 {
		t.Errorf("prompt after close: %d, want -32602", code)
	}
	d.call("session/load", obj{"sessionId": sid})
	// Delete: gone from the list and from disk.
	if r := d.call("session/delete", obj{"sessionId": sid}); r.Raw != "null" {
		t.Errorf("delete = %s", r.Raw)
	}
	if n := d.call("session/list", obj{}).Get("sessions.#").Int(); n != 1 {
		t.Errorf("%d sessions after delete, want 1", n)
	}
	if code, _ := d.callErr("session/load", obj{"sessionId": sid}); code != -32602 {
		t.Errorf("load of a deleted session: %d", code)
	}
	for _, m := range []string{"session/close", "session/delete"} {
		if code, _ := d.callErr(m, obj{"sessionId": "nosuch"}); code != -32602 {
			t.Errorf("%s of an unknown id: %d, want -32602", m, code)
		}
	}
	if r := d.call("session/delete", obj{"sessionId": empty}); r.Raw != "null" {
		t.Errorf("delete of a session never saved = %s", r.Raw)
	}
	stopDaemon(t, d)
}

// One daemon owns a session at a time; a daemon killed leaves no lock behind.
func TestTwoDaemonsOneSession(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	a := startProcess(t, processOptions{Env: env})
	initWorkspace(a, obj{}, ws)
	sid := a.newSession(obj{"model": scriptModel(turn(text("hi")))})
	a.call("session/prompt", obj{"sessionId": sid, "text": "hello"})
	b := startProcess(t, processOptions{Env: env})
	initWorkspace(b, obj{}, ws)
	code, msg := b.callErr("session/load", obj{"sessionId": sid})
	if code != -32803 || !strings.Contains(msg, "another pid") {
		t.Errorf("load of a session another daemon holds: %d %q", code, msg)
	}
	a.kill()
	if r := b.call("session/load", obj{"sessionId": sid}); r.Get("sessionId").String() != sid {
		t.Errorf("load after the holder died: %s", r.Raw)
	}
	stopDaemon(t, b)
}

// A torn last line (a crash mid-write) is skipped and reported; the rest loads.
func TestTornLastLine(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"model": scriptModel(turn(text("hi")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "hello"})
	stopDaemon(t, d)
	var file string
	filepath.Walk(strings.TrimPrefix(env[1], "XDG_STATE_HOME="), func(p string, info os.FileInfo, err error) error {
		if strings.HasSuffix(p, sid+".jsonl") {
			file = p
		}
		return nil
	})
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"zz","parentId":"`)
	f.Close()
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	res := d2.call("session/load", obj{"sessionId": sid})
	if n := len(loadedMessages(res)); n != 2 {
		t.Errorf("loaded %d messages, want the 2 before the torn line", n)
	}
	found := false
	for _, m := range d2.logMessages() {
		if strings.Contains(m.get("params.message").String(), "reading the saved session") {
			found = true
		}
	}
	if !found {
		t.Error("the torn line was not reported")
	}
	stopDaemon(t, d2)
}

// Compaction: on request, at the threshold (scripted usage), and after an overflow error
// (the call is made again, once).
func TestCompaction(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	big := strings.Repeat("x", 4000) // about 1000 tokens
	usage := func(n int) obj { return obj{"input": n, "output": 10} }
	model := obj{"provider": "script", "contextWindow": 20000,
		"compaction": obj{"reserveTokens": 2000, "keepRecentTokens": 1500},
		"turns": []obj{
			{"content": []obj{text("one " + big)}, "usage": usage(3000)},
			{"content": []obj{text("two " + big)}, "usage": usage(5000)},
			// the threshold (20000-2000) is passed: the next prompt compacts first
			{"content": []obj{text("three")}, "usage": usage(19000)},
			{"content": []obj{text("four")}},
			// an overflow: compact, then the same call again
			{"content": []obj{}, "stopReason": "error", "errorMessage": "This model's maximum context length is 20000 tokens. However, your messages resulted in 25000 tokens."},
			{"content": []obj{text("five")}},
		},
		// threshold, overflow, manual: the summaries never take the turns
		"summaries": []obj{
			{"content": []obj{text("## Goal\nsummary one")}},
			{"content": []obj{text("## Goal\nsummary two")}},
			{"content": []obj{text("## Goal\nsummary three")}},
		}}
	sid := d.newSession(obj{"model": model})
	for _, p := range []string{"a " + big, "b " + big, "c " + big} {
		d.call("session/prompt", obj{"sessionId": sid, "text": p})
	}
	r := d.call("session/prompt", obj{"sessionId": sid, "text": "d " + big})
	if last := r.Get("messages.@reverse.0.content.0.text").String(); last != "four" {
		t.Errorf("after the threshold compaction the answer is %q, want four", last)
	}
	r = d.call("session/prompt", obj{"sessionId": sid, "text": "e " + big})
	if last := r.Get("messages.@reverse.0.content.0.text").String(); last != "five" {
		t.Errorf("after the overflow the answer is %q, want five (the call made again)", last)
	}
	for _, m := range r.Get("messages").Array() {
		if m.Get("stopReason").String() == "error" {
			t.Errorf("the overflow error reached the transcript: %s", m.Raw)
		}
	}
	res := d.call("session/compact", obj{"sessionId": sid, "instructions": "keep the plan"})
	if !strings.Contains(res.Get("summary").String(), "summary three") || res.Get("tokensBefore").Int() <= 0 || res.Get("firstKeptIndex").Int() <= 0 {
		t.Errorf("session/compact = %s", res.Raw)
	}
	var reasons []string
	for _, m := range d.notes(sid) {
		if m.method() == "compactionEnd" {
			reasons = append(reasons, m.get("params.reason").String())
			if m.get("params.error").Exists() {
				t.Errorf("compaction failed: %s", m)
			}
		}
	}
	if strings.Join(reasons, ",") != "threshold,overflow,manual" {
		t.Errorf("compactions %v, want threshold, overflow, manual", reasons)
	}
	// The file keeps everything: after a restart the load lists every message and the three
	// compactions, and the model goes on after them.
	stopDaemon(t, d)
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	loaded := d2.call("session/load", obj{"sessionId": sid})
	if n := loaded.Get(`messages.#(role=="compaction")#`).Get("#").Int(); n != 3 {
		t.Errorf("%d compactions loaded, want 3", n)
	}
	if n := len(loadedMessages(loaded)); n != 10 {
		t.Errorf("%d messages loaded, want all 10", n)
	}
	stopDaemon(t, d2)
}

// A model that reports more usage than its window on every call (issue 19): pid compacts
// once, and again only after the context grew by keepRecentTokens, never before every call;
// the summaries (none scripted) take none of the turns, so every prompt gets its own answer.
func TestCompactionOverReportedUsage(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	const prompts = 12
	var turns []obj
	for i := range prompts {
		turns = append(turns, obj{"content": []obj{text(fmt.Sprintf("answer %d", i))}, "usage": obj{"input": 50000, "output": 10}})
	}
	sid := d.newSession(obj{"model": obj{"provider": "script", "contextWindow": 20000,
		"compaction": obj{"reserveTokens": 2000, "keepRecentTokens": 1500}, "turns": turns}})
	big := strings.Repeat("x", 4000) // about 1000 tokens: the context grows by 1500 in two prompts
	for i := range prompts {
		r := d.call("session/prompt", obj{"sessionId": sid, "text": fmt.Sprintf("%d %s", i, big)})
		if got, want := r.Get("messages.@reverse.0.content.0.text").String(), fmt.Sprintf("answer %d", i); got != want {
			t.Fatalf("prompt %d answered %q, want %q", i, got, want)
		}
	}
	n := 0
	for _, m := range d.notes(sid) {
		if m.method() == "compactionStart" {
			n++
		}
	}
	// Before the first prompt's call nothing is reported yet; then at most every other call.
	if n < 2 || n > prompts/2 {
		t.Errorf("%d compactions in %d prompts, want 2 to %d: once, then each time the context grew by keepRecentTokens", n, prompts, prompts/2)
	}
	stopDaemon(t, d)
}

// This file tests the plan and the usage over ACP (issue 24): todo_write runs without a
// permission request and each change is a plan update (content, priority, status: every
// entry, medium by default); session/load replays the conversation and then sends the last
// plan; usage_update follows each model call with used, size and the cost of a priced
// model; a compaction's update carries what it kept in _meta.pid.kept. Every message is
// checked against the ACP schema by the client (helpers_test.go).

package acp

import (
	"math"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// usageUpdates returns the usage_update updates among ms.
func usageUpdates(ms []*msg) []gjson.Result {
	var out []gjson.Result
	for _, m := range ms {
		if kind, u := m.update(); kind == "usage_update" {
			out = append(out, u)
		}
	}
	return out
}

func TestPlanUpdatesAndLoad(t *testing.T) {
	dir := t.TempDir()
	first := `{"todos":[{"content":"Look around","status":"in_progress","priority":"high"},{"content":"Answer","status":"pending"}]}`
	second := `{"todos":[{"content":"Look around","status":"completed","priority":"high"},{"content":"Answer","status":"in_progress","priority":"low"}]}`
	cfg := script("", toolTurn(call("p1", "todo_write", first)), toolTurn(call("p2", "todo_write", second)), textTurn("Done."))
	a := start(t)
	a.initialize(nil)
	sid := a.newSession(dir, cfg)
	asked := false
	_, before := a.result(a.prompt(sid, "plan it"), func(m *msg) {
		asked = true
		a.respond(m, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
	})
	if asked {
		t.Errorf("todo_write asked for permission")
	}
	var plans []string
	for _, u := range updates(t, sid, before) {
		switch u.Get("sessionUpdate").String() {
		case "plan":
			plans = append(plans, u.Get("entries").Raw)
		case "tool_call":
			if u.Get("toolCallId").String() == "p1" && (u.Get("kind").String() != "think" || u.Get("title").String() != "Update the plan") {
				t.Errorf("todo_write's tool_call: %s", u.Raw)
			}
		}
	}
	wantFirst := `[{"content":"Look around","status":"in_progress","priority":"high"},{"content":"Answer","status":"pending","priority":"medium"}]`
	wantSecond := `[{"content":"Look around","status":"completed","priority":"high"},{"content":"Answer","status":"in_progress","priority":"low"}]`
	if len(plans) != 2 || plans[0] != wantFirst || plans[1] != wantSecond {
		t.Errorf("plan updates %q, want the first plan then the second", plans)
	}
	a.stop()

	b := start(t)
	b.initialize(nil)
	_, before = b.result(b.request("session/load", loadParams(sid, dir)), nil)
	us := updates(t, sid, before)
	if len(us) == 0 {
		t.Fatal("the load sent no update")
	}
	last := us[len(us)-1]
	if last.Get("sessionUpdate").String() != "plan" || last.Get("entries").Raw != wantSecond {
		t.Errorf("the load's last update is %s, want the last plan", last.Raw)
	}
	for _, u := range us[:len(us)-1] {
		if u.Get("sessionUpdate").String() == "plan" {
			t.Errorf("the replay itself sent a plan: %s", u.Raw)
		}
	}
}

func TestUsageUpdateAfterEachCall(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"model":{"provider":"script","contextWindow":100000,"price":{"input":2,"output":10,"cacheRead":0.5},"turns":[` +
		`{"content":[{"type":"toolCall","id":"l1","name":"ls","arguments":{}}],"usage":{"input":1000,"output":20,"cacheRead":500}},` +
		`{"content":[{"type":"text","text":"done"}],"usage":{"input":300,"output":40,"cacheRead":1500}}]}}`
	a := start(t)
	a.initialize(nil)
	sid := a.newSession(dir, cfg)
	_, before := a.result(a.prompt(sid, "list"), nil)
	us := usageUpdates(before)
	if len(us) != 2 {
		t.Fatalf("%d usage_update, want one per model call", len(us))
	}
	cost1 := (1000*2 + 20*10 + 500*0.5) / 1e6
	cost2 := cost1 + (300*2+40*10+1500*0.5)/1e6
	for i, w := range []struct {
		used int64
		cost float64
	}{{1520, cost1}, {1840, cost2}} {
		u := us[i]
		if u.Get("used").Int() != w.used || u.Get("size").Int() != 100000 || u.Get("cost.currency").String() != "USD" ||
			math.Abs(u.Get("cost.amount").Float()-w.cost) > 1e-12 {
			t.Errorf("usage_update %d = %s, want used %d, size 100000, cost %v USD", i, u.Raw, w.used, w.cost)
		}
	}
	// The last update of the turn is the usage after its last model call.
	var kinds []string
	for _, m := range before {
		if k, _ := m.update(); k != "" {
			kinds = append(kinds, k)
		}
	}
	if kinds[len(kinds)-1] != "usage_update" || kinds[len(kinds)-2] != "agent_message_chunk" {
		t.Errorf("updates %v: want the answer, then its usage_update", kinds)
	}
}

func TestCompactionKeptMeta(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 4000) // about 1000 tokens
	plan := `{"todos":[{"content":"Step one","status":"in_progress"}]}`
	model := `{"model":{"provider":"script","contextWindow":20000,"compaction":{"reserveTokens":2000,"keepRecentTokens":1500},"turns":[` +
		`{"content":[{"type":"toolCall","id":"p1","name":"todo_write","arguments":` + plan + `}],"usage":{"input":2000,"output":10}},` +
		`{"content":[{"type":"text","text":"one"}],"usage":{"input":3000,"output":10}},` +
		`{"content":[{"type":"text","text":"two"}],"usage":{"input":19000,"output":10}},` +
		`{"content":[{"type":"text","text":"three"}]}],` +
		`"summaries":[{"content":[{"type":"text","text":"## Goal\nthe summary"}]}]}}`
	a := start(t)
	a.initialize(map[string]any{"session": map[string]any{"compaction": map[string]any{}}})
	sid := a.newSession(dir, model)
	a.result(a.prompt(sid, "a "+big), nil)
	a.result(a.prompt(sid, "b "+big), nil)
	_, before := a.result(a.prompt(sid, "c"), nil)
	var done gjson.Result
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "compaction_update" && u.Get("status").String() == "completed" {
			done = u
		}
	}
	if !done.Exists() {
		t.Fatal("no completed compaction_update")
	}
	if got := done.Get("_meta.pid.kept").Raw; got != `{"userMessage":false,"planEntries":1,"files":[]}` {
		t.Errorf("_meta.pid.kept = %s", got)
	}
	if s := done.Get("summary.0.text").String(); !strings.Contains(s, "the summary") || !strings.Contains(s, "- [in_progress] Step one (priority medium)") {
		t.Errorf("the summary shown is not what the model sees: %q", s)
	}
}

// This file tests the Meter's sums: a fork's past calls at the price of the model of their
// time, a subagent's calls once, a loaded file's every call with its model changes; and
// the measures and event the context meter sends.

package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/store"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func model(t *testing.T, p *provider.Price) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"provider": "openai", "id": "m", "price": p})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The first Add counts the past assistant messages at the price of their time (a model
// change between them), then the call; a later Add only its call; a task result's usage
// once, at the call's price.
func TestAdd(t *testing.T) {
	cheap, dear := &provider.Price{Input: 1}, &provider.Price{Input: 10}
	changes := []history.ModelChange{{At: 2, Config: model(t, dear)}}
	priceAt := func(i int) *provider.Price { return PriceAt(model(t, cheap), changes, i) }
	task := llm.Message{Role: llm.RoleToolResult, ToolName: "task", ToolCallID: "t1", Details: map[string]any{"usage": llm.Usage{Input: 5}}}
	before := []llm.Message{
		{Role: llm.RoleAssistant, Usage: &llm.Usage{Input: 100}},
		{Role: llm.RoleUser},
		{Role: llm.RoleAssistant, Usage: &llm.Usage{Input: 100}},
		task,
	}
	var m Meter
	got := m.Add(before, &llm.Usage{Input: 1000}, dear, "task", priceAt)
	if want := (100*1 + 100*10 + 5*10 + 1000*10) / 1e6; !near(got, want) {
		t.Fatalf("first Add = %v, want %v", got, want)
	}
	again := m.Add(before, &llm.Usage{Input: 1000}, dear, "task", priceAt)
	if want := got + 1000*10/1e6; !near(again, want) {
		t.Fatalf("second Add = %v, want %v (the past and the task counted once)", again, want)
	}
	if free := m.Add(before, &llm.Usage{Input: 1000}, nil, "task", priceAt); !near(free, again) {
		t.Fatalf("a free call changed the total: %v then %v", again, free)
	}
}

// Restore counts every assistant message of the file, at the price of the model of its
// time, and each task result once (as JSON, as loaded), then Add goes on from there.
func TestRestore(t *testing.T) {
	cheap, dear := &provider.Price{Output: 1}, &provider.Price{Output: 10}
	details, _ := json.Marshal(map[string]any{"childSessionId": "c", "usage": llm.Usage{Output: 7}})
	res := &llm.Message{Role: llm.RoleToolResult, ToolName: "task", ToolCallID: "t1", Details: json.RawMessage(details)}
	l := &store.Loaded{Header: store.Header{Model: model(t, cheap)}, Entries: []store.Entry{
		{Kind: store.KindMessage, Message: &llm.Message{Role: llm.RoleAssistant, Usage: &llm.Usage{Output: 100}}},
		{Kind: store.KindModel, Model: model(t, dear)},
		{Kind: store.KindMessage, Message: &llm.Message{Role: llm.RoleAssistant, Usage: &llm.Usage{Output: 100}}},
		{Kind: store.KindMessage, Message: res},
		{Kind: store.KindMessage, Message: res},
	}}
	var m Meter
	m.Restore(l, "task")
	got := m.Add([]llm.Message{*res}, &llm.Usage{}, dear, "task", func(int) *provider.Price { return dear })
	if want := (100*1 + 100*10 + 7*10) / 1e6; !near(got, want) {
		t.Fatalf("restored total %v, want %v (the file's calls, the task once, the past not again)", got, want)
	}
}

// taskUsage reads the usage of the named tool's results only; PriceOf is nil without a
// model; ReportedTokens falls back to the total; Event carries a cost only with a price.
func TestMeasures(t *testing.T) {
	res := &llm.Message{Role: llm.RoleToolResult, ToolName: "task", ToolCallID: "t9", Details: map[string]any{"usage": map[string]int{"input": 3}}}
	if id, u := taskUsage(res, "task"); id != "t9" || u == nil || u.Input != 3 {
		t.Errorf("TaskUsage = %q, %+v", id, u)
	}
	if _, u := taskUsage(res, "other"); u != nil {
		t.Errorf("another tool's result read as a task's: %+v", u)
	}
	if p := priceOf(nil); p != nil {
		t.Errorf("PriceOf(nil) = %+v", p)
	}
	if n := reportedTokens(&llm.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Total: 99}); n != 10 {
		t.Errorf("ReportedTokens of the four counts = %d, want 10", n)
	}
	if n := reportedTokens(&llm.Usage{Total: 99}); n != 99 {
		t.Errorf("ReportedTokens of a total only = %d, want 99", n)
	}
	if ev := Event(5, 100, nil, 3); ev.Cost != nil || ev.Used != 5 || ev.Size != 100 {
		t.Errorf("Event without a price = %+v", ev)
	}
	if ev := Event(5, 100, &provider.Price{}, 3); ev.Cost == nil || ev.Cost.Amount != 3 || ev.Cost.Currency != "USD" {
		t.Errorf("Event with a price = %+v", ev)
	}
}

// ContextUsed takes a call's reported usage, and estimates (the context sent, asked only
// then, plus the message) when there is none, it is all zeros, or the call failed or was
// aborted (a failed call's report need not cover the context).
func TestContextUsed(t *testing.T) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text(strings.Repeat("word ", 400))}, Usage: &llm.Usage{Input: 1000, Output: 200}}
	asked := 0
	sent := func() int { asked++; return 5000 }
	if got := ContextUsed(&m, sent); got != 1200 || asked != 0 {
		t.Errorf("reported: %d (context asked %d times), want 1200 without asking", got, asked)
	}
	est := compact.EstimateTokens(&m)
	if est == 0 {
		t.Fatal("the message's estimate is 0")
	}
	for name, change := range map[string]func(*llm.Message){
		"no usage":   func(m *llm.Message) { m.Usage = nil },
		"zero usage": func(m *llm.Message) { m.Usage = &llm.Usage{} },
		"error":      func(m *llm.Message) { m.StopReason = llm.StopError },
		"aborted":    func(m *llm.Message) { m.StopReason = llm.StopAborted },
	} {
		c := m
		change(&c)
		asked = 0
		if got := ContextUsed(&c, sent); got != 5000+compact.EstimateTokens(&c) || asked != 1 {
			t.Errorf("%s: %d (context asked %d times), want the estimate %d", name, got, asked, 5000+compact.EstimateTokens(&c))
		}
	}
}

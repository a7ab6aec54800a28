package session

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

// A subagent's model calls are part of what its parent's session paid: the task result's
// usage is counted once, at the session's price, live (a result as the run holds it) and
// when loaded from the file (its details as JSON); so is every assistant message of the
// file, a rewound branch's included.
func TestCostCountsSubagentsOnceAndTheWholeFile(t *testing.T) {
	p := &Price{Input: 1, Output: 10}
	live := llm.Message{Role: llm.RoleToolResult, ToolName: TaskName, ToolCallID: "t1", Details: TaskDetails{ChildSessionID: "c", Usage: llm.Usage{Input: 100, Output: 10}}}
	s := &Session{}
	before := []llm.Message{{Role: llm.RoleUser}, live}
	first := s.addCost(before, &llm.Usage{Input: 1000, Output: 100}, p)
	second := s.addCost(before, &llm.Usage{Input: 1000, Output: 100}, p)
	if want := (100 + 100 + 1000 + 1000) / 1e6; math.Abs(first-want) > 1e-12 {
		t.Errorf("first call: cost %v, want %v (the child's usage and the call)", first, want)
	}
	if want := first + (1000+1000)/1e6; math.Abs(second-want) > 1e-12 {
		t.Errorf("second call: cost %v, want %v (the child counted once)", second, want)
	}

	raw, err := json.Marshal(live.Details)
	if err != nil {
		t.Fatal(err)
	}
	saved := live
	saved.Details = json.RawMessage(raw)
	model, _ := json.Marshal(map[string]any{"provider": "openai", "id": "m", "price": p})
	l := &store.Loaded{Header: store.Header{Model: model}, Entries: []store.Entry{
		{Kind: store.KindMessage, Message: &llm.Message{Role: llm.RoleAssistant, Usage: &llm.Usage{Input: 1000, Output: 100}}},
		{Kind: store.KindMessage, Message: &saved},
		// A branch a rewind took back: still paid for.
		{Kind: store.KindMessage, Message: &llm.Message{Role: llm.RoleAssistant, Usage: &llm.Usage{Input: 2000, Output: 200}}},
	}}
	loaded := &Session{}
	loaded.countSaved(l)
	got := loaded.addCost(nil, &llm.Usage{}, p)
	if want := (1000 + 1000 + 100 + 100 + 2000 + 2000) / 1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("loaded: cost %v, want %v", got, want)
	}
	again := loaded.addCost([]llm.Message{saved}, &llm.Usage{}, p)
	if math.Abs(again-got) > 1e-12 {
		t.Errorf("the loaded task result counted twice: %v then %v", got, again)
	}
}

// This file tests the reading of a branch (Replay), the items of a transcript, the snapshot
// of a live session read back as a fork reads it, and where a fork may cut.

package history

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

func msg(role llm.Role, text string) *llm.Message {
	return &llm.Message{Role: role, Content: []llm.Content{llm.Text(text)}}
}

// Replay reads messages, a model change (which restarts the counts of calls and summaries),
// a compaction after an overflow (a call in no message), a mode entry and the notes.
func TestReplay(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	branch := []store.Entry{
		{Kind: store.KindMessage, ID: "a", Message: msg(llm.RoleUser, "hi")},
		{Kind: store.KindMessage, ID: "b", Message: msg(llm.RoleAssistant, "hello")},
		{Kind: store.KindModel, ID: "m1", Model: json.RawMessage(`{"provider":"script"}`)},
		{Kind: store.KindMessage, ID: "c", Message: msg(llm.RoleAssistant, "again")},
		{Kind: store.KindCompaction, ID: "k", Timestamp: when, Compaction: &store.Compaction{Summary: "sum", FirstKeptID: "c", TokensBefore: 900, Reason: ReasonOverflow}},
		{Kind: store.KindMode, Mode: "plan"},
		{Kind: store.KindMessage, ID: "d", Message: msg(llm.RoleUser, "go on")},
		{Kind: store.KindCompaction, ID: "k2", Compaction: &store.Compaction{Summary: "s2", FirstKeptID: "gone", Reason: ReasonManual}},
		{Kind: store.KindMessage, ID: "nil"},
	}
	r := Replay(branch, map[string]string{"d": "plan", "zz": "auto"})
	if len(r.Transcript) != 4 || !slices.Equal(r.EntryIDs, []string{"a", "b", "c", "d"}) {
		t.Fatalf("transcript %d messages, ids %v; want a b c d", len(r.Transcript), r.EntryIDs)
	}
	if r.Calls != 2 || r.Summaries != 2 {
		t.Errorf("calls %d, summaries %d; want 2 (c and the overflowed call, after the model change) and 2", r.Calls, r.Summaries)
	}
	if len(r.ModelChanges) != 1 || r.ModelChanges[0].At != 2 || r.ModelChanges[0].EntryID != "m1" || string(r.ModelChanges[0].Config) != `{"provider":"script"}` {
		t.Errorf("model changes %+v", r.ModelChanges)
	}
	want := []Compaction{
		{At: 3, FirstKept: 2, Summary: "sum", TokensBefore: 900, Reason: ReasonOverflow, EntryID: "k", Time: when},
		{At: 4, FirstKept: 4, Summary: "s2", Reason: ReasonManual, EntryID: "k2"},
	}
	if !slices.Equal(r.Compactions, want) {
		t.Errorf("compactions %+v, want %+v (an unknown first kept id keeps nothing)", r.Compactions, want)
	}
	if r.Mode != "plan" || !r.ModeSaved || len(r.Notes) != 1 || r.Notes[3] != "plan" {
		t.Errorf("mode %q (saved %v), notes %v", r.Mode, r.ModeSaved, r.Notes)
	}
	if r := Replay(branch[:2], nil); r.ModeSaved || r.Notes != nil {
		t.Errorf("a branch without mode entry nor notes: %+v", r)
	}
}

// A compaction is listed before the first message after it, its first kept message named
// by its index among the items; JSON shows it with the role "compaction".
func TestItems(t *testing.T) {
	tr := []llm.Message{*msg(llm.RoleUser, "0"), *msg(llm.RoleAssistant, "1"), *msg(llm.RoleUser, "2"), *msg(llm.RoleAssistant, "3")}
	comps := []Compaction{{At: 3, FirstKept: 2, Summary: "s", Time: time.UnixMilli(42)}, {At: 4, FirstKept: 3, Summary: "late"}}
	items := Items(tr, comps)
	var shape []string
	for _, it := range items {
		if it.Message != nil {
			shape = append(shape, it.Message.Text())
		} else {
			shape = append(shape, "C"+it.Compaction.Summary)
		}
	}
	if !slices.Equal(shape, []string{"0", "1", "2", "Cs", "3", "Clate"}) {
		t.Fatalf("items %v", shape)
	}
	if items[3].Compaction.FirstKeptIndex != 2 || items[5].Compaction.FirstKeptIndex != 4 {
		t.Errorf("first kept indexes %d and %d, want 2 and 4", items[3].Compaction.FirstKeptIndex, items[5].Compaction.FirstKeptIndex)
	}
	if ItemIndex(comps, 3) != 4 || ItemIndex(comps, 4) != 6 || ItemIndex(nil, 2) != 2 {
		t.Errorf("ItemIndex: %d %d %d", ItemIndex(comps, 3), ItemIndex(comps, 4), ItemIndex(nil, 2))
	}
	b, err := json.Marshal(items[3])
	if err != nil || string(b) != `{"role":"compaction","summary":"s","tokensBefore":0,"firstKeptIndex":2,"timestamp":42}` {
		t.Errorf("JSON of a compaction: %s, %v", b, err)
	}
	if b, _ := json.Marshal(items[0]); !strings.Contains(string(b), `"role":"user"`) {
		t.Errorf("JSON of a message: %s", b)
	}
	if KeptFrom(comps) != 3 || KeptFrom(nil) != 0 {
		t.Errorf("KeptFrom: %d, %d", KeptFrom(comps), KeptFrom(nil))
	}
}

// A live session's snapshot, read back by Replay with the notes it names, gives the same
// transcript, compactions, model changes and notes: what a fork of it starts from.
func TestSnapshotReadsBack(t *testing.T) {
	tr := []llm.Message{*msg(llm.RoleUser, "0"), *msg(llm.RoleAssistant, "1"), *msg(llm.RoleUser, "2"), *msg(llm.RoleAssistant, "3")}
	comps := []Compaction{{At: 2, FirstKept: 1, Summary: "s", TokensBefore: 10, Reason: ReasonThreshold}}
	changes := []ModelChange{{At: 0, Config: json.RawMessage(`{"id":"a"}`)}, {At: 3, Config: json.RawMessage(`{"id":"b"}`)}}
	l, named := Snapshot(store.Header{ID: "s1", Mode: "auto"}, tr, comps, changes, map[int]string{2: "plan"})
	if l.Header.ID != "s1" || l.Header.Mode != "auto" {
		t.Fatalf("header %+v", l.Header)
	}
	r := Replay(l.Branch, named)
	var texts []string
	for _, m := range r.Transcript {
		texts = append(texts, m.Text())
	}
	if !slices.Equal(texts, []string{"0", "1", "2", "3"}) {
		t.Fatalf("transcript read back %v", texts)
	}
	if len(r.Compactions) != 1 || r.Compactions[0].At != 2 || r.Compactions[0].FirstKept != 1 || r.Compactions[0].Summary != "s" || r.Compactions[0].TokensBefore != 10 {
		t.Errorf("compactions read back %+v", r.Compactions)
	}
	if len(r.ModelChanges) != 2 || r.ModelChanges[0].At != 0 || r.ModelChanges[1].At != 3 || string(r.ModelChanges[1].Config) != `{"id":"b"}` {
		t.Errorf("model changes read back %+v", r.ModelChanges)
	}
	if len(r.Notes) != 1 || r.Notes[2] != "plan" {
		t.Errorf("notes read back %v", r.Notes)
	}
}

// A fork may not cut between a tool call and its result; Nearest names the counts around
// a refused one.
func TestForkCounts(t *testing.T) {
	call := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("t1", "read", json.RawMessage(`{}`))}}
	result := &llm.Message{Role: llm.RoleToolResult, ToolCallID: "t1", ToolName: "read"}
	branch := []store.Entry{
		{Kind: store.KindMessage, Message: msg(llm.RoleUser, "u")},
		{Kind: store.KindMode, Mode: "plan"},
		{Kind: store.KindMessage, Message: call},
		{Kind: store.KindMessage, Message: result},
		{Kind: store.KindCompaction, Compaction: &store.Compaction{Summary: "s"}},
		{Kind: store.KindMessage, Message: msg(llm.RoleAssistant, "done")},
	}
	got := ForkCounts(branch)
	if !slices.Equal(got, []int{0, 1, 3, 4, 5}) {
		t.Fatalf("ForkCounts = %v, want every count but 2 (the call without its result)", got)
	}
	below, above := Nearest(got, 2)
	if !slices.Equal(below, []string{"1"}) || !slices.Equal(above, []string{"3"}) {
		t.Errorf("Nearest(2) = %v, %v", below, above)
	}
	if below, above := Nearest(got, 9); !slices.Equal(below, []string{"5"}) || above != nil {
		t.Errorf("Nearest(9) = %v, %v", below, above)
	}
}

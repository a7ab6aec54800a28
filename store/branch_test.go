package store

// Tests of the reading of a branch: the last prompt's checkpoint, the results of a batch put
// back in the order of their calls, the calls left without a result, the items and the holes.

import (
	"slices"
	"testing"

	"github.com/pid-agent/pid/llm"
)

func TestLastPromptCheckpoint(t *testing.T) {
	user := func(text string) Entry {
		m := llm.NewUser(text)
		return Entry{Kind: KindMessage, Message: &m}
	}
	mark := func(id, safety string) Entry {
		return Entry{Kind: KindCheckpoint, Checkpoint: &Checkpoint{ID: id, Prompt: "p " + id, Safety: safety}}
	}
	rewound := []Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two"), mark("c3", ""), {Kind: KindRewind}}
	for _, tc := range []struct {
		branch []Entry
		want   string
	}{
		{nil, ""},
		{[]Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two")}, "c2"},
		// A rewind to c3 leaves its mark on the branch with no message after it.
		{rewound, "c2"},
		// A rewind's own checkpoint is no prompt's.
		{[]Entry{mark("c1", ""), user("one"), mark("s1", "c1"), user("after")}, "c1"},
	} {
		if id, _ := LastPromptCheckpoint(tc.branch); id != tc.want {
			t.Errorf("lastPromptCheckpoint = %q, want %q", id, tc.want)
		}
	}
}

func msgEntry(id string, m llm.Message) Entry { return Entry{Kind: KindMessage, ID: id, Message: &m} }

func result(id string) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, Content: []llm.Content{llm.Text(id)}}
}

// The results of a batch, written as the calls ended, are read back in the order of their
// calls, with a mode change among them kept in its place; a batch in order is the branch
// itself.
func TestSourceOrder(t *testing.T) {
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("a", "x", nil), llm.NewToolCall("b", "x", nil), llm.NewToolCall("c", "x", nil)}}
	branch := []Entry{msgEntry("m1", asst), msgEntry("rc", result("c")), {Kind: KindMode, ID: "mode", Mode: "plan"}, msgEntry("ra", result("a")), msgEntry("rb", result("b"))}
	var ids []string
	for _, e := range SourceOrder(branch) {
		ids = append(ids, e.ID)
	}
	if want := []string{"m1", "ra", "mode", "rb", "rc"}; !slices.Equal(ids, want) {
		t.Errorf("order %v, want %v", ids, want)
	}
	if branch[1].ID != "rc" {
		t.Error("SourceOrder changed its argument")
	}
	inOrder := []Entry{msgEntry("m1", asst), msgEntry("ra", result("a"))}
	if got := SourceOrder(inOrder); &got[0] != &inOrder[0] {
		t.Error("a branch in order was copied")
	}
}

// The calls of the last assistant message without a result after it, in order; the tail's
// results sorted into the calls' order, with their ids alike.
func TestUnansweredAndSortResults(t *testing.T) {
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("a", "x", nil), llm.NewToolCall("b", "y", nil)}}
	tr := []llm.Message{llm.NewUser("go"), asst, result("b")}
	if got := UnansweredCalls(tr); len(got) != 1 || got[0].ID != "a" || got[0].Name != "x" {
		t.Errorf("unanswered %+v", got)
	}
	tr = append(tr, result("a"))
	ids := []string{"u", "m", "rb", "ra"}
	SortResults(tr, ids)
	if tr[2].ToolCallID != "a" || tr[3].ToolCallID != "b" || !slices.Equal(ids, []string{"u", "m", "ra", "rb"}) {
		t.Errorf("sorted %v %v", tr[2:], ids)
	}
}

// Items are the messages and compactions; a prefix of n items keeps the model changes that
// come before the next item.
func TestItems(t *testing.T) {
	branch := []Entry{msgEntry("1", llm.NewUser("a")), {Kind: KindModel, ID: "model"}, {Kind: KindCompaction, ID: "c", Compaction: &Compaction{}}, msgEntry("2", llm.NewUser("b"))}
	if n := ItemCount(branch); n != 3 {
		t.Errorf("ItemCount %d", n)
	}
	if got := ItemPrefix(branch, 1); len(got) != 2 || got[1].ID != "model" {
		t.Errorf("prefix of 1: %+v", got)
	}
	if got := ItemPrefix(branch, 3); len(got) != 4 {
		t.Errorf("prefix of all: %d entries", len(got))
	}
}

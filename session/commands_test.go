// This file tests the part of the commands that needs no session: finding the last
// prompt's checkpoint on a session file's branch (the catalogue's tests are package
// commands'; the daemon-level tests are rpc/commands_test.go and acp/commands_test.go).

package session

import (
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

func TestLastPromptCheckpoint(t *testing.T) {
	user := func(text string) store.Entry {
		m := llm.NewUser(text)
		return store.Entry{Kind: store.KindMessage, Message: &m}
	}
	mark := func(id, safety string) store.Entry {
		return store.Entry{Kind: store.KindCheckpoint, Checkpoint: &store.Checkpoint{ID: id, Prompt: "p " + id, Safety: safety}}
	}
	rewound := []store.Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two"), mark("c3", ""), {Kind: store.KindRewind}}
	for _, tc := range []struct {
		branch []store.Entry
		want   string
	}{
		{nil, ""},
		{[]store.Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two")}, "c2"},
		// A rewind to c3 leaves its mark on the branch with no message after it.
		{rewound, "c2"},
		// A rewind's own checkpoint is no prompt's.
		{[]store.Entry{mark("c1", ""), user("one"), mark("s1", "c1"), user("after")}, "c1"},
	} {
		if id, _ := lastPromptCheckpoint(tc.branch); id != tc.want {
			t.Errorf("lastPromptCheckpoint = %q, want %q", id, tc.want)
		}
	}
}

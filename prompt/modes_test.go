package prompt

import (
	"slices"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// The messages a note names by transcript index carry it, the others are appended as they
// are, and the messages given are left as they were.
func TestAppendNoted(t *testing.T) {
	dst := []llm.Message{llm.NewUser("before")}
	msgs := []llm.Message{llm.NewUser("five"), llm.NewUser("six"), llm.NewUser("seven")}
	out := AppendNoted(dst, msgs, 5, map[int]string{4: ModeAuto, 6: ModePlan, 9: ModeBypass})
	var got []string
	for _, m := range out {
		var parts []string
		for _, c := range m.Content {
			parts = append(parts, c.Text)
		}
		got = append(got, parts...)
	}
	want := []string{"before", "five", ModeNote(ModePlan), "six", "seven"}
	if !slices.Equal(got, want) {
		t.Errorf("AppendNoted gave %q, want %q", got, want)
	}
	if len(msgs[1].Content) != 1 {
		t.Error("AppendNoted changed the message it was given")
	}
}

// This file tests the walk of a branch for its mode notes.

package history

import (
	"maps"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/store"
)

// The first user message or tool result after the mode left what the model was told gets
// the note; an assistant message never does; a mode changed and changed back before any of
// them notes nothing; a subagent starts told its own mode.
func TestNotes(t *testing.T) {
	m := func(id string, role llm.Role) store.Entry {
		return store.Entry{Kind: store.KindMessage, ID: id, Message: &llm.Message{Role: role}}
	}
	mode := func(id string) store.Entry { return store.Entry{Kind: store.KindMode, Mode: id} }
	branch := []store.Entry{
		m("a", llm.RoleUser),
		mode(prompt.ModePlan),
		m("b", llm.RoleAssistant),
		m("c", llm.RoleToolResult),
		m("d", llm.RoleUser),
		mode(prompt.ModeAuto), mode(""), // back to default (an older pid's empty mode) before any message
		m("e", llm.RoleUser),
		mode(prompt.ModeAuto),
		m("f", llm.RoleUser),
	}
	got := Notes(store.Header{}, branch)
	if want := map[string]string{"c": prompt.ModePlan, "e": prompt.ModeDefault, "f": prompt.ModeAuto}; !maps.Equal(got, want) {
		t.Fatalf("notes %v, want %v", got, want)
	}
	sub := store.Header{ParentSessionID: "p", Mode: prompt.ModeAuto}
	if ToldStart(sub) != prompt.ModeAuto || ToldStart(store.Header{Mode: prompt.ModeAuto}) != prompt.ModeDefault {
		t.Errorf("ToldStart: subagent %q, session %q", ToldStart(sub), ToldStart(store.Header{Mode: prompt.ModeAuto}))
	}
	if got := Notes(sub, []store.Entry{m("a", llm.RoleUser)}); len(got) != 0 {
		t.Errorf("a subagent's first message noted %v", got)
	}
	if got := Notes(store.Header{Mode: prompt.ModePlan}, []store.Entry{m("a", llm.RoleUser)}); got["a"] != prompt.ModePlan {
		t.Errorf("a session saved in plan mode: %v, want its first message noted", got)
	}
}

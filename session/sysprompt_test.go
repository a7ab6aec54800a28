package session

// Tests of the system prompt a session sends its model (package prompt makes it; its own
// tests check the text): what a mode change does to the request (modenote.go). Which servers
// bring tool_search is mcp.HasDeferred's test.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
)

// requestRecorder is a provider that keeps each request whole and answers "ok".
type requestRecorder struct{ reqs []*llm.Request }

func (r *requestRecorder) Stream(_ context.Context, req *llm.Request, _ llm.StreamSink) llm.Message {
	r.reqs = append(r.reqs, req)
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("ok")}, StopReason: llm.StopEnd}
}

// A mode change changes neither the system prompt nor the tools (exit_plan_mode is offered
// in every mode), so the provider's cache holds: the model reads of it in a note at the start
// of the next message, and the earlier messages are sent as before.
func TestModeChangeKeepsPromptAndTools(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	s, err := h.New(Config{Cwd: t.TempDir(), Mode: ModePlan}, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &requestRecorder{}
	s.model.cur = &sessionModel{Config: &ModelConfig{Provider: "script"}, Provider: rec, Summarizer: rec}
	send := func(text string) *llm.Request {
		t.Helper()
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		defer s.End()
		if _, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser(text)}); err != nil {
			t.Fatal(err)
		}
		return rec.reqs[len(rec.reqs)-1]
	}
	first := send("one")
	if err := s.SetMode(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	second := send("two")
	third := send("three")
	tools := func(r *llm.Request) string { b, _ := json.Marshal(r.Tools); return string(b) }
	if first.SystemPrompt != second.SystemPrompt || first.SystemPrompt != third.SystemPrompt {
		t.Errorf("the system prompt changed with the mode:\n%s\n---\n%s", first.SystemPrompt, second.SystemPrompt)
	}
	if tools(first) != tools(second) || !strings.Contains(tools(first), `"name":"exit_plan_mode"`) {
		t.Errorf("the tools changed with the mode, or lack exit_plan_mode:\n%s\n---\n%s", tools(first), tools(second))
	}
	msgs := func(r *llm.Request) string { b, _ := json.Marshal(r.Messages); return string(b) }
	if !strings.HasPrefix(msgs(second), strings.TrimSuffix(msgs(first), "]")) || !strings.HasPrefix(msgs(third), strings.TrimSuffix(msgs(second), "]")) {
		t.Errorf("earlier messages were sent otherwise:\n%s\n---\n%s", msgs(first), msgs(second))
	}
	noteOf := func(m llm.Message) string {
		if len(m.Content) > 1 && strings.HasPrefix(m.Content[0].Text, "<system-reminder>") {
			return m.Content[0].Text
		}
		return ""
	}
	if got := noteOf(first.Messages[0]); !strings.HasPrefix(got, "<system-reminder>The mode is now plan: ") {
		t.Errorf("a session started in plan mode: first message's note %q", got)
	}
	if got := noteOf(second.Messages[2]); got != prompt.ModeNote(ModeAcceptEdits) || second.Messages[2].Content[1].Text != "two" {
		t.Errorf("after plan -> acceptEdits the next message is %+v", second.Messages[2])
	}
	if got := noteOf(third.Messages[4]); got != "" {
		t.Errorf("a message after the note, in the same mode, has a note: %q", got)
	}
	// The transcript, and what the editor is shown, hold the messages as sent by the person.
	for _, it := range s.Items() {
		if m := it.Message; m != nil && strings.Contains(m.Text(), "system-reminder") {
			t.Errorf("the note is in the session's items: %+v", m)
		}
	}
}

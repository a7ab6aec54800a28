package session

// Tests of the mode notes (modenote.go): the messages that carry one, and the same notes
// after a load, a fork of the live session, a fork of its file, and a compaction.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// switchingFace allows every call, and switches the session to mode at the first question.
type switchingFace struct {
	quietFace
	mode string
}

func (f *switchingFace) Ask(_ context.Context, s *Session, _ Approval) (Answer, error) {
	if f.mode != "" {
		if err := s.SetMode(f.mode); err != nil {
			return Answer{}, err
		}
		f.mode = ""
	}
	return Answer{Decision: "allow"}, nil
}

// viewJSON returns what the model sees of the session's transcript now, as JSON.
func viewJSON(t *testing.T, s *Session) string {
	t.Helper()
	b, err := json.Marshal(s.view(s.agent.Transcript()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// notesOf returns, for each message the model sees, the mode its note names ("" for none).
func notesOf(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if len(m.Content) > 0 && strings.HasPrefix(m.Content[0].Text, "<system-reminder>The mode is now ") {
			out[i] = strings.SplitN(strings.TrimPrefix(m.Content[0].Text, "<system-reminder>The mode is now "), ":", 2)[0]
		}
	}
	return out
}

func TestModeNotesSurviveLoadForkAndCompaction(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	call := func(id string) llm.Content {
		return llm.Content{Type: llm.ContentToolCall, ID: id, Name: "deploy", Arguments: json.RawMessage(`{}`)}
	}
	model := &ModelConfig{Provider: "script", Compaction: json.RawMessage(`{"keepRecentTokens":1}`), Turns: []llm.Turn{
		{Content: []llm.Content{llm.Text("one")}},
		{Content: []llm.Content{call("d1"), call("d2")}},
		{Content: []llm.Content{llm.Text("deployed")}},
	}}
	face := &switchingFace{}
	s, err := h.New(Config{Cwd: t.TempDir(), Mode: ModePlan, Model: model, ScriptedTools: []ScriptedTool{
		{Name: "deploy", RequiresApproval: true, Steps: []ScriptStep{{Result: &ScriptedValue{}}}},
	}}, Options{Face: face})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(s *Session, text string) {
		t.Helper()
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		defer s.End()
		if _, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser(text)}); err != nil {
			t.Fatal(err)
		}
	}
	prompt(s, "hello")
	if err := s.SetMode(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	face.mode = ModeAuto // the person switches to auto while the first call is asked about
	prompt(s, "deploy twice")
	live := viewJSON(t, s)
	var msgs []llm.Message
	if err := json.Unmarshal([]byte(live), &msgs); err != nil {
		t.Fatal(err)
	}
	// user, assistant, user, assistant(d1, d2), result, result, assistant
	got := notesOf(msgs)
	if len(got) != 7 || got[0] != ModePlan || got[1] != "" || got[2] != ModeAcceptEdits || got[3] != "" || got[6] != "" {
		t.Fatalf("notes %q, want plan on the first message, acceptEdits on the second prompt", got)
	}
	if (got[4] == ModeAuto) == (got[5] == ModeAuto) || got[4]+got[5] != ModeAuto {
		t.Errorf("notes on the results %q, want auto on the one saved first only", got[4:6])
	}
	items := len(s.Items())

	fork, _, err := h.Fork(s.ID(), items, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	if v := viewJSON(t, fork); v != live {
		t.Errorf("a fork of the live session sees:\n%s\nwant\n%s", v, live)
	}
	forkID := fork.ID()
	if err := h.CloseSession(forkID); err != nil {
		t.Fatal(err)
	}
	if err := h.CloseSession(s.ID()); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"session": s.ID(), "its live fork": forkID} {
		loaded, _, err := h.Load(id, Options{Face: quietFace{}})
		if err != nil {
			t.Fatal(err)
		}
		if v := viewJSON(t, loaded); v != live {
			t.Errorf("the loaded %s sees:\n%s\nwant\n%s", name, v, live)
		}
		if name == "session" && loaded.Mode() != ModeAuto {
			t.Errorf("loaded in %s, want auto", loaded.Mode())
		}
		if err := h.CloseSession(id); err != nil {
			t.Fatal(err)
		}
	}
	fromFile, _, err := h.Fork(s.ID(), items, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	if v := viewJSON(t, fromFile); v != live {
		t.Errorf("a fork of the file sees:\n%s\nwant\n%s", v, live)
	}

	// A compaction that summarizes the notes away says the mode in the summary.
	loaded, _, err := h.Load(s.ID(), Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loaded.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	after := loaded.view(loaded.agent.Transcript())
	if n := notesOf(after); n[0] != ModeAuto {
		t.Errorf("after the compaction the notes are %q: the summary does not say the mode", n)
	}
}

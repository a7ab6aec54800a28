package session_test

// Issue 31: the "subagents" settings come from the settings files too (the user's, and a
// trusted workspace folder's, whose keys win), under the editor's (session/new); an
// untrusted folder's are ignored. What a child may take is read from its task result: the
// child's script takes more turns than any limit, and the result says which limit stopped it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

func TestSubagentSettingsFromTheSettingsFiles(t *testing.T) {
	isolate(t)
	base := t.TempDir()
	trusted, untrusted := filepath.Join(base, "trusted"), filepath.Join(base, "untrusted")
	writeFile := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pid", "settings.json"), `{"subagents": {"maxTurns": 2}, "trustedFolders": ["`+trusted+`"]}`)
	writeFile(filepath.Join(trusted, ".pid", "settings.json"), `{"subagents": {"maxTurns": 1}}`)
	writeFile(filepath.Join(untrusted, ".pid", "settings.json"), `{"subagents": {"maxTurns": 1}}`)
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{trusted, untrusted})
	defer h.Close()

	var childTurns []llm.Turn
	for i := range 5 {
		childTurns = append(childTurns, llm.Turn{Content: []llm.Content{{Type: llm.ContentToolCall, ID: fmt.Sprintf("l%d", i), Name: "ls", Arguments: []byte(`{"path":"."}`)}}})
	}
	model := func() *session.ModelConfig {
		return &session.ModelConfig{Provider: "script", Turns: []llm.Turn{
			{Content: []llm.Content{{Type: llm.ContentToolCall, ID: "t1", Name: session.TaskName, Arguments: []byte(`{"description":"look","prompt":"look around"}`)}}},
			{Content: []llm.Content{llm.Text("done")}}},
			Subagents: map[string]*session.ModelConfig{"look": {Provider: "script", Turns: childTurns}}}
	}
	for _, tc := range []struct {
		name   string
		cwd    string
		editor session.SubagentSettings
		want   int
	}{
		{"user settings", untrusted, session.SubagentSettings{}, 2}, // the untrusted folder's 1 is ignored
		{"trusted workspace over user", trusted, session.SubagentSettings{}, 1},
		{"session/new over both", trusted, session.SubagentSettings{MaxTurns: 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := h.New(session.Config{Cwd: tc.cwd, Model: model(), Subagents: tc.editor}, session.Options{Face: face{}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.CloseSession(s.ID())
			res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("go")})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, m := range res.Messages {
				if m.Role == llm.RoleToolResult && m.ToolCallID == "t1" {
					got = m.Text()
				}
			}
			if want := fmt.Sprintf("stopped after %d turns, its limit (subagents.maxTurns)", tc.want); !strings.Contains(got, want) {
				t.Errorf("task result %q, want it to say %q", got, want)
			}
		})
	}
}

// This file tests what the settings files say of a session's model, with a real settings
// Loader over files in the test's folders: the model they name (a trusted workspace
// folder's over the user's), what a "models" entry adds, a saved model left as saved, why
// a session has no model, an agent's model, and a model a person picks.

package sessionmodel

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/models"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/setup"
)

// world is a user settings file and one workspace folder's, read by a real Loader.
type world struct {
	user, root string
	st         Settings
	// reports are what Report and ReportOnce were told.
	reports, once []string
}

// newWorld writes the user settings user and the workspace folder's ws ("" for no file),
// and loads them, trusting the folder when trusted is set.
func newWorld(t *testing.T, user, ws string, trusted bool) *world {
	t.Helper()
	noKeys(t)
	env := xdgtest.Isolate(t)
	w := &world{user: filepath.Join(env.Config, "pid", "settings.json"), root: t.TempDir()}
	write(t, w.user, user)
	if ws != "" {
		write(t, settings.WorkspacePath(w.root), ws)
	}
	l := settings.NewLoader(settings.LoaderOptions{WorkspaceRoots: []string{w.root}, Trusted: func(string) bool { return trusted },
		OnError: func(path string, err error) { t.Errorf("settings: %s: %v", path, err) }})
	t.Cleanup(func() { l.Close() })
	w.st = Settings{Loader: l, Kinds: kinds,
		Report:     func(msg string, severe bool) { w.reports = append(w.reports, msg) },
		ReportOnce: func(file string, _ json.RawMessage, msg string) { w.once = append(w.once, file+": "+msg) }}
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const userSettings = `{"model": {"provider": "script"},
	"models": [{"provider": "anthropic", "id": "claude-sonnet-4-5", "name": "Sonnet 4.5", "maxTokens": 999, "thinking": "low"},
	           {"provider": "openai", "id": "gpt-4.1", "baseUrl": "http://localhost:1/v1"},
	           {"provider": "anthropic"}]}`

func TestNamed(t *testing.T) {
	w := newWorld(t, userSettings, `{"model": {"provider": "anthropic", "id": "claude-opus-4-1"}}`, true)
	m, src := w.st.Named(w.root)
	if m == nil || m.ID != "claude-opus-4-1" || src.File != settings.WorkspacePath(w.root) {
		t.Errorf("in the trusted folder: %+v from %+v, want the folder's model", m, src)
	}
	if m, src := w.st.Named(""); m == nil || m.Provider != provider.Script || src.File != w.user {
		t.Errorf("elsewhere: %+v from %+v, want the user's model", m, src)
	}
	// Untrusted, the folder's model is not used.
	w = newWorld(t, userSettings, `{"model": {"provider": "anthropic", "id": "claude-opus-4-1"}}`, false)
	if m, src := w.st.Named(w.root); m == nil || m.Provider != provider.Script || src.File != w.user {
		t.Errorf("in the untrusted folder: %+v from %+v, want the user's model", m, src)
	}
	// A model that does not decode is reported, and none is named.
	w = newWorld(t, `{"model": {"provider": "anthropic", "id": 7}}`, "", true)
	if m, src := w.st.Named(""); m != nil || src != (setup.Source{}) {
		t.Errorf("malformed: %+v from %+v, want none", m, src)
	}
	if len(w.reports) != 1 || !strings.HasPrefix(w.reports[0], "settings: "+setup.Source{File: w.user}.Where()) || !strings.Contains(w.reports[0], `"id"`) {
		t.Errorf("reports = %q, want the malformed model's", w.reports)
	}
	if w := newWorld(t, `{}`, "", true); !isNil(w.st.Named("")) {
		t.Error("no model set: want none")
	}
	if m, _ := (Settings{Kinds: kinds}).Named(""); m != nil {
		t.Error("no loader: want none")
	}
}

func isNil(m *provider.Model, _ setup.Source) bool { return m == nil }

func TestFillAndList(t *testing.T) {
	w := newWorld(t, userSettings, "", true)
	own := &provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5", MaxTokens: 5}
	got := w.st.Fill(w.root, own)
	if got == own || got.MaxTokens != 5 || got.Thinking != "low" || got.Name != "Sonnet 4.5" || own.Thinking != "" {
		t.Errorf("Fill = %+v (own %+v), want the entry's members under the model's own", got, own)
	}
	if other := (&provider.Model{Provider: provider.OpenAI, ID: "gpt-5"}); w.st.Fill(w.root, other) != other {
		t.Error("a model without an entry must come back as it is")
	}
	if len(w.once) != 2 || !strings.Contains(w.once[0], "entry 3") {
		t.Errorf("ReportOnce told %q, want the entry without an id, once per read", w.once)
	}
	l := w.st.List(w.root, &provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5"})
	want := []models.Info{{Provider: "anthropic", ID: "claude-sonnet-4-5", Name: "Sonnet 4.5"}, {Provider: "openai", ID: "gpt-4.1"}}
	if !slices.Equal(l.Models, want) || l.Current == nil || l.Current.Name != "Sonnet 4.5" {
		t.Errorf("List = %+v", l)
	}
}

func TestStart(t *testing.T) {
	w := newWorld(t, userSettings, "", true)
	m, err := w.st.Start(w.root, nil, false, 0, 0)
	if err != nil || m.Config == nil || m.Config.Provider != provider.Script || m.Source.File != w.user {
		t.Fatalf("without its own: %+v, %v; want the user's model, from the user file", m, err)
	}
	own := &provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5"}
	m, err = w.st.Start(w.root, own, false, 0, 0)
	if err != nil || m.Config.MaxTokens != 999 || m.Source != (setup.Source{}) || m.Problem == nil {
		t.Fatalf("its own: %+v, %v; want it filled from the list, its key missing kept as its problem", m, err)
	}
	m, err = w.st.Start(w.root, own, true, 0, 0)
	if err != nil || m.Config != own || !m.Source.Saved {
		t.Fatalf("saved: %+v, %v; want the model as saved", m, err)
	}
	if _, err := w.st.Start(w.root, &provider.Model{Provider: "gemini"}, false, 0, 0); !errors.Is(err, errInvalid) {
		t.Fatalf("unusable: %v, want an invalid model", err)
	}
}

func TestUserProblem(t *testing.T) {
	w := newWorld(t, `{}`, "", true)
	err := w.st.UserProblem()
	if se := setupErr(t, err); !errors.Is(err, errNoModel) || se.Reason != setup.NoModel || se.File != w.user {
		t.Errorf("no model: %v", err)
	}
	// The list's entry completes the user's model, here with a named key variable.
	w = newWorld(t, `{"model": {"provider": "openai", "id": "gpt-4.1"}, "models": [{"provider": "openai", "id": "gpt-4.1", "apiKeyEnv": "PID_TEST_KEY"}]}`, "", true)
	err = w.st.UserProblem()
	if se := setupErr(t, err); !errors.Is(err, errFailed) || se.Variable != "PID_TEST_KEY" || se.File != w.user {
		t.Errorf("no key: %v (%+v), want PID_TEST_KEY missing", err, se)
	}
	t.Setenv("PID_TEST_KEY", "a-key")
	if err := w.st.UserProblem(); err != nil {
		t.Errorf("with the key: %v", err)
	}
}

func TestMissing(t *testing.T) {
	w := newWorld(t, `{}`, `{"model": {"provider": "anthropic", "id": "claude-opus-4-1"}}`, false)
	sub := filepath.Join(w.root, "sub")
	err := w.st.Missing(sub, []string{w.root})
	if se := setupErr(t, err); !errors.Is(err, errNoModel) || se.Reason != setup.UntrustedSetting || se.Folder != w.root || se.File != settings.WorkspacePath(w.root) {
		t.Errorf("untrusted folder's model: %v (%+v)", err, se)
	}
	// Outside that folder, or with it trusted, the session simply has no model.
	for name, err := range map[string]error{
		"outside": w.st.Missing(t.TempDir(), []string{w.root}),
		"trusted": newWorld(t, `{}`, `{"tools": {}}`, true).st.Missing(sub, []string{w.root}),
	} {
		if se := setupErr(t, err); !errors.Is(err, errNoModel) || se.Reason != setup.NoModel {
			t.Errorf("%s: %v (%+v), want no model", name, err, se)
		}
	}
}

func TestForAgent(t *testing.T) {
	w := newWorld(t, userSettings, "", true)
	list := w.st.List(w.root, nil)
	parent := &provider.Model{Provider: provider.OpenAI, ID: "gpt-4.1"}
	m, warn := w.st.ForAgent(w.root, &agents.Agent{Name: "rev", Model: "sonnet"}, parent, list)
	if m == nil || m.ID != "claude-sonnet-4-5" || m.MaxTokens != 999 || warn != "" {
		t.Errorf("sonnet: %+v, %q; want the list's Sonnet, filled from its entry", m, warn)
	}
	if m, warn := w.st.ForAgent(w.root, &agents.Agent{Name: "rev", Model: "gpt-4.1"}, parent, list); m != nil || warn != "" {
		t.Errorf("the parent's own model: %+v, %q; want nil (the parent's)", m, warn)
	}
	if m, warn := w.st.ForAgent(w.root, &agents.Agent{Name: "rev", Model: "anthropic/claude-haiku"}, parent, list); m != nil || !strings.Contains(warn, "not in your models list") {
		t.Errorf("a model not listed: %+v, %q; want the parent's, with a warning", m, warn)
	}
	if m, warn := w.st.ForAgent(w.root, &agents.Agent{Name: "rev", Model: "sonnet"}, nil, list); m != nil || warn != "" {
		t.Errorf("no parent model: %+v, %q", m, warn)
	}
}

func TestListNew(t *testing.T) {
	w := newWorld(t, userSettings, "", true)
	if l := w.st.ListNew(w.root, nil); l.Current == nil || l.Current.Provider != provider.Script || len(l.Models) != 2 {
		t.Errorf("without the editor's: %+v, want the settings' model current", l)
	}
	editor := &provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5"}
	if l := w.st.ListNew(w.root, editor); l.Current == nil || l.Current.ID != "claude-sonnet-4-5" || l.Current.Name != "Sonnet 4.5" {
		t.Errorf("with the editor's: %+v, want it current, named by its entry", l)
	}
}

func TestPick(t *testing.T) {
	w := newWorld(t, userSettings, "", true)
	t.Setenv(provider.EnvAnthropicKey, "a-key")
	m, err := w.st.Pick(w.root, json.RawMessage(`{"provider": "anthropic", "id": "claude-sonnet-4-5", "thinking": "high"}`))
	if err != nil || m.Provider == nil || m.Config.MaxTokens != 999 || m.Config.Thinking != "high" || m.Config.Name != "Sonnet 4.5" {
		t.Fatalf("Pick = %+v, %v; want the entry's members under the picked ones", m, err)
	}
	if _, err := w.st.Pick(w.root, json.RawMessage(`{"provider": "anthropic", "id": []}`)); !errors.Is(err, errInvalid) || setupErr(t, err).Field != "id" {
		t.Errorf("malformed: %v, want an invalid model naming id", err)
	}
	t.Setenv(provider.EnvOpenAIKey, "")
	if _, err := w.st.Pick(w.root, json.RawMessage(`{"provider": "openai", "id": "gpt-5"}`)); !errors.Is(err, errFailed) {
		t.Errorf("without its key: %v, want the key missing (strict)", err)
	}
}

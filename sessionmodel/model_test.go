// This file tests how a session's model is made: what it takes from its configuration, the
// setup errors of one that cannot be used (each standing for its layer's error), a missing
// key kept as the model's problem or refused, a scripted model going on where it was, and a
// new thinking level.

package sessionmodel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/setup"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	errNoModel = errors.New("no model")
	errInvalid = errors.New("invalid params")
	errFailed  = errors.New("request failed")
	kinds      = Kinds{NoModel: errNoModel, Invalid: errInvalid, Failed: errFailed}
)

// noKeys isolates the test from the keys of whoever runs it: no key variable, and an empty
// config folder (no pid login credentials).
func noKeys(t *testing.T) {
	t.Helper()
	xdgtest.Isolate(t)
	for _, v := range []string{provider.EnvOpenAIKey, provider.EnvOpenAIBaseURL, provider.EnvAnthropicKey, provider.EnvAnthropicBaseURL, "PID_TEST_KEY"} {
		t.Setenv(v, "")
	}
}

// setupErr returns err as a setup error, failing the test when it is not one.
func setupErr(t *testing.T, err error) *setup.Error {
	t.Helper()
	var se *setup.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a setup error", err, err)
	}
	return se
}

// text returns the text of what p answers to one request.
func text(p llm.Provider) string {
	m := p.Stream(context.Background(), &llm.Request{}, nil)
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func turn(s string) llm.Turn { return llm.Turn{Content: []llm.Content{llm.Text(s)}} }

func TestMakeNone(t *testing.T) {
	m, err := kinds.Make(nil, setup.Source{}, 0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config != nil || m.Provider != nil || m.Problem != nil || m.Compact != compact.Defaults() || m.Thinking() != "off" || m.Price() != nil {
		t.Fatalf("no model = %+v", m)
	}
}

func TestMakeScripted(t *testing.T) {
	price := &provider.Price{Input: 3, Output: 15}
	cfg := &provider.Model{Provider: provider.Script, Turns: []llm.Turn{turn("one"), turn("two")}, Summaries: []llm.Turn{turn("sum one"), turn("sum two")},
		ContextWindow: 5000, Compaction: json.RawMessage(`{"reserveTokens": 1000}`), Price: price}
	m, err := kinds.Make(cfg, setup.Source{}, 1, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config != cfg || m.Name != "script" || m.Window != 5000 || m.Compact.ReserveTokens != 1000 || !m.Images || m.Price() != price {
		t.Fatalf("model = %+v", m)
	}
	// A loaded session goes on after its calls and summaries; summaries never take a turn.
	if got := text(m.Provider); got != "two" {
		t.Errorf("call = %q, want the second turn", got)
	}
	if got := text(m.Summarizer); got != "sum two" {
		t.Errorf("summary = %q, want the second summary", got)
	}
}

func TestMakeWindowAndName(t *testing.T) {
	noKeys(t)
	t.Setenv("PID_TEST_KEY", "k")
	cfg := &provider.Model{Provider: provider.OpenAI, ID: "gpt-4.1", APIKeyEnv: "PID_TEST_KEY", BaseURL: "http://localhost:11434/v1"}
	m, err := kinds.Make(cfg, setup.Source{}, 0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "openai/gpt-4.1" || m.Window != compact.ContextWindow("gpt-4.1") || m.Images || m.Provider == nil || m.Summarizer != m.Provider {
		t.Fatalf("model = %+v", m)
	}
}

func TestMakeInvalid(t *testing.T) {
	noKeys(t)
	src := setup.Source{File: "/home/p/.config/pid/settings.json"}
	for _, c := range []struct {
		name  string
		cfg   provider.Model
		field string
		want  string
	}{
		{"compaction", provider.Model{Provider: provider.Script, Compaction: json.RawMessage(`{"reserveTokens": "many"}`)}, "compaction", "reserveTokens"},
		{"provider", provider.Model{Provider: "gemini", ID: "x"}, "provider", `unknown provider "gemini"`},
		{"thinking", provider.Model{Provider: provider.Anthropic, ID: "x", Thinking: "max"}, "thinking", "max"},
		{"timeout", provider.Model{Provider: provider.Anthropic, ID: "x", RequestTimeoutMs: -1}, "", "requestTimeoutMs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := kinds.Make(&c.cfg, src, 0, 0, false)
			se := setupErr(t, err)
			if !errors.Is(err, errInvalid) || se.Reason != setup.InvalidModel || se.Field != c.field || se.File != src.File {
				t.Errorf("err = %v (%+v), want an invalid model naming %q", err, se, c.field)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, src.Where()+": ") || !strings.Contains(msg, c.want) {
				t.Errorf("message %q: want it to start with where the model came from and say %q", msg, c.want)
			}
		})
	}
}

func TestMakeKeyMissing(t *testing.T) {
	noKeys(t)
	for _, c := range []struct {
		name     string
		cfg      provider.Model
		variable string
	}{
		{"default variable", provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5"}, provider.EnvAnthropicKey},
		{"named variable", provider.Model{Provider: provider.OpenAI, ID: "m", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "PID_TEST_KEY"}, "PID_TEST_KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := kinds.Make(&c.cfg, setup.Source{}, 0, 0, true)
			se := setupErr(t, err)
			if !errors.Is(err, errFailed) || se.Reason != setup.APIKeyMissing || se.Variable != c.variable || !strings.Contains(err.Error(), c.cfg.Provider+"/"+c.cfg.ID) {
				t.Errorf("strict: err = %v (%+v), want the key missing from %s", err, se, c.variable)
			}
			// Not strict: the model is made, without a provider, its problem kept.
			m, err := kinds.Make(&c.cfg, setup.Source{}, 0, 0, false)
			if err != nil || m.Provider != nil || m.Summarizer != nil || m.Problem == nil || m.Problem.Error() != se.Error() || m.Config != &c.cfg {
				t.Fatalf("not strict: %+v, %v; want the model with its problem", m, err)
			}
			// The key set: the same configuration makes a model.
			t.Setenv(c.variable, "a-key")
			if m, err := kinds.Make(&c.cfg, setup.Source{}, 0, 0, true); err != nil || m.Provider == nil || m.Problem != nil {
				t.Fatalf("with the key: %+v, %v", m, err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	src := setup.Source{Saved: true}
	cfg, err := kinds.Decode(json.RawMessage(`{"provider": "anthropic", "id": "claude-sonnet-4-5", "thinking": "low"}`), src)
	if err != nil || cfg.Provider != provider.Anthropic || cfg.ID != "claude-sonnet-4-5" || cfg.Thinking != "low" {
		t.Fatalf("Decode = %+v, %v", cfg, err)
	}
	_, err = kinds.Decode(json.RawMessage(`{"provider": "anthropic", "id": 7}`), src)
	se := setupErr(t, err)
	if !errors.Is(err, errInvalid) || se.Field != "id" || !strings.HasPrefix(err.Error(), src.Where()+": ") {
		t.Fatalf("Decode of a number id: %v (%+v), want an invalid model naming id", err, se)
	}
}

func TestWithThinking(t *testing.T) {
	noKeys(t)
	missing := errors.New("why there is no model")
	noModel := func() error { return missing }
	script, err := kinds.Make(&provider.Model{Provider: provider.Script, Turns: []llm.Turn{turn("one"), turn("two")}}, setup.Source{}, 0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kinds.WithThinking(script, "max", noModel)
	if se := setupErr(t, err); !errors.Is(err, errInvalid) || se.Field != "thinking" {
		t.Errorf("level max: %v, want an invalid model naming thinking", err)
	}
	if _, err := kinds.WithThinking(&Model{}, "low", noModel); err != missing {
		t.Errorf("no model: %v, want noModel's error", err)
	}
	// A scripted model goes on with its script: the same provider, the level in its config.
	high, err := kinds.WithThinking(script, "high", noModel)
	if err != nil || high.Provider != script.Provider || high.Config.Thinking != "high" || high.Thinking() != "high" || script.Thinking() != "off" || script.Config.Thinking != "" {
		t.Fatalf("script high: %+v, %v; the original left as it was: %+v", high, err, script.Config)
	}
	if off, err := kinds.WithThinking(high, "off", noModel); err != nil || off.Config.Thinking != "" || off.Thinking() != "off" {
		t.Fatalf("off: %+v, %v", off, err)
	}
	// Another model is made again, and fails as Make does without its key.
	cfg := &provider.Model{Provider: provider.Anthropic, ID: "claude-sonnet-4-5"}
	m := &Model{Config: cfg}
	if _, err := kinds.WithThinking(m, "low", noModel); !errors.Is(err, errFailed) {
		t.Errorf("without the key: %v, want the key missing", err)
	}
	t.Setenv(provider.EnvAnthropicKey, "a-key")
	low, err := kinds.WithThinking(m, "low", noModel)
	if err != nil || low.Provider == nil || low.Config == cfg || low.Config.Thinking != "low" || cfg.Thinking != "" || low.Name != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("low: %+v, %v", low, err)
	}
}

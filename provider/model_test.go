package provider

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// A model's JSON: a member of the wrong type is an error naming it; a value that is no object
// says what a model is.
func TestDecodeModel(t *testing.T) {
	m, err := DecodeModel(json.RawMessage(` {"provider":"openai","id":"gpt-4.1","maxTokens":100} `))
	if err != nil || m.Provider != OpenAI || m.ID != "gpt-4.1" || m.MaxTokens != 100 {
		t.Fatalf("%+v %v", m, err)
	}
	for raw, want := range map[string]FieldError{
		`{"provider":"openai","maxTokens":"many"}`: {"maxTokens", `"maxTokens" must be a number, not string`},
		`{"provider":"openai","images":"yes"}`:     {"images", `"images" must be true or false, not string`},
		`"gpt-4.1"`:                                {"", `a model is an object such as {"provider": "anthropic", "id": "claude-sonnet-4-5"}`},
		`null`:                                     {"", `a model is an object such as {"provider": "anthropic", "id": "claude-sonnet-4-5"}`},
	} {
		_, err := DecodeModel(json.RawMessage(raw))
		fe, ok := err.(*FieldError)
		if !ok || *fe != want {
			t.Errorf("%s: %#v, want %#v", raw, err, want)
		}
	}
}

// Check names the member at fault, in the order a person fixes them; a scripted model needs
// no id.
func TestModelCheck(t *testing.T) {
	for _, tc := range []struct {
		m     Model
		field string
	}{
		{Model{Provider: OpenAI, ID: "x"}, "-"},
		{Model{Provider: Script}, "-"},
		{Model{Provider: OpenAI, ID: "x", Thinking: "max"}, "thinking"},
		{Model{Provider: Anthropic, ID: "x", API: "responses"}, "api"},
		{Model{ID: "x"}, "provider"},
		{Model{Provider: "gemini", ID: "x"}, "provider"},
		{Model{Provider: Anthropic, ID: " "}, "id"},
	} {
		err := tc.m.Check()
		field := "-"
		if fe, ok := err.(*FieldError); ok {
			field = fe.Field
		}
		if field != tc.field {
			t.Errorf("%+v: %v, want field %q", tc.m, err, tc.field)
		}
	}
}

// A missing key is told apart from other failures; a scripted model opens with its turns
// from the given call on, and its summaries apart from them.
func TestModelOpen(t *testing.T) {
	t.Setenv("PID_TEST_NO_KEY", "")
	m := &Model{Provider: Anthropic, ID: "claude-sonnet-4-5", APIKeyEnv: "PID_TEST_NO_KEY"}
	if _, _, err := m.Open(0, 0); !m.KeyMissing(err) || m.KeyVariable() != "PID_TEST_NO_KEY" {
		t.Errorf("no key: %v", err)
	}
	if (&Model{Provider: OpenAI, ID: "x", BaseURL: "ftp://x"}).KeyMissing(nil) {
		t.Error("no error is a missing key")
	}
	s := &Model{Provider: Script, Turns: []llm.Turn{{Content: []llm.Content{llm.Text("one")}}, {Content: []llm.Content{llm.Text("two")}}}}
	call, sum, err := s.Open(1, 0)
	if err != nil || call == sum {
		t.Fatalf("script: %v", err)
	}
	answer := call.Stream(t.Context(), &llm.Request{}, nil)
	if got := answer.Text(); got != "two" {
		t.Errorf("a script opened at call 1 answered %q", got)
	}
	summary := sum.Stream(t.Context(), &llm.Request{}, nil)
	if got := summary.Text(); got != ScriptedSummary(0) {
		t.Errorf("summary %q", got)
	}
}

// Images: the setting when given, else by provider and where an OpenAI model is served.
func TestTakesImages(t *testing.T) {
	t.Setenv(EnvOpenAIBaseURL, "")
	no := false
	for _, tc := range []struct {
		m    Model
		want bool
	}{
		{Model{Provider: Anthropic}, true},
		{Model{Provider: OpenAI}, true},
		{Model{Provider: OpenAI, BaseURL: "http://localhost:11434/v1"}, false},
		{Model{Provider: OpenAI, BaseURL: "https://API.openai.com/v1"}, true},
		{Model{Provider: Anthropic, Images: &no}, false},
	} {
		if got := tc.m.TakesImages(); got != tc.want {
			t.Errorf("%+v: %v", tc.m, got)
		}
	}
}

// A "models" entry completes a model named by provider and id, the model's own members
// winning; the price counts cached tokens at their own rate when given.
func TestOverAndCost(t *testing.T) {
	m := &Model{Provider: OpenAI, ID: "local", MaxTokens: 10}
	got := m.Over(map[string]json.RawMessage{"baseUrl": json.RawMessage(`"http://h/v1"`), "maxTokens": json.RawMessage(`99`), "name": json.RawMessage(`"Local"`)})
	if got.BaseURL != "http://h/v1" || got.MaxTokens != 10 || got.Name != "Local" || m.BaseURL != "" {
		t.Errorf("merged %+v, own %+v", got, m)
	}
	read := 0.5
	p := &Price{Input: 2, Output: 10, CacheRead: &read}
	if c := p.Cost(&llm.Usage{Input: 1e6, Output: 1e5, CacheRead: 2e6, CacheWrite: 1e6}); c != 2+1+1+2 {
		t.Errorf("cost %v", c)
	}
	if (*Price)(nil).Cost(&llm.Usage{Input: 5}) != 0 {
		t.Error("no price costs something")
	}
}

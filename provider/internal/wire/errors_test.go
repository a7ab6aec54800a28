package wire_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/provider/internal/wire"
)

func TestDescribe(t *testing.T) {
	in := &wire.Info{Name: "the OpenAI-compatible server at http://localhost:11434/v1", Model: "qwen3:8b", BaseURL: "http://localhost:11434/v1", KeyEnv: "OPENAI_API_KEY", HasKey: true, BaseURLHint: "and model.baseUrl"}
	for _, tc := range []struct {
		name string
		f    wire.Failure
		want []string
	}{
		{"401", wire.Failure{Status: 401, Body: []byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)},
			[]string{"The OpenAI-compatible server", "rejected the API key", "HTTP 401: Incorrect API key provided", "OPENAI_API_KEY"}},
		{"403", wire.Failure{Status: 403, Body: []byte(`{"type":"error","error":{"type":"permission_error","message":"no access"}}`)},
			[]string{"refused the request", "no access", "OPENAI_API_KEY", `"qwen3:8b"`}},
		{"404 ollama", wire.Failure{Status: 404, Body: []byte(`{"error":"model \"qwen3:8b\" not found, try pulling it first"}`)},
			[]string{`does not know model "qwen3:8b"`, "try pulling it first", "Check model.id", "model.baseUrl"}},
		{"400 unknown model", wire.Failure{Status: 400, Body: []byte(`{"error":{"message":"The model 'gpt-9' does not exist","code":"model_not_found"}}`)},
			[]string{"does not know model"}},
		{"400 context openai", wire.Failure{Status: 400, Body: []byte(`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)},
			[]string{"too long", "maximum context length", "Start a new session"}},
		{"400 context anthropic", wire.Failure{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)},
			[]string{"too long", "prompt is too long"}},
		{"400 other", wire.Failure{Status: 400, Body: []byte(`{"error":{"message":"messages: bad"}}`)},
			[]string{"rejected the request", "messages: bad"}},
		{"429", wire.Failure{Status: 429, Attempts: 3, RetryAfter: 20 * time.Second, Body: []byte(`{"error":{"message":"Rate limit reached"}}`)},
			[]string{"rate-limited", "Rate limit reached", "after 3 attempts", "wait 20s"}},
		{"quota", wire.Failure{Status: 429, Body: []byte(`{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`)},
			[]string{"out of quota", "billing", "OPENAI_API_KEY"}},
		{"529", wire.Failure{Status: 529, Attempts: 3, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			[]string{"is overloaded", "after 3 attempts"}},
		{"503 html", wire.Failure{Status: 503, Attempts: 2, Body: []byte("<html>" + strings.Repeat("x", 1000) + "</html>")},
			[]string{"server error", "HTTP 503: <html>xxx", "…", "after 2 attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := in.Describe(tc.f)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Describe = %q\nwant it to contain %q", got, w)
				}
			}
		})
	}
	noKey := &wire.Info{Name: "OpenAI", Model: "gpt-4.1", KeyEnv: "OPENAI_API_KEY"}
	if got := noKey.Describe(wire.Failure{Status: 401}); !strings.Contains(got, "requires an API key") || !strings.Contains(got, "Set OPENAI_API_KEY") {
		t.Errorf("401 without a key: %q", got)
	}
}

func TestParseServerError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want wire.ServerError
		ok   bool
	}{
		{`{"error":{"message":"m","type":"t"}}`, wire.ServerError{Type: "t", Message: "m"}, true},
		{`{"error":{"message":"m","type":"t","code":"c"}}`, wire.ServerError{Type: "c", Message: "m"}, true},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, wire.ServerError{Type: "overloaded_error", Message: "Overloaded"}, true},
		{`{"error":"model not found"}`, wire.ServerError{Message: "model not found"}, true},
		{`{"message":"nope"}`, wire.ServerError{Message: "nope"}, true},
		{`{"other":1}`, wire.ServerError{}, false},
		{`not json`, wire.ServerError{}, false},
	} {
		got, ok := wire.ParseServerError([]byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseServerError(%s) = %+v, %v; want %+v, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

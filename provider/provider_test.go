package provider_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const key = "sk-factory-Vq3Rt8Yp1Xm6Kw2Zn9"

// clearEnv unsets every variable New reads, for the length of the test, and gives it a
// config folder of its own (no credentials file).
func clearEnv(t *testing.T) {
	for _, v := range []string{provider.EnvOpenAIKey, provider.EnvOpenAIBaseURL, provider.EnvAnthropicKey, provider.EnvAnthropicBaseURL, "PID_TEST_KEY"} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func TestNewErrors(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		name string
		cfg  provider.Config
		want []string
	}{
		{"nothing", provider.Config{}, []string{"no model provider configured", "model.provider", `"openai"`, `"anthropic"`}},
		{"unknown", provider.Config{Provider: "gemini", ID: "x"}, []string{`unknown model provider "gemini"`}},
		{"openai without id", provider.Config{Provider: "openai"}, []string{"model.id is required"}},
		{"anthropic without id", provider.Config{Provider: "anthropic"}, []string{"model.id is required"}},
		{"openai without key", provider.Config{Provider: "openai", ID: "gpt-4.1"}, []string{"no OpenAI API key", "set OPENAI_API_KEY", "model.apiKeyEnv"}},
		{"anthropic without key", provider.Config{Provider: "anthropic", ID: "claude-sonnet-4-5"}, []string{"no Anthropic API key", "set ANTHROPIC_API_KEY"}},
		{"named variable unset", provider.Config{Provider: "openai", ID: "m", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "PID_TEST_KEY"}, []string{"PID_TEST_KEY (named by model.apiKeyEnv) is empty or unset"}},
		{"bad base URL", provider.Config{Provider: "openai", ID: "m", BaseURL: "localhost:11434"}, []string{"not an http or https URL"}},
		{"negative request timeout", provider.Config{Provider: "openai", ID: "m", BaseURL: "http://localhost:11434/v1", RequestTimeoutMs: -1}, []string{"model.requestTimeoutMs is -1", "or 0 (or nothing) for the default of 60000"}},
		{"idle timeout over a day", provider.Config{Provider: "anthropic", ID: "m", IdleTimeoutMs: provider.MaxTimeoutMs + 1}, []string{"model.idleTimeoutMs is 86400001", "from 1 to 86400000", "default of 120000"}},
		{"unknown api", provider.Config{Provider: "openai", ID: "m", BaseURL: "http://localhost:11434/v1", API: "assistants"}, []string{`model.api is "assistants"`, `"chat"`, `"responses"`}},
		{"api of anthropic", provider.Config{Provider: "anthropic", ID: "m", API: "responses"}, []string{`model.api is "responses"`, `only provider "openai"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := provider.New(tc.cfg)
			if err == nil {
				t.Fatalf("New(%+v) = %T, want an error", tc.cfg, p)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// stream makes one call and returns what the server got.
func stream(t *testing.T, p llm.Provider, srv *replay.Server) replay.Request {
	t.Helper()
	msg := p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.NewUser("Hi")}}, nil)
	if msg.StopReason != llm.StopEnd {
		t.Fatalf("message = %+v", msg)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	return reqs[len(reqs)-1]
}

func closeIdle(t *testing.T) {
	t.Cleanup(func() { http.DefaultTransport.(*http.Transport).CloseIdleConnections() })
}

func TestOpenAIFromEnvironment(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "openai", "text.sse")})
	t.Setenv(provider.EnvOpenAIKey, key)
	t.Setenv(provider.EnvOpenAIBaseURL, srv.URL+"/v1")
	p, err := provider.New(provider.Config{Provider: "openai", ID: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	op := p.(*openai.Provider)
	if op.BaseURL() != srv.URL+"/v1" || op.Model() != "gpt-4.1" {
		t.Errorf("base %q model %q", op.BaseURL(), op.Model())
	}
	r := stream(t, p, srv)
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("request to %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
	}
}

// An OpenAI-compatible server at its own base URL needs no key (Ollama, llama.cpp); the
// configured base URL wins over OPENAI_BASE_URL.
func TestOpenAICompatibleWithoutKey(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "openai", "text.sse")})
	t.Setenv(provider.EnvOpenAIBaseURL, "http://127.0.0.1:1/v1")
	p, err := provider.New(provider.Config{Provider: "openai", ID: "qwen3:8b", BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	r := stream(t, p, srv)
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
}

func TestAPIKeyEnv(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "anthropic", "text.sse")})
	t.Setenv("PID_TEST_KEY", " "+key+"\n")
	t.Setenv(provider.EnvAnthropicKey, "the-wrong-key")
	p, err := provider.New(provider.Config{Provider: "anthropic", ID: "claude-sonnet-4-5", BaseURL: srv.URL, APIKeyEnv: "PID_TEST_KEY", MaxTokens: 1234})
	if err != nil {
		t.Fatal(err)
	}
	if p.(*anthropic.Provider).MaxTokens() != 1234 {
		t.Errorf("max tokens = %d", p.(*anthropic.Provider).MaxTokens())
	}
	r := stream(t, p, srv)
	if got := r.Header.Get("x-api-key"); got != key {
		t.Errorf("x-api-key = %q, want the trimmed key of PID_TEST_KEY", got)
	}
}

func TestAnthropicFromEnvironment(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "anthropic", "text.sse")})
	t.Setenv(provider.EnvAnthropicKey, key)
	t.Setenv(provider.EnvAnthropicBaseURL, srv.URL)
	p, err := provider.New(provider.Config{Provider: "anthropic", ID: "claude-haiku-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	r := stream(t, p, srv)
	if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != key {
		t.Errorf("request to %s with x-api-key %q", r.Path, r.Header.Get("x-api-key"))
	}
	if p.(*anthropic.Provider).BaseURL() != srv.URL {
		t.Errorf("base = %q", p.(*anthropic.Provider).BaseURL())
	}
}

// Without the environment, the defaults are the public APIs.
// A model entry's "api": "responses" reaches OpenAI's Responses API (issue 32).
func TestResponsesAPIFromConfig(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	t.Setenv(provider.EnvOpenAIKey, key)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "openai", "responses_text.sse")})
	p, err := provider.New(provider.Config{Provider: provider.OpenAI, ID: "gpt-5", BaseURL: srv.URL + "/v1", API: "responses", Thinking: "high"})
	if err != nil {
		t.Fatal(err)
	}
	r := stream(t, p, srv)
	if r.Path != "/v1/responses" || !strings.Contains(string(r.Body), `"reasoning":{"effort":"high"}`) || !strings.Contains(string(r.Body), `"store":false`) {
		t.Errorf("%s %s", r.Path, r.Body)
	}
}

func TestDefaults(t *testing.T) {
	clearEnv(t)
	t.Setenv(provider.EnvOpenAIKey, key)
	t.Setenv(provider.EnvAnthropicKey, key)
	p, err := provider.New(provider.Config{Provider: "openai", ID: "gpt-4.1"})
	if err != nil || p.(*openai.Provider).BaseURL() != openai.DefaultBaseURL {
		t.Errorf("openai: %v %v", p, err)
	}
	p, err = provider.New(provider.Config{Provider: "anthropic", ID: "claude-sonnet-4-5"})
	if err != nil || p.(*anthropic.Provider).BaseURL() != anthropic.DefaultBaseURL || p.(*anthropic.Provider).MaxTokens() != 64000 {
		t.Errorf("anthropic: %v %v", p, err)
	}
}

// The defaults the documentation gives.
func TestTimeoutDefaults(t *testing.T) {
	if provider.DefaultRequestTimeoutMs != 60000 || provider.DefaultIdleTimeoutMs != 120000 {
		t.Errorf("defaults %d, %d; want 60000, 120000", provider.DefaultRequestTimeoutMs, provider.DefaultIdleTimeoutMs)
	}
}

// The timeouts reach both providers, in milliseconds, with 0 as the defaults; the JSON
// names are the ones settings use.
func TestTimeoutsFromConfig(t *testing.T) {
	clearEnv(t)
	t.Setenv(provider.EnvOpenAIKey, key)
	t.Setenv(provider.EnvAnthropicKey, key)
	var cfg provider.Config
	if err := json.Unmarshal([]byte(`{"provider":"openai","id":"gpt-4.1","requestTimeoutMs":1500,"idleTimeoutMs":2500}`), &cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{provider.OpenAI, provider.Anthropic} {
		cfg.Provider = name
		p, err := provider.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, i := p.(interface {
			Timeouts() (time.Duration, time.Duration)
		}).Timeouts()
		if r != 1500*time.Millisecond || i != 2500*time.Millisecond {
			t.Errorf("%s: timeouts %v, %v; want 1.5s, 2.5s", name, r, i)
		}
		p, err = provider.New(provider.Config{Provider: name, ID: "m"})
		if err != nil {
			t.Fatal(err)
		}
		r, i = p.(interface {
			Timeouts() (time.Duration, time.Duration)
		}).Timeouts()
		if r != time.Minute || i != 2*time.Minute {
			t.Errorf("%s: default timeouts %v, %v; want 1m, 2m", name, r, i)
		}
	}
}

// End to end through New: a stream that stalls after its first text fails after
// idleTimeoutMs with the text kept and the setting named (250ms, not less: the text comes
// with the headers and must be read before the bound).
func TestIdleTimeoutFromConfig(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", "openai", "text.sse"), HoldAfter: 3})
	p, err := provider.New(provider.Config{Provider: "openai", ID: "qwen3:8b", BaseURL: srv.URL + "/v1", IdleTimeoutMs: 250})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := replay.Stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{llm.NewUser("Hi")}}, key)
	if msg.StopReason != llm.StopError || msg.Text() != "Hello" || !strings.Contains(msg.ErrorMessage, "sent nothing for 250ms in the middle of the answer (model.idleTimeoutMs)") {
		t.Errorf("message = %+v", msg)
	}
}

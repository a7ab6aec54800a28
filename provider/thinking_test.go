// This file tests the model entry's "thinking": each level reaches each provider as its API
// expects it (Anthropic's extended thinking with a budget, OpenAI's reasoning_effort), and
// "off" sends nothing, for servers that reject the field.

package provider_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/provider/internal/replay"
)

// sent returns the JSON body of the one request a provider made for cfg at the recorded
// stream file.
func sent(t *testing.T, cfg provider.Config, file string) map[string]any {
	t.Helper()
	body, _ := sentWithHeader(t, cfg, file)
	return body
}

// sentWithHeader is sent, with the request's header.
func sentWithHeader(t *testing.T, cfg provider.Config, file string) (map[string]any, http.Header) {
	t.Helper()
	srv := replay.New(t, replay.Step{File: filepath.Join("testdata", cfg.Provider, file)})
	cfg.BaseURL = srv.URL
	if cfg.Provider == provider.OpenAI {
		cfg.BaseURL += "/v1"
	}
	p, err := provider.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := stream(t, p, srv)
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body, req.Header
}

func TestThinkingLevels(t *testing.T) {
	clearEnv(t)
	closeIdle(t)
	t.Setenv(provider.EnvOpenAIKey, key)
	t.Setenv(provider.EnvAnthropicKey, key)
	for _, tc := range []struct {
		level    string
		budget   float64 // Anthropic's budget_tokens; 0: no "thinking"
		max      float64 // Anthropic's max_tokens for a model it knows no limit of
		effort   string  // OpenAI's reasoning_effort; "": none
		anyField bool
	}{
		{"", 0, 16384, "", false},
		{"off", 0, 16384, "", false},
		{"low", 2048, 16384, "low", true},
		{"medium", 8192, 16384, "medium", true},
		{"high", 16384, 16384 + 8192, "high", true},
	} {
		t.Run("anthropic "+tc.level, func(t *testing.T) {
			body, header := sentWithHeader(t, provider.Config{Provider: provider.Anthropic, ID: "claude-next", Thinking: tc.level}, "text.sse")
			// With a budget the model thinks between tool calls too (issue 32).
			if beta := header.Get("anthropic-beta"); (beta == "interleaved-thinking-2025-05-14") != tc.anyField || !tc.anyField && beta != "" {
				t.Errorf("anthropic-beta %q with thinking %q", beta, tc.level)
			}
			th, has := body["thinking"]
			if has != tc.anyField {
				t.Fatalf("thinking %v, want it sent: %v", th, tc.anyField)
			}
			if has {
				if d := cmp.Diff(map[string]any{"type": "enabled", "budget_tokens": tc.budget}, th); d != "" {
					t.Errorf("thinking (-want +got):\n%s", d)
				}
			}
			if body["max_tokens"] != tc.max {
				t.Errorf("max_tokens %v, want %v", body["max_tokens"], tc.max)
			}
		})
		t.Run("openai "+tc.level, func(t *testing.T) {
			body := sent(t, provider.Config{Provider: provider.OpenAI, ID: "o4-mini", Thinking: tc.level}, "text.sse")
			effort, has := body["reasoning_effort"]
			if has != tc.anyField || has && effort != tc.effort {
				t.Errorf("reasoning_effort %v (sent: %v), want %q", effort, has, tc.effort)
			}
		})
	}
	_, err := provider.New(provider.Config{Provider: provider.OpenAI, ID: "o4-mini", Thinking: "max"})
	if err == nil || !strings.Contains(err.Error(), `model.thinking is "max"`) {
		t.Errorf("thinking \"max\": error %v", err)
	}
}

// Package provider builds the model providers pid talks to from a model configuration:
// the OpenAI chat-completions API (and the servers that speak it: Ollama, vLLM,
// llama.cpp's server, LM Studio, OpenRouter), OpenAI's Responses API, and Anthropic's
// Messages API.
//
// The entry point is New, which reads the API key and defaults from the environment (the
// key, when the environment has none, from what pid login saved: package credentials) and
// returns an llm.Provider from package openai or anthropic. What the providers share
// (SSE reading, retries, error text, key redaction) is in internal/wire. docs/providers.md
// describes the configuration for users.
package provider

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/wire"
	"github.com/pid-agent/pid/provider/openai"
)

// Names of the providers and of the environment variables New reads.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"

	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// Config is the model configuration, as settings and session/new carry it under "model".
type Config struct {
	// Provider is "openai" or "anthropic".
	Provider string `json:"provider"`
	// ID is the model id, e.g. "gpt-4.1", "claude-sonnet-4-5", or an Ollama model's name.
	ID string `json:"id"`
	// BaseURL is the API root. Default: $OPENAI_BASE_URL or https://api.openai.com/v1 for
	// openai; $ANTHROPIC_BASE_URL or https://api.anthropic.com for anthropic.
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key. Default:
	// OPENAI_API_KEY or ANTHROPIC_API_KEY. The key itself is never part of a Config.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// MaxTokens caps an answer's tokens. Default: the server's choice for openai; for
	// anthropic the model's documented output limit (anthropic.MaxTokensFor: 32000 to
	// 128000 for Claude 4 models), else 16384.
	MaxTokens int `json:"maxTokens,omitempty"`
	// RequestTimeoutMs bounds, in milliseconds, the wait for a response's headers, per
	// attempt; an attempt that passes it is retried with backoff like a 5xx answer.
	// 0 means the default, DefaultRequestTimeoutMs.
	RequestTimeoutMs int `json:"requestTimeoutMs,omitempty"`
	// IdleTimeoutMs bounds, in milliseconds, a silence in the middle of a stream: a
	// stream that sends no bytes for that long is cut off and the turn fails (or, when
	// nothing but the start was streamed yet, the request is made again). 0 means the
	// default, DefaultIdleTimeoutMs.
	IdleTimeoutMs int `json:"idleTimeoutMs,omitempty"`
	// Thinking is how hard the model thinks before it answers: "off" (or "") sends
	// nothing, "low", "medium" or "high" turn on Anthropic's extended thinking with the
	// budget ThinkingBudget gives, and are sent as reasoning_effort to OpenAI-compatible
	// servers.
	Thinking string `json:"thinking,omitempty"`
	// API is, for openai, "chat" (or "", the default: the chat-completions API, which
	// OpenAI-compatible servers speak) or "responses" (OpenAI's Responses API). Other
	// providers take "" only.
	API string `json:"api,omitempty"`
	// PromptCacheKey, for openai's chat-completions API, sends the session's id as
	// prompt_cache_key (the Responses API always does).
	PromptCacheKey bool `json:"promptCacheKey,omitempty"`
}

// ThinkingLevels are the values of Config.Thinking, "" aside.
var ThinkingLevels = []string{"off", "low", "medium", "high"}

// ThinkingBudget returns the tokens of Anthropic's extended thinking for a level of
// Config.Thinking: 0 for "off" and "".
func ThinkingBudget(level string) int {
	switch level {
	case "low":
		return 2048
	case "medium":
		return 8192
	case "high":
		return 16384
	}
	return 0
}

// CheckThinking fails when level is not a value of Config.Thinking.
func CheckThinking(level string) error {
	switch level {
	case "", "off", "low", "medium", "high":
		return nil
	}
	return fmt.Errorf(`model.thinking is %q: use "off", "low", "medium" or "high"`, level)
}

// CheckAPI fails when api is not a value of Config.API for provider.
func CheckAPI(provider, api string) error {
	switch {
	case api == "":
		return nil
	case provider != OpenAI:
		return fmt.Errorf(`model.api is %q: only provider "openai" takes it ("chat" or "responses")`, api)
	case api != openai.APIChat && api != openai.APIResponses:
		return fmt.Errorf(`model.api is %q: use "chat" (the chat-completions API, the default) or "responses" (OpenAI's Responses API)`, api)
	}
	return nil
}

// Defaults and the largest value of Config's timeouts, in milliseconds.
const (
	DefaultRequestTimeoutMs = int(wire.DefaultRequestTimeout / time.Millisecond) // 60000
	DefaultIdleTimeoutMs    = int(wire.DefaultIdleTimeout / time.Millisecond)    // 120000
	MaxTimeoutMs            = 24 * 60 * 60 * 1000                                // a day
)

// New returns the provider cfg describes, reading its key from the environment, else from
// the keys pid login saved for the base URL's origin (package credentials). The provider
// sends the key only to the base URL's origin (see docs/providers.md).
//
// It fails, with an error that names what to set, when Provider is empty or unknown, ID
// is empty, the base URL is not an http(s) URL, a timeout is negative or above
// MaxTimeoutMs, or the key is missing: Anthropic always needs one, and so does OpenAI's
// own API; an OpenAI-compatible server at another base URL (Ollama, llama.cpp) may have
// none, unless APIKeyEnv names a variable, which must then be set. The key never appears
// in an error.
func New(cfg Config) (llm.Provider, error) {
	if err := checkTimeout("model.requestTimeoutMs", cfg.RequestTimeoutMs, DefaultRequestTimeoutMs); err != nil {
		return nil, err
	}
	if err := checkTimeout("model.idleTimeoutMs", cfg.IdleTimeoutMs, DefaultIdleTimeoutMs); err != nil {
		return nil, err
	}
	if err := CheckThinking(cfg.Thinking); err != nil {
		return nil, err
	}
	if err := CheckAPI(cfg.Provider, cfg.API); err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case OpenAI:
		return newOpenAI(cfg)
	case Anthropic:
		return newAnthropic(cfg)
	case "":
		return nil, errors.New(`no model provider configured: set model.provider to "openai" or "anthropic" and model.id to a model id`)
	}
	return nil, fmt.Errorf(`unknown model provider %q: model.provider must be "openai" or "anthropic"`, cfg.Provider)
}

func newOpenAI(cfg Config) (llm.Provider, error) {
	if strings.TrimSpace(cfg.ID) == "" {
		return nil, errors.New(`model.id is required for provider "openai" (e.g. "gpt-4.1", or the name of an Ollama model)`)
	}
	base := firstNonEmpty(cfg.BaseURL, os.Getenv(EnvOpenAIBaseURL), openai.DefaultBaseURL)
	keyEnv := firstNonEmpty(cfg.APIKeyEnv, EnvOpenAIKey)
	key, from, fileErr := apiKey(OpenAI, keyEnv, base)
	if key == "" && (cfg.APIKeyEnv != "" || isHost(base, "api.openai.com")) {
		return nil, missingKey("OpenAI", keyEnv, cfg.APIKeyEnv != "", fileErr)
	}
	return openai.New(openai.Options{
		Model: cfg.ID, BaseURL: base, APIKey: key, APIKeyEnv: from, MaxTokens: cfg.MaxTokens,
		RequestTimeout: millis(cfg.RequestTimeoutMs), IdleTimeout: millis(cfg.IdleTimeoutMs),
		ReasoningEffort: reasoningEffort(cfg.Thinking), API: cfg.API, PromptCacheKey: cfg.PromptCacheKey,
	})
}

// reasoningEffort is OpenAI's reasoning_effort for a level of Config.Thinking: none for
// "off" and "".
func reasoningEffort(level string) string {
	if ThinkingBudget(level) == 0 {
		return ""
	}
	return level
}

func newAnthropic(cfg Config) (llm.Provider, error) {
	if strings.TrimSpace(cfg.ID) == "" {
		return nil, errors.New(`model.id is required for provider "anthropic" (e.g. "claude-sonnet-4-5")`)
	}
	base := firstNonEmpty(cfg.BaseURL, os.Getenv(EnvAnthropicBaseURL), anthropic.DefaultBaseURL)
	keyEnv := firstNonEmpty(cfg.APIKeyEnv, EnvAnthropicKey)
	key, from, fileErr := apiKey(Anthropic, keyEnv, base)
	if key == "" {
		return nil, missingKey("Anthropic", keyEnv, cfg.APIKeyEnv != "", fileErr)
	}
	return anthropic.New(anthropic.Options{
		Model: cfg.ID, BaseURL: base, APIKey: key, APIKeyEnv: from, MaxTokens: cfg.MaxTokens,
		RequestTimeout: millis(cfg.RequestTimeoutMs), IdleTimeout: millis(cfg.IdleTimeoutMs),
		ThinkingBudget: ThinkingBudget(cfg.Thinking),
	})
}

// checkTimeout fails when ms, the value of setting, is negative or above MaxTimeoutMs.
func checkTimeout(setting string, ms, def int) error {
	if ms < 0 || ms > MaxTimeoutMs {
		return fmt.Errorf("%s is %d: give a number of milliseconds from 1 to %d, or 0 (or nothing) for the default of %d", setting, ms, MaxTimeoutMs, def)
	}
	return nil
}

// millis is ms milliseconds; 0 stays 0, which the providers read as their default.
func millis(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// KeySource returns where New would take cfg's API key from: the environment variable's
// name, pid login's credentials entry (`pid login's credentials file ("anthropic")`), or ""
// when the server needs none (an OpenAI-compatible server at another base URL, without
// apiKeyEnv). It fails as New does when the key is missing. It never returns the key.
// Safe for concurrent use; it reads the environment and the credentials file.
func KeySource(cfg Config) (string, error) {
	switch cfg.Provider {
	case OpenAI:
		base := firstNonEmpty(cfg.BaseURL, os.Getenv(EnvOpenAIBaseURL), openai.DefaultBaseURL)
		keyEnv := firstNonEmpty(cfg.APIKeyEnv, EnvOpenAIKey)
		key, from, fileErr := apiKey(OpenAI, keyEnv, base)
		if key != "" {
			return from, nil
		}
		if cfg.APIKeyEnv != "" || isHost(base, "api.openai.com") {
			return "", missingKey("OpenAI", keyEnv, cfg.APIKeyEnv != "", fileErr)
		}
		return "", nil
	case Anthropic:
		base := firstNonEmpty(cfg.BaseURL, os.Getenv(EnvAnthropicBaseURL), anthropic.DefaultBaseURL)
		keyEnv := firstNonEmpty(cfg.APIKeyEnv, EnvAnthropicKey)
		key, from, fileErr := apiKey(Anthropic, keyEnv, base)
		if key == "" {
			return "", missingKey("Anthropic", keyEnv, cfg.APIKeyEnv != "", fileErr)
		}
		return from, nil
	}
	return "", fmt.Errorf(`unknown model provider %q: model.provider must be "openai" or "anthropic"`, cfg.Provider)
}

// apiKey returns the key for provider at base: the environment variable keyEnv's value
// when set, else the key pid login saved for base's origin (package credentials), else "".
// from says where the key came from, for error text: keyEnv, or the credentials entry.
// fileErr is why the credentials file could not be used, when it could not.
func apiKey(provider, keyEnv, base string) (key, from string, fileErr error) {
	if key = strings.TrimSpace(os.Getenv(keyEnv)); key != "" {
		return key, keyEnv, nil
	}
	key, name, fileErr := credentials.Lookup(provider, base)
	if key = strings.TrimSpace(key); key != "" {
		return key, fmt.Sprintf("pid login's credentials file (%q)", name), nil
	}
	return "", keyEnv, fileErr
}

func missingKey(api, env string, named bool, fileErr error) error {
	var err error
	if named {
		err = fmt.Errorf("no %s API key: %s (named by model.apiKeyEnv) is empty or unset, and pid login saved none for this server", api, env)
	} else {
		err = fmt.Errorf("no %s API key: set %s, run pid login, or name the variable that holds the key in model.apiKeyEnv", api, env)
	}
	if fileErr != nil {
		err = fmt.Errorf("%w (pid login's credentials file was not read: %v)", err, fileErr)
	}
	return err
}

func isHost(base, host string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), host)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// This file holds Model: a model as the settings files and the faces configure it (their
// "model", and the entries of "models"), checked, completed from a "models" entry, and opened
// as the llm.Provider its calls go to; and Price, what its calls cost.

package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"strings"

	"github.com/pid-agent/pid/llm"
)

// Script is the provider of a scripted model: turns given in advance, for tests and headless
// runs.
const Script = "script"

// Model is a model as the settings files and the faces configure it: "openai" (any
// OpenAI-compatible server), "anthropic", or "script".
type Model struct {
	Provider string `json:"provider"`
	ID       string `json:"id,omitempty"`
	// Subagents, for a scripted model, is the model of each task call's child, by the
	// task's description; a child without one uses this model.
	Subagents map[string]*Model `json:"subagents,omitempty"`
	// Name is how a person calls the model ("Sonnet 4.5"), shown by models/list.
	Name      string `json:"name,omitempty"`
	BaseURL   string `json:"baseUrl,omitempty"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	MaxTokens int    `json:"maxTokens,omitempty"`
	// RequestTimeoutMs and IdleTimeoutMs bound the wait for a response's headers and the
	// silence mid-stream (see docs/providers.md); 0 means the default.
	RequestTimeoutMs int `json:"requestTimeoutMs,omitempty"`
	IdleTimeoutMs    int `json:"idleTimeoutMs,omitempty"`
	// Thinking is how hard the model thinks: "off" (or absent), "low", "medium" or "high"
	// (see Config.Thinking, ThinkingLevels).
	Thinking string `json:"thinking,omitempty"`
	// API is, for provider "openai", "chat" (the default) or "responses" (OpenAI's
	// Responses API); PromptCacheKey sends the session's id as prompt_cache_key with the
	// chat-completions API (the Responses API always does). See Config.
	API            string `json:"api,omitempty"`
	PromptCacheKey bool   `json:"promptCacheKey,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 means the default for the
	// model id (see compact.ContextWindow).
	ContextWindow int `json:"contextWindow,omitempty"`
	// Compaction is {enabled?, reserveTokens?, keepRecentTokens?} (see compact.Settings);
	// absent means the defaults.
	Compaction json.RawMessage `json:"compaction,omitempty"`
	// Images says whether the model takes images in a prompt; nil means the default for
	// the provider (see TakesImages).
	Images *bool `json:"images,omitempty"`
	// Turns are a scripted model's answers to the loop's model calls, in order.
	Turns []llm.Turn `json:"turns,omitempty"`
	// Price, if set, is the model's price (USD per million tokens), for the session's cost.
	Price *Price `json:"price,omitempty"`
	// Summaries are a scripted model's answers to compactions' summary requests, in order:
	// a summary never takes one of Turns. Past them, the summary is a fixed text
	// (ScriptedSummary).
	Summaries []llm.Turn `json:"summaries,omitempty"`
}

// Price is a model's price in USD per million tokens: input (uncached), output, and the
// cache's reads and writes (absent: priced as input).
type Price struct {
	Input      float64  `json:"input"`
	Output     float64  `json:"output"`
	CacheRead  *float64 `json:"cacheRead,omitempty"`
	CacheWrite *float64 `json:"cacheWrite,omitempty"`
}

// Cost is what one call's usage costs at p, in USD (0 for no price or no usage). Pure.
func (p *Price) Cost(u *llm.Usage) float64 {
	if p == nil || u == nil {
		return 0
	}
	cr, cw := p.Input, p.Input
	if p.CacheRead != nil {
		cr = *p.CacheRead
	}
	if p.CacheWrite != nil {
		cw = *p.CacheWrite
	}
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output + float64(u.CacheRead)*cr + float64(u.CacheWrite)*cw) / 1e6
}

// FieldError is a model configuration that cannot be used: Field names the member at fault
// ("" when the whole value is), Msg says why and what to write instead.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Msg }

func fieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// DecodeModel reads a model configuration given as JSON; a value that does not fit is a
// *FieldError naming the member. Pure.
func DecodeModel(raw json.RawMessage) (*Model, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || raw[0] != '{' {
		return nil, fieldError("", `a model is an object such as {"provider": "anthropic", "id": "claude-sonnet-4-5"}`)
	}
	var m Model
	if err := json.Unmarshal(raw, &m); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			return nil, fieldError(te.Field, "%q must be %s, not %s", te.Field, JSONKind(te.Type.Kind().String()), te.Value)
		}
		return nil, fieldError("", "%v", err)
	}
	return &m, nil
}

// JSONKind names a Go kind as the JSON value it decodes from ("a string", "a list"). Pure.
func JSONKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a number"
}

// Check reports what makes m unusable, as a *FieldError: its thinking level, its API, its
// provider (missing, or not one pid knows), its id (missing). The key and the timeouts are
// Open's to check. Pure.
func (m *Model) Check() error {
	if err := CheckThinking(m.Thinking); err != nil {
		return fieldError("thinking", "%v", err)
	}
	if m.Provider != Script {
		if err := CheckAPI(m.Provider, m.API); err != nil {
			return fieldError("api", "%v", err)
		}
	}
	switch m.Provider {
	case Script:
		return nil
	case OpenAI, Anthropic:
	case "":
		return fieldError("provider", `"provider" is missing: use "anthropic", "openai" (also for Ollama, vLLM, llama.cpp or LM Studio, with their "baseUrl"), or "script"`)
	default:
		return fieldError("provider", `unknown provider %q: use "anthropic", "openai" (also for Ollama, vLLM, llama.cpp or LM Studio, with their "baseUrl"), or "script"`, m.Provider)
	}
	if strings.TrimSpace(m.ID) == "" {
		return fieldError("id", `"id" is missing: name the model, e.g. "claude-sonnet-4-5" or "gpt-4.1" (for Ollama, the model's name)`)
	}
	return nil
}

// Open returns the providers of a checked model: the one its calls go to, and the one that
// answers compactions' summary requests (the same, but for a scripted model, whose summaries
// are scripted apart from its turns). calls and summaries are how many model calls and
// summary requests a scripted model already answered (a loaded session goes on from there).
// For a provider's model it fails as New does; when what is missing is its key,
// KeyMissing reports so.
func (m *Model) Open(calls, summaries int) (call, summarize llm.Provider, err error) {
	if m.Provider == Script {
		return llm.NewScriptFrom(calls, m.Turns...), scriptedSummaries(summaries, m.Summaries), nil
	}
	p, err := New(Config{
		Provider: m.Provider, ID: m.ID, BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv, MaxTokens: m.MaxTokens,
		RequestTimeoutMs: m.RequestTimeoutMs, IdleTimeoutMs: m.IdleTimeoutMs, Thinking: m.Thinking,
		API: m.API, PromptCacheKey: m.PromptCacheKey,
	})
	return p, p, err
}

// KeyMissing reports whether err, Open's, says that m's key variable (KeyVariable) is unset
// or empty in pid's environment.
func (m *Model) KeyMissing(err error) bool {
	v := m.KeyVariable()
	return err != nil && strings.TrimSpace(os.Getenv(v)) == "" && strings.Contains(err.Error(), v)
}

// KeyVariable is the environment variable m's key is read from.
func (m *Model) KeyVariable() string {
	if v := strings.TrimSpace(m.APIKeyEnv); v != "" {
		return v
	}
	if m.Provider == Anthropic {
		return EnvAnthropicKey
	}
	return EnvOpenAIKey
}

// TakesImages reports whether m takes images in a prompt: its "images" setting when set;
// else yes for Anthropic's models, OpenAI's own API and scripted models, and no for other
// OpenAI-compatible servers (a local model seldom sees images; set "images": true for one
// that does).
func (m *Model) TakesImages() bool {
	if m.Images != nil {
		return *m.Images
	}
	switch m.Provider {
	case Script, Anthropic:
		return true
	case OpenAI:
		base := m.BaseURL
		if base == "" {
			base = os.Getenv(EnvOpenAIBaseURL)
		}
		if base == "" {
			return true
		}
		u, err := url.Parse(base)
		return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	return false
}

// Over returns the model of entry (a "models" entry, as its JSON members) with m's own
// members over it: what a model named by provider and id gets from the settings' list. m
// itself is not modified; when the two cannot be merged, m is returned.
func (m *Model) Over(entry map[string]json.RawMessage) *Model {
	own, err := json.Marshal(m)
	var over map[string]json.RawMessage
	if err != nil || json.Unmarshal(own, &over) != nil {
		return m
	}
	merged := maps.Clone(entry)
	if merged == nil {
		merged = map[string]json.RawMessage{}
	}
	maps.Copy(merged, over)
	b, err := json.Marshal(merged)
	var out Model
	if err != nil || json.Unmarshal(b, &out) != nil {
		return m
	}
	return &out
}

// scriptedSummaries returns the summarizer of a scripted model whose compactions already
// took done summaries: it answers the summary requests with summaries in order, and past
// them with ScriptedSummary. It never takes one of the model's turns, so a run that compacts
// stays on its script however many prompts it has.
func scriptedSummaries(done int, summaries []llm.Turn) llm.Provider {
	p := llm.NewScriptFrom(done, summaries...)
	p.Next = func(n int) (llm.Turn, bool) {
		if n < len(summaries) {
			return summaries[n], true
		}
		return llm.Turn{Content: []llm.Content{llm.Text(ScriptedSummary(n))}}, true
	}
	return p
}

// ScriptedSummary is the summary of a scripted model's compaction n (0-based) when its
// "summaries" hold none for it. Pure.
func ScriptedSummary(n int) string {
	return fmt.Sprintf("Summary %d of a scripted session (its model scripts no summary for it).", n+1)
}

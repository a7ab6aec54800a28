// Package openai is a model provider for the OpenAI chat-completions API and the servers
// that speak it (Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter), and for OpenAI's
// Responses API, streaming over net/http.
//
// The entry point is New, which returns a *Provider (an llm.Provider) for one model at one
// base URL; see request.go and decode.go for how a chat-completions request is written and
// its stream read, responses.go and responses_decode.go for the Responses API's.
package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// The APIs a Provider speaks (Options.API).
const (
	// APIChat is the chat-completions API, "/chat/completions": the default, which
	// OpenAI-compatible servers speak.
	APIChat = "chat"
	// APIResponses is OpenAI's Responses API, "/responses": reasoning items go back
	// between tool calls (with store false, as their encrypted content).
	APIResponses = "responses"
)

// Retry bounds the retries of rate-limited (429) and failed (5xx) answers, and of attempts
// cut off by RequestTimeout (or by IdleTimeout before the first block): Attempts (default
// 3, the first included), MaxWait (the total wait, default 60s), Base (the first backoff
// wait when the server names none, doubling, default 1s), and Sleep and Now, which tests
// replace.
type Retry = wire.Retry

// Options configure a Provider.
type Options struct {
	// Model is the model id, e.g. "gpt-4.1" or, for Ollama, "qwen3:8b". Required.
	Model string
	// BaseURL is the API root that "/chat/completions" is appended to (default
	// DefaultBaseURL). OpenAI-compatible servers usually serve it under /v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers need none).
	APIKey string
	// APIKeyEnv names the environment variable the key came from, for error text.
	APIKeyEnv string
	// MaxTokens caps the answer's tokens; 0 leaves it to the server. It is sent as
	// max_completion_tokens to api.openai.com and as max_tokens elsewhere, which is the
	// field local servers read.
	MaxTokens int
	// ReasoningEffort, when set ("low", "medium", "high"), is sent as reasoning_effort (the
	// Responses API: reasoning.effort, with the reasoning's encrypted content asked for):
	// how hard a reasoning model thinks. Empty sends nothing, for servers that reject the
	// field.
	ReasoningEffort string
	// API is APIChat (or "", the default) or APIResponses.
	API string
	// PromptCacheKey sends a request's llm.Request.CacheKey as prompt_cache_key in a
	// chat-completions request (OpenAI routes requests with the same key to the same
	// cache). The Responses API always sends it; other servers may reject the field.
	PromptCacheKey bool
	// HTTPClient makes the requests (default: a client on http.DefaultTransport with no
	// overall timeout, since an answer streams for as long as it takes). New uses a copy
	// whose redirect policy sends the key only to BaseURL's origin (scheme, host, port),
	// refuses https to http, and refuses 301, 302 and 303, which would re-send the POST
	// as a GET; the client's own CheckRedirect, if any, applies after that.
	HTTPClient *http.Client
	Retry      Retry
	// RequestTimeout bounds the wait for the response headers of each attempt (default
	// 60s); an attempt that passes it is cut off and retried as a 5xx answer is.
	RequestTimeout time.Duration
	// IdleTimeout bounds the wait for the next bytes of the stream (default 120s). A
	// stream that passes it before any block reached the sink is made again (from the
	// Retry budget); after that, the call ends with StopError and the content so far.
	IdleTimeout time.Duration
}

// Provider streams assistant messages from a chat-completions endpoint. It is safe for
// concurrent use.
type Provider struct {
	opts     Options
	endpoint string
	info     wire.Info
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for o.Model at o.BaseURL. It fails when Model is empty or
// BaseURL is not an http or https URL, or API is none of APIChat and APIResponses; it makes
// no request.
func New(o Options) (*Provider, error) {
	info, err := api.Check(wire.Info{Model: o.Model, BaseURL: o.BaseURL, KeyEnv: o.APIKeyEnv, HasKey: o.APIKey != ""})
	if err != nil {
		return nil, err
	}
	switch o.API {
	case "":
		o.API = APIChat
	case APIChat, APIResponses:
	default:
		return nil, fmt.Errorf("openai: unknown API %q: use %q or %q", o.API, APIChat, APIResponses)
	}
	o.BaseURL = info.BaseURL
	o.HTTPClient = wire.GuardClient(o.HTTPClient, o.BaseURL, o.APIKey)
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = wire.DefaultRequestTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = wire.DefaultIdleTimeout
	}
	endpoint := o.BaseURL + "/chat/completions"
	if o.API == APIResponses {
		endpoint = o.BaseURL + "/responses"
	}
	return &Provider{opts: o, endpoint: endpoint, info: info}, nil
}

// api is what New checks and how error text names the server.
var api = wire.API{
	Pkg:            "openai",
	Name:           "OpenAI",
	Host:           openAIHost,
	DefaultBaseURL: DefaultBaseURL,
	CompatibleHint: "and that model.baseUrl is the API root (OpenAI-compatible servers usually serve it under /v1)",
}

const openAIHost = "api.openai.com"

func isOpenAI(u *url.URL) bool { return strings.EqualFold(u.Hostname(), openAIHost) }

// Model returns the model id the provider asks for.
func (p *Provider) Model() string { return p.opts.Model }

// BaseURL returns the API root the provider posts to.
func (p *Provider) BaseURL() string { return p.opts.BaseURL }

// Timeouts returns the bounds on the wait for response headers and on a stream's
// silences, defaults applied.
func (p *Provider) Timeouts() (request, idle time.Duration) {
	return p.opts.RequestTimeout, p.opts.IdleTimeout
}

// API returns the API the provider speaks, APIChat or APIResponses.
func (p *Provider) API() string { return p.opts.API }

// Stream implements llm.Provider: it posts req as a streaming chat completion (or Responses
// API request) and returns the assistant message. Text, reasoning (reasoning_content or
// reasoning deltas, as llama.cpp, vLLM, Ollama and OpenRouter send; reasoning items and
// their summaries from the Responses API) and tool calls stream to sink as they arrive.
// Failures are a StopError message whose text says what to check, with the key redacted; a
// cancelled ctx returns StopAborted at once.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	b := wire.NewBuilder(sink)
	body, newDec := p.body, func(b *wire.Builder) wire.Decoder { return newDecoder(b, &p.info) }
	if p.opts.API == APIResponses {
		body, newDec = p.responsesBody, func(b *wire.Builder) wire.Decoder { return newResponsesDecoder(b, &p.info) }
	}
	raw, err := body(req)
	if err != nil {
		return b.Fail(llm.StopError, p.info.Unwritable(err))
	}
	header := http.Header{}
	if p.opts.APIKey != "" {
		header.Set("Authorization", "Bearer "+p.opts.APIKey)
	}
	call := &wire.Call{
		Info:     &p.info,
		Client:   p.opts.HTTPClient,
		Retry:    p.opts.Retry,
		Timeouts: wire.Timeouts{Request: p.opts.RequestTimeout, Idle: p.opts.IdleTimeout},
		Key:      p.opts.APIKey,
		Endpoint: p.endpoint,
		Build:    wire.PostJSON(p.endpoint, raw, header),
	}
	return wire.Run(ctx, call, b, newDec)
}

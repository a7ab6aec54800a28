// Package anthropic is a model provider for Anthropic's Messages API, streaming over
// net/http.
//
// The entry point is New, which returns a *Provider (an llm.Provider) for one model; see
// request.go for how a request is written, decode.go for how the stream is read and
// signatures.go for how thinking signatures survive between turns.
package anthropic

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// DefaultBaseURL is Anthropic's API; "/v1/messages" is appended to it.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// InterleavedThinkingBeta is the anthropic-beta header value sent with thinking on, so
// the model thinks between tool calls too, not only at the start of its answer.
const InterleavedThinkingBeta = "interleaved-thinking-2025-05-14"

// Retry bounds the retries of rate-limited (429), overloaded (529) and failed (5xx)
// answers, and of attempts cut off by RequestTimeout (or by IdleTimeout before the first
// block): Attempts (default 3, the first included), MaxWait (the total wait, default 60s),
// Base (the first backoff wait when the server names none, doubling, default 1s), and
// Sleep and Now, which tests replace.
type Retry = wire.Retry

// Options configure a Provider.
type Options struct {
	// Model is the model id, e.g. "claude-sonnet-4-5". Required.
	Model string
	// BaseURL is the API root (default DefaultBaseURL); a root ending in /v1 is accepted too.
	BaseURL string
	// APIKey is sent as x-api-key. Required by Anthropic; New does not check it, so a
	// compatible server without keys can be used.
	APIKey string
	// APIKeyEnv names the environment variable the key came from, for error text.
	APIKeyEnv string
	// MaxTokens caps the answer's tokens (default MaxTokensFor(Model): the model's
	// output limit, or DefaultMaxTokens for a model it does not know).
	MaxTokens int
	// ThinkingBudget, when positive, turns on extended thinking with that many tokens,
	// interleaved between tool calls (InterleavedThinkingBeta); MaxTokens is raised to the
	// budget plus 8192 when it is not above it already.
	ThinkingBudget int
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

// Provider streams assistant messages from the Messages API. It is safe for concurrent use.
type Provider struct {
	opts     Options
	endpoint string
	info     wire.Info
	sigs     *signatures
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for o.Model. It fails when Model is empty or BaseURL is not an
// http or https URL; it makes no request.
func New(o Options) (*Provider, error) {
	info, err := api.Check(wire.Info{Model: o.Model, BaseURL: o.BaseURL, KeyEnv: o.APIKeyEnv, HasKey: o.APIKey != ""})
	if err != nil {
		return nil, err
	}
	o.BaseURL = info.BaseURL
	if o.MaxTokens <= 0 {
		o.MaxTokens = MaxTokensFor(o.Model)
	}
	if o.ThinkingBudget > 0 && o.MaxTokens <= o.ThinkingBudget {
		o.MaxTokens = o.ThinkingBudget + thinkingAnswer
	}
	o.HTTPClient = wire.GuardClient(o.HTTPClient, o.BaseURL, o.APIKey)
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = wire.DefaultRequestTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = wire.DefaultIdleTimeout
	}
	endpoint := o.BaseURL + "/v1/messages"
	if strings.HasSuffix(o.BaseURL, "/v1") {
		endpoint = o.BaseURL + "/messages"
	}
	return &Provider{opts: o, endpoint: endpoint, info: info, sigs: newSignatures(signatureMemory)}, nil
}

// api is what New checks and how error text names the server.
var api = wire.API{Pkg: "anthropic", Name: "Anthropic", Host: "api.anthropic.com", DefaultBaseURL: DefaultBaseURL}

// Model returns the model id the provider asks for.
func (p *Provider) Model() string { return p.opts.Model }

// BaseURL returns the API root the provider posts to.
func (p *Provider) BaseURL() string { return p.opts.BaseURL }

// Timeouts returns the bounds on the wait for response headers and on a stream's
// silences, defaults applied.
func (p *Provider) Timeouts() (request, idle time.Duration) {
	return p.opts.RequestTimeout, p.opts.IdleTimeout
}

// MaxTokens returns the token cap sent with each request.
func (p *Provider) MaxTokens() int { return p.opts.MaxTokens }

// Stream implements llm.Provider: it posts req as a streaming Messages request and returns
// the assistant message. Text, thinking and tool_use blocks stream to sink as they arrive.
// Failures are a StopError message whose text says what to check, with the key redacted;
// a cancelled ctx returns StopAborted at once.
//
// A request the API refuses because the prompt and max_tokens together pass the context
// window (models from Claude 3.7 on count max_tokens whole) is made again at once with
// max_tokens lowered to the room the window leaves, when that still leaves room for an
// answer: a long conversation then goes on instead of compacting early.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	msg := p.stream(ctx, req, sink, p.opts.MaxTokens)
	if room, ok := p.roomLeft(&msg); ok {
		msg = p.stream(ctx, req, sink, room)
	}
	return msg
}

func (p *Provider) stream(ctx context.Context, req *llm.Request, sink llm.StreamSink, maxTokens int) llm.Message {
	b := wire.NewBuilder(sink)
	body, err := p.body(req, maxTokens)
	if err != nil {
		return b.Fail(llm.StopError, p.info.Unwritable(err))
	}
	header := http.Header{}
	header.Set("anthropic-version", APIVersion)
	if p.opts.ThinkingBudget > 0 {
		header.Set("anthropic-beta", InterleavedThinkingBeta)
	}
	if p.opts.APIKey != "" {
		header.Set("x-api-key", p.opts.APIKey)
	}
	call := &wire.Call{
		Info:     &p.info,
		Client:   p.opts.HTTPClient,
		Retry:    p.opts.Retry,
		Timeouts: wire.Timeouts{Request: p.opts.RequestTimeout, Idle: p.opts.IdleTimeout},
		Key:      p.opts.APIKey,
		Endpoint: p.endpoint,
		Build:    wire.PostJSON(p.endpoint, body, header),
	}
	return wire.Run(ctx, call, b, func(b *wire.Builder) wire.Decoder { return newDecoder(b, &p.info, p.sigs) })
}

// contextLimit is the API's wording of a prompt that fits the window but not with
// max_tokens: "input length and `max_tokens` exceed context limit: 188000 + 64000 > 200000,
// decrease input length or `max_tokens` and try again".
var contextLimit = regexp.MustCompile(`exceed context limit: ([0-9]+) \+ ([0-9]+) > ([0-9]+)`)

// minAnswer is the fewest tokens roomLeft lowers max_tokens to (above a thinking budget).
const minAnswer = 1024

// roomLeft reports whether msg is the API's refusal of a prompt that leaves room for an
// answer only below the max_tokens asked, and the max_tokens to ask instead.
func (p *Provider) roomLeft(msg *llm.Message) (int, bool) {
	if msg.StopReason != llm.StopError || len(msg.Content) > 0 {
		return 0, false
	}
	m := contextLimit.FindStringSubmatch(msg.ErrorMessage)
	if m == nil {
		return 0, false
	}
	input, _ := strconv.Atoi(m[1])
	asked, _ := strconv.Atoi(m[2])
	limit, _ := strconv.Atoi(m[3])
	room := limit - input
	if room >= asked || room < p.opts.ThinkingBudget+minAnswer {
		return 0, false
	}
	return room, true
}

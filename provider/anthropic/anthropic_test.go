package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
)

// TestMain fails the package when a test leaves a goroutine behind (a connection or
// handler that outlives its call).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-ant-api03-Hc4Tq9Wm2Zx7Vb5Nk8Lp"

func file(name string) string { return filepath.Join("..", "testdata", "anthropic", name) }

func newProvider(t *testing.T, srv *replay.Server, o anthropic.Options) (*anthropic.Provider, *replay.Sleeps) {
	t.Helper()
	w := &replay.Sleeps{}
	if o.Model == "" {
		o.Model = "claude-sonnet-4-5"
	}
	o.BaseURL, o.APIKey, o.APIKeyEnv, o.HTTPClient = srv.URL, testKey, "ANTHROPIC_API_KEY", srv.Client()
	o.Retry.Sleep = w.Sleep
	p, err := anthropic.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

var simpleReq = &llm.Request{SystemPrompt: "Be brief.", Messages: []llm.Message{llm.NewUser("Hi")}}

// stream runs one Stream call and checks what every call must hold.
func stream(t *testing.T, p llm.Provider, ctx context.Context, req *llm.Request) (llm.Message, *replay.Recorder) {
	t.Helper()
	return replay.Stream(t, p, ctx, req, testKey)
}

func TestText(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`text_start 0 ""`,
		`text_delta 0 "Hello"`,
		`text_delta 0 "! How can I help?"`,
		`text_end 0 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" || msg.ErrorMessage != "" {
		t.Errorf("message = %+v", msg)
	}
	wantUsage := llm.Usage{Input: 25, Output: 15, CacheRead: 2000, CacheWrite: 100, Total: 2140}
	if msg.Usage == nil || *msg.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", msg.Usage, wantUsage)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v1/messages" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	for h, v := range map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01", "Content-Type": "application/json"} {
		if got := r.Header.Get(h); got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}

func TestParallelToolCallsFragmented(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("parallel_tools.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`text_start 0 ""`,
		`text_delta 0 "I'll read bot"`, // "h" might start the key: it waits
		`text_delta 0 "h files."`,
		`text_end 0 ""`,
		`toolcall_start 1 ""`,
		`toolcall_delta 1 "{\"pa"`,
		`toolcall_delta 1 "th\": \"a."`,
		`toolcall_delta 1 "txt\"}"`,
		`toolcall_end 1 ""`,
		`toolcall_start 2 ""`,
		`toolcall_delta 2 "{\"pattern\": \"TO"`,
		`toolcall_delta 2 "DO\", \"path\": \"b/\"}"`,
		`toolcall_end 2 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if got := string(rec.Partials()[7].Content[1].Arguments); got != `{"path": "a."}` {
		t.Errorf("partial arguments = %s", got)
	}
	wantCalls := []llm.ToolCall{
		{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read", Arguments: json.RawMessage(`{"path": "a.txt"}`)},
		{ID: "toolu_01UsKqYw3nH4KpTd8gSBX5sF", Name: "grep", Arguments: json.RawMessage(`{"pattern": "TODO", "path": "b/"}`)},
	}
	if d := cmp.Diff(wantCalls, msg.ToolCalls()); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse || msg.Usage == nil || msg.Usage.Input != 472 || msg.Usage.Output != 89 {
		t.Errorf("stop %q usage %+v", msg.StopReason, msg.Usage)
	}
}

// Whole arguments in one delta, and (as some compatible servers send) in the start event.
func TestWholeToolCalls(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("whole_call.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, rec := stream(t, p, context.Background(), simpleReq)
	want := []string{
		`start 0 ""`,
		`toolcall_start 0 ""`,
		`toolcall_delta 0 "{\"path\": \"main.go\"}"`,
		`toolcall_end 0 ""`,
		`toolcall_start 1 ""`,
		`toolcall_delta 1 "{\"path\":\"cmd\"}"`,
		`toolcall_end 1 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantCalls := []llm.ToolCall{
		{ID: "toolu_01A", Name: "read", Arguments: json.RawMessage(`{"path": "main.go"}`)},
		{ID: "toolu_01B", Name: "ls", Arguments: json.RawMessage(`{"path":"cmd"}`)},
	}
	if d := cmp.Diff(wantCalls, msg.ToolCalls()); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
}

// Thinking streams as a thinking block; its signature is kept with it and sent back with it
// on the next turn. redacted_thinking is a thinking block marked redacted, its data kept.
func TestThinking(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("thinking.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: 2048})
	msg, rec := stream(t, p, context.Background(), simpleReq)

	thought := "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3"
	// The last bytes of a text wait for the next delta while they could be the start of the
	// key or of one of its encodings (see wire.Secret): the steps are cut where that says.
	want := []string{
		`start 0 ""`,
		`thinking_start 0 ""`,
		`thinking_delta 0 "Let me solve this step by step:\n\n1. First break down 27 * 45"`,
		`thinking_delta 0 "3\n2. 453 = 400 + 50 + "`,
		`thinking_delta 0 "3"`,
		`thinking_end 0 ""`,
		`thinking_start 1 ""`,
		`thinking_end 1 ""`,
		`text_start 2 ""`,
		`text_delta 2 "27 * 453 = 12,23"`,
		`text_delta 2 "1"`,
		`text_end 2 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantContent := []llm.Content{
		{Type: llm.ContentThinking, Thinking: thought, Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		{Type: llm.ContentThinking, Signature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP", Redacted: true},
		llm.Text("27 * 453 = 12,231"),
	}
	if d := cmp.Diff(wantContent, msg.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}

	var first map[string]any
	json.Unmarshal(srv.Requests()[0].Body, &first)
	wantThinking := map[string]any{"type": "enabled", "budget_tokens": 2048.0}
	if d := cmp.Diff(wantThinking, first["thinking"]); d != "" || first["max_tokens"].(float64) <= 2048 {
		t.Errorf("thinking %v, max_tokens %v", first["thinking"], first["max_tokens"])
	}

	// Next turn: the thinking goes back signed; thinking the provider never saw goes as text.
	next := &llm.Request{Messages: []llm.Message{
		llm.NewUser("What is 27 * 453?"), msg, llm.NewUser("And half of it?"),
		{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Content: []llm.Content{llm.Thinking("from elsewhere"), llm.Text("6115.5")}},
		llm.NewUser("Thanks."),
	}}
	stream(t, p, context.Background(), next)
	var second struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(srv.Requests()[1].Body, &second)
	signed := map[string]any{"type": "thinking", "thinking": thought, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
	if d := cmp.Diff(signed, second.Messages[1].Content[0]); d != "" {
		t.Errorf("thinking sent back (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"type": "text", "text": "from elsewhere"}, second.Messages[3].Content[0]); d != "" {
		t.Errorf("unsigned thinking sent back (-want +got):\n%s", d)
	}
}

func TestLengthCutOff(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("length.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopLength || msg.Text() != "Once upon a time, there" || msg.ErrorMessage != "" {
		t.Errorf("message = %+v, want stop length with the text", msg)
	}
}

func TestRefusal(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("refusal.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "declined") || !strings.Contains(msg.ErrorMessage, "refusal") {
		t.Errorf("message = %+v", msg)
	}
}

func TestMidStreamError(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("error_midstream.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || msg.Text() != "Let me" {
		t.Fatalf("message = %+v", msg)
	}
	for _, w := range []string{"is overloaded", "overloaded_error: Overloaded", "Try again"} {
		if !strings.Contains(msg.ErrorMessage, w) {
			t.Errorf("error %q does not say %q", msg.ErrorMessage, w)
		}
	}
}

func TestDroppedConnection(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("dropped.sse"), Drop: true})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "dropped before the answer was complete") {
		t.Fatalf("message = %+v", msg)
	}
	calls := msg.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "toolu_drop" || string(calls[0].Arguments) != `{"path": "RE"}` {
		t.Errorf("calls = %+v", calls)
	}
	if msg.Usage == nil || msg.Usage.Input != 50 {
		t.Errorf("usage = %+v, want the input tokens of message_start", msg.Usage)
	}
}

func TestRateLimitedThenSuccess(t *testing.T) {
	srv := replay.New(t,
		replay.Step{Status: 429, Header: map[string]string{"Retry-After": "4"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
		replay.Step{Status: 529, Header: map[string]string{"Retry-After": "0"}, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		replay.Step{File: file("text.sse")},
	)
	p, w := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
		t.Fatalf("message = %+v", msg)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if got := w.Got(); len(got) != 2 || got[0] != 4*time.Second || got[1] != 0 {
		t.Errorf("waits = %v, want [4s 0s] from Retry-After", got)
	}
}

func TestStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"bad key", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`,
			[]string{"rejected the API key", "ANTHROPIC_API_KEY", "invalid x-api-key [redacted]"}},
		{"unknown model", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-sonnet-4-5"}}`,
			[]string{`does not know model "claude-sonnet-4-5"`, "Check model.id"}},
		{"context too long", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			[]string{"conversation is too long", "prompt is too long"}},
		{"overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			[]string{"is overloaded", "after 3 attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := replay.New(t, replay.Step{Status: tc.status, Body: tc.body})
			p, _ := newProvider(t, srv, anthropic.Options{})
			msg, _ := stream(t, p, context.Background(), simpleReq)
			if msg.StopReason != llm.StopError {
				t.Fatalf("stop = %q", msg.StopReason)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg.ErrorMessage, w) {
					t.Errorf("error %q does not say %q", msg.ErrorMessage, w)
				}
			}
			if strings.Contains(msg.ErrorMessage, testKey[:16]) {
				t.Errorf("error holds part of the key: %q", msg.ErrorMessage)
			}
		})
	}
}

func TestAbortSlowStream(t *testing.T) {
	// message_start, content_block_start, ping, the first text delta; then the server waits.
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 4})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg := replay.StreamCancelled(t, p, simpleReq, testKey)
	if msg.StopReason != llm.StopAborted || msg.ErrorMessage != "Operation aborted" || msg.Text() != "Hello" {
		t.Errorf("message = %+v, want aborted with the text so far", msg)
	}
	select {
	case <-srv.Cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the request's context end")
	}
}

func TestNewDefaults(t *testing.T) {
	if _, err := anthropic.New(anthropic.Options{}); err == nil {
		t.Error("New without a model succeeded")
	}
	for _, tc := range []struct {
		o        anthropic.Options
		base     string
		maxToken int
	}{
		{anthropic.Options{Model: "claude-sonnet-4-5"}, anthropic.DefaultBaseURL, 64000},
		{anthropic.Options{Model: "claude-3-haiku-20240307"}, anthropic.DefaultBaseURL, 4096},
		{anthropic.Options{Model: "claude-3-5-haiku-latest", MaxTokens: 1000}, anthropic.DefaultBaseURL, 1000},
		{anthropic.Options{Model: "claude-opus-4-1", ThinkingBudget: 10000, MaxTokens: 5000}, anthropic.DefaultBaseURL, 10000 + 8192},
		{anthropic.Options{Model: "claude-opus-4-1", ThinkingBudget: 16384}, anthropic.DefaultBaseURL, 32000},
		{anthropic.Options{Model: "m", BaseURL: "http://proxy.local/anthropic/"}, "http://proxy.local/anthropic", 16384},
		{anthropic.Options{Model: "m", ThinkingBudget: 16384}, anthropic.DefaultBaseURL, 16384 + 8192},
	} {
		p, err := anthropic.New(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if p.BaseURL() != tc.base || p.MaxTokens() != tc.maxToken {
			t.Errorf("New(%+v): base %q max %d, want %q %d", tc.o, p.BaseURL(), p.MaxTokens(), tc.base, tc.maxToken)
		}
	}
}

// The default max_tokens is the model's documented output limit (issue 32: 8192 cut a write
// of a file over about 25 KB short), in both id forms and behind a platform's prefix; a model
// the table does not know gets 16384.
func TestMaxTokensFor(t *testing.T) {
	for id, want := range map[string]int{
		"claude-opus-4-0": 32000, "claude-opus-4-20250514": 32000, "claude-opus-4-1": 32000, "claude-opus-4-1-20250805": 32000,
		"claude-opus-4-5": 64000, "claude-opus-4-5-20251101": 64000, "claude-opus-4-6": 128000, "claude-opus-4-7": 128000,
		"claude-sonnet-4-0": 64000, "claude-sonnet-4-20250514": 64000, "claude-sonnet-4-5": 64000, "claude-sonnet-4-5-20250929": 64000,
		"claude-sonnet-4-6": 128000, "claude-haiku-4-5": 64000, "claude-haiku-4-5-20251001": 64000,
		"anthropic.claude-opus-4-1-20250805-v1:0": 32000, "claude-haiku-4-5@20251001": 64000,
		"claude-3-7-sonnet-latest": 64000, "claude-3-5-sonnet-20241022": 8192, "claude-3-5-haiku-latest": 8192,
		"claude-3-haiku-20240307": 4096, "claude-3-opus-20240229": 4096,
		"claude-opus-4-9": 16384, "claude-sonnet-5": 16384, "claude-2.1": 16384, "my-proxy-model": 16384, "claude-": 16384,
	} {
		if got := anthropic.MaxTokensFor(id); got != want {
			t.Errorf("MaxTokensFor(%q) = %d, want %d", id, got, want)
		}
	}
}

// With a thinking budget the request asks for interleaved thinking, so the model thinks
// between tool calls too (issue 32); without one it does not.
func TestInterleavedThinkingHeader(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	for _, budget := range []int{0, 2048} {
		p, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: budget})
		stream(t, p, context.Background(), simpleReq)
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Values("anthropic-beta"); len(got) != 0 {
		t.Errorf("without thinking: anthropic-beta %q", got)
	}
	if got := reqs[1].Header.Values("anthropic-beta"); len(got) != 1 || got[0] != "interleaved-thinking-2025-05-14" {
		t.Errorf("with thinking: anthropic-beta %q, want interleaved-thinking-2025-05-14", got)
	}
}

// A base URL that already ends in /v1 is not given a second one.
func TestBaseURLWithV1(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, err := anthropic.New(anthropic.Options{Model: "m", BaseURL: srv.URL + "/v1", APIKey: "k", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	stream(t, p, context.Background(), simpleReq)
	if got := srv.Requests()[0].Path; got != "/v1/messages" {
		t.Errorf("path = %q", got)
	}
}

// A prompt that fits the window but not with the default max_tokens (Claude 3.7 on count
// max_tokens whole) is asked again at once with the room the window leaves; when the room
// would leave no answer (or, with thinking, nothing above the budget), the refusal stands
// and the caller compacts.
func TestMaxTokensLoweredToTheRoomLeft(t *testing.T) {
	refusal := func(input, asked int) replay.Step {
		return replay.Step{Status: 400, Body: fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":"input length and `+"`max_tokens`"+` exceed context limit: %d + %d > 200000, decrease input length or `+"`max_tokens`"+` and try again"}}`, input, asked)}
	}
	maxTokens := func(r replay.Request) int {
		var b struct {
			MaxTokens int `json:"max_tokens"`
		}
		json.Unmarshal(r.Body, &b)
		return b.MaxTokens
	}
	srv := replay.New(t, refusal(188000, 64000), replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, rec := stream(t, p, context.Background(), simpleReq)
	reqs := srv.Requests()
	if msg.StopReason != llm.StopEnd || len(reqs) != 2 || maxTokens(reqs[0]) != 64000 || maxTokens(reqs[1]) != 12000 {
		t.Fatalf("stop %q (%s), %d requests: want the second with max_tokens 12000", msg.StopReason, msg.ErrorMessage, len(reqs))
	}
	// The refused request shows nothing: the message starts once.
	if steps := rec.Steps(); !slices.Equal(slices.DeleteFunc(slices.Clone(steps), func(s string) bool { return s != `start 0 ""` }), []string{`start 0 ""`}) {
		t.Errorf("steps %q: want one start", steps)
	}

	for _, tc := range []struct {
		name   string
		budget int
		input  int
	}{{"no room", 0, 199500}, {"no room above the budget", 16384, 183000}} {
		srv := replay.New(t, refusal(tc.input, 64000), replay.Step{File: file("text.sse")})
		p, _ := newProvider(t, srv, anthropic.Options{ThinkingBudget: tc.budget})
		msg, _ := stream(t, p, context.Background(), simpleReq)
		if msg.StopReason != llm.StopError || len(srv.Requests()) != 1 || !strings.Contains(msg.ErrorMessage, "exceed context limit") {
			t.Errorf("%s: stop %q, %d requests: want the refusal", tc.name, msg.StopReason, len(srv.Requests()))
		}
	}
}

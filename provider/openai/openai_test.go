package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

// TestMain fails the package when a test leaves a goroutine behind (a connection or
// handler that outlives its call).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-Q7vZ3xK9mW2pL5nR8tY4"

func file(name string) string { return filepath.Join("..", "testdata", "openai", name) }

// newProvider returns a provider for srv with the test key, and the record of its waits.
func newProvider(t *testing.T, srv *replay.Server) (*openai.Provider, *replay.Sleeps) {
	t.Helper()
	w := &replay.Sleeps{}
	p, err := openai.New(openai.Options{
		Model: "gpt-4.1", BaseURL: srv.URL + "/v1", APIKey: testKey, APIKeyEnv: "OPENAI_API_KEY",
		HTTPClient: srv.Client(), Retry: openai.Retry{Sleep: w.Sleep},
	})
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
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)

	// The last bytes of a text wait for the next delta while they could be the start of the
	// key or of one of its encodings (see wire.Secret): the steps are cut where that says.
	want := []string{
		`start 0 ""`,
		`text_start 0 ""`,
		`text_delta 0 "Hel"`,
		`text_delta 0 "lo! How ca"`,
		`text_delta 0 "n I help?"`,
		`text_end 0 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if got := rec.Partials()[3].Text(); got != "Hello! How ca" {
		t.Errorf("partial after the second delta = %q", got)
	}
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" || msg.ErrorMessage != "" {
		t.Errorf("message = %+v", msg)
	}
	wantUsage := llm.Usage{Input: 56, Output: 9, CacheRead: 64, Total: 129}
	if msg.Usage == nil || *msg.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v (cached tokens split out of prompt_tokens)", msg.Usage, wantUsage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
}

func TestParallelToolCallsFragmented(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("parallel_tools.sse")})
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`toolcall_start 0 ""`,
		`toolcall_delta 0 "{\"pa"`,
		`toolcall_delta 0 "th\": \"a."`,
		`toolcall_delta 0 "txt\"}"`,
		`toolcall_start 1 ""`,
		`toolcall_delta 1 "{\"pattern\": \"TO"`,
		`toolcall_delta 1 "DO\", \"path\": \"b/\"}"`,
		`toolcall_end 0 ""`,
		`toolcall_end 1 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	parts := rec.Partials()
	if got := parts[1].Content[0]; got.ID != "call_read_a" || got.Name != "read" {
		t.Errorf("call at its start = %+v, want id and name", got)
	}
	if got := string(parts[3].Content[0].Arguments); got != `{"path": "a."}` {
		t.Errorf("partial arguments = %s, want the fragments so far closed into JSON", got)
	}
	wantCalls := []llm.ToolCall{
		{ID: "call_read_a", Name: "read", Arguments: json.RawMessage(`{"path": "a.txt"}`)},
		{ID: "call_grep_b", Name: "grep", Arguments: json.RawMessage(`{"pattern": "TODO", "path": "b/"}`)},
	}
	if d := cmp.Diff(wantCalls, msg.ToolCalls()); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q, want toolUse", msg.StopReason)
	}
	if msg.Usage == nil || msg.Usage.Input != 310 || msg.Usage.Output != 42 || msg.Usage.Total != 352 {
		t.Errorf("usage = %+v", msg.Usage)
	}
}

// llama.cpp's server sends a whole tool call in one chunk.
func TestWholeToolCallInOneChunk(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("whole_call.sse")})
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`toolcall_start 0 ""`,
		`toolcall_delta 0 "{\"path\":\"main.go\"}"`,
		`toolcall_end 0 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantCalls := []llm.ToolCall{{ID: "jYbXxkSn7DWFcjJq6JyX0Cq2", Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}}
	if d := cmp.Diff(wantCalls, msg.ToolCalls()); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopToolUse || msg.Usage == nil || msg.Usage.Total != 233 {
		t.Errorf("stop %q usage %+v", msg.StopReason, msg.Usage)
	}
}

// Ollama sends parallel calls whole in one chunk, and some versions end them with
// finish_reason "stop": the message still says toolUse.
func TestWholeToolCallsWithFinishStop(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("whole_calls_stop.sse")})
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`toolcall_start 0 ""`,
		`toolcall_delta 0 "{\"path\":\"go.mod\"}"`,
		`toolcall_start 1 ""`,
		`toolcall_delta 1 "{}"`,
		`toolcall_end 0 ""`,
		`toolcall_end 1 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_k1" || calls[1].Name != "ls" || string(calls[1].Arguments) != "{}" {
		t.Errorf("tool calls = %+v", calls)
	}
	if msg.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q, want toolUse", msg.StopReason)
	}
}

// reasoning_content deltas (llama.cpp, DeepSeek, vLLM) become a thinking block.
func TestReasoningContent(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("reasoning.sse")})
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)

	want := []string{
		`start 0 ""`,
		`thinking_start 0 ""`,
		`thinking_delta 0 "The user want"`, // "s" might start the key: it waits
		`thinking_delta 0 "s a greeting."`,
		`thinking_end 0 ""`,
		`text_start 1 ""`,
		`text_delta 1 "Hi"`,
		`text_delta 1 " there."`,
		`text_end 1 ""`,
	}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	wantContent := []llm.Content{llm.Thinking("The user wants a greeting."), llm.Text("Hi there.")}
	if d := cmp.Diff(wantContent, msg.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if msg.StopReason != llm.StopEnd {
		t.Errorf("stop = %q", msg.StopReason)
	}
}

func TestLengthCutOff(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("length.sse")})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopLength || msg.Text() != "Once upon a time, there" || msg.ErrorMessage != "" {
		t.Errorf("message = %+v, want stop length with the text so far", msg)
	}
	if msg.Usage == nil || msg.Usage.Output != 5 {
		t.Errorf("usage = %+v (the usage chunk after finish_reason must be read)", msg.Usage)
	}
}

func TestContentFilter(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("content_filter.sse")})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "content filter") || msg.Text() != "I" {
		t.Errorf("message = %+v, want an error naming the content filter, text kept", msg)
	}
}

func TestMidStreamError(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("error_midstream.sse")})
	p, _ := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError {
		t.Fatalf("stop = %q, want error", msg.StopReason)
	}
	for _, w := range []string{"mid-stream", "server_error", "The server had an error while processing your request"} {
		if !strings.Contains(msg.ErrorMessage, w) {
			t.Errorf("error %q does not say %q", msg.ErrorMessage, w)
		}
	}
	if msg.Text() != "Let me" {
		t.Errorf("text = %q, want the text before the error", msg.Text())
	}
	// "e" waited for what followed, in case it began the key; the error came instead, and
	// the message (not the sink) has it.
	if steps := rec.Steps(); steps[len(steps)-1] != `text_delta 0 "Let m"` {
		t.Errorf("last step = %s, want no end after the error", steps[len(steps)-1])
	}
}

// The server closes the connection in the middle of a tool call's arguments.
func TestDroppedConnection(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("dropped.sse"), Drop: true})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "dropped before the answer was complete") {
		t.Fatalf("message = %+v, want a dropped-connection error", msg)
	}
	if msg.Text() != "Reading it." {
		t.Errorf("text = %q", msg.Text())
	}
	calls := msg.ToolCalls()
	if len(calls) != 1 || string(calls[0].Arguments) != `{"path": "RE"}` {
		t.Errorf("calls = %+v, want the partial call with its arguments closed into JSON", calls)
	}
}

// The body ends cleanly but before finish_reason or [DONE].
func TestStreamEndsEarly(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("dropped.sse")})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "closed before the answer was complete") {
		t.Errorf("message = %+v", msg)
	}
}

func TestRateLimitedThenSuccess(t *testing.T) {
	srv := replay.New(t,
		replay.Step{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","code":"rate_limit_exceeded"}}`},
		replay.Step{File: file("text.sse")},
	)
	p, w := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
		t.Fatalf("message = %+v", msg)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one retry)", len(reqs))
	}
	if string(reqs[0].Body) != string(reqs[1].Body) || len(reqs[1].Body) == 0 {
		t.Errorf("the retry sent a different body:\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	if got := w.Got(); len(got) != 1 || got[0] != 3*time.Second {
		t.Errorf("waits = %v, want [3s] from Retry-After", got)
	}
}

func TestRateLimitedAfterRetries(t *testing.T) {
	srv := replay.New(t, replay.Step{Status: 429, Header: map[string]string{"Retry-After": "0"}, Body: `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`})
	p, w := newProvider(t, srv)
	msg, rec := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || len(rec.Steps()) != 0 {
		t.Fatalf("message = %+v, steps %v", msg, rec.Steps())
	}
	for _, s := range []string{"rate-limited", "Rate limit reached", "after 3 attempts", "try again"} {
		if !strings.Contains(msg.ErrorMessage, s) {
			t.Errorf("error %q does not say %q", msg.ErrorMessage, s)
		}
	}
	if len(srv.Requests()) != 3 || len(w.Got()) != 2 {
		t.Errorf("%d requests and waits %v, want 3 and 2", len(srv.Requests()), w.Got())
	}
}

func TestServerErrorAfterRetries(t *testing.T) {
	srv := replay.New(t, replay.Step{Status: 503, Body: `{"error":{"message":"upstream unavailable"}}`})
	p, w := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "server error (HTTP 503: upstream unavailable)") || !strings.Contains(msg.ErrorMessage, "after 3 attempts") {
		t.Errorf("message = %+v", msg)
	}
	if got := w.Got(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
		t.Errorf("waits = %v, want the backoff [1s 2s]", got)
	}
}

func TestStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"bad key", 401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			[]string{"rejected the API key", "OPENAI_API_KEY", "Incorrect API key provided: [redacted]."}},
		{"forbidden", 403, `{"error":{"message":"Project does not have access to model gpt-4.1"}}`,
			[]string{"refused the request", "OPENAI_API_KEY", "does not have access"}},
		{"unknown model", 404, `{"error":{"message":"The model 'gpt-4.1' does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`,
			[]string{`does not know model "gpt-4.1"`, "Check model.id", "/v1"}},
		{"context too long", 400, `{"error":{"message":"This model's maximum context length is 1047576 tokens. However, your messages resulted in 1100000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			[]string{"conversation is too long", `"gpt-4.1"`, "new session"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := replay.New(t, replay.Step{Status: tc.status, Body: tc.body})
			p, _ := newProvider(t, srv)
			msg, _ := stream(t, p, context.Background(), simpleReq)
			if msg.StopReason != llm.StopError {
				t.Fatalf("stop = %q", msg.StopReason)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg.ErrorMessage, w) {
					t.Errorf("error %q does not say %q", msg.ErrorMessage, w)
				}
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests, want 1 (no retry)", len(srv.Requests()))
			}
		})
	}
}

// The key never reaches error text, whole or in the fragments servers echo.
func TestKeyRedactedFromErrors(t *testing.T) {
	masked := testKey[:12] + "************" + testKey[len(testKey)-9:]
	body := `{"error":{"message":"key ` + testKey + ` (` + masked + `) is revoked"}}`
	for _, status := range []int{401, 400, 500} {
		srv := replay.New(t, replay.Step{Status: status, Body: body})
		p, _ := newProvider(t, srv)
		msg, _ := stream(t, p, context.Background(), simpleReq)
		for _, frag := range []string{testKey, testKey[:12], testKey[len(testKey)-9:]} {
			if strings.Contains(msg.ErrorMessage, frag) {
				t.Errorf("HTTP %d: error %q holds %q of the key", status, msg.ErrorMessage, frag)
			}
		}
		if !strings.Contains(msg.ErrorMessage, "is revoked") {
			t.Errorf("HTTP %d: error %q lost the server's words", status, msg.ErrorMessage)
		}
	}
	// And in an error event inside the stream.
	srv := replay.New(t, replay.Step{Body: "data: {\"error\":{\"message\":\"bad key " + testKey + "\"}}\n\n", Header: map[string]string{"Content-Type": "text/event-stream"}})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || strings.Contains(msg.ErrorMessage, testKey[:12]) || !strings.Contains(msg.ErrorMessage, "[redacted]") {
		t.Errorf("mid-stream error = %q", msg.ErrorMessage)
	}
}

// A slow stream aborted after its first chunk: Stream returns aborted at once and the
// server sees its request's context end (the HTTP stream was closed).
func TestAbortSlowStream(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 3})
	p, _ := newProvider(t, srv)
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

func TestAbortBeforeTheCall(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msg, rec := stream(t, p, ctx, simpleReq)
	if msg.StopReason != llm.StopAborted || len(rec.Steps()) != 0 || len(srv.Requests()) != 0 {
		t.Errorf("message %+v, steps %v, %d requests", msg, rec.Steps(), len(srv.Requests()))
	}
}

func TestUnreachable(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv)
	srv.Close()
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "Could not reach the OpenAI-compatible server at "+srv.URL+"/v1") || !strings.Contains(msg.ErrorMessage, "model.baseUrl") {
		t.Errorf("message = %+v", msg)
	}
}

func TestMalformedStreams(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body, want string
	}{
		{"bad chunk", "text/event-stream", "data: {\"choices\": [\n\n", "malformed stream"},
		{"json body", "application/json", `{"id":"x","choices":[{"message":{"content":"hi"}}]}`, "a JSON body instead of an event stream"},
		{"json error body", "application/json", `{"error":{"message":"stream not supported"}}`, "stream not supported"},
		{"no events", "text/event-stream", "", "closed before the answer was complete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := replay.New(t, replay.Step{Body: tc.body, Header: map[string]string{"Content-Type": tc.ctype}})
			p, _ := newProvider(t, srv)
			msg, _ := stream(t, p, context.Background(), simpleReq)
			if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, tc.want) {
				t.Errorf("message = %+v, want an error saying %q", msg, tc.want)
			}
		})
	}
}

// A nil sink is allowed: the message still arrives whole.
func TestNilSink(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("parallel_tools.sse")})
	p, _ := newProvider(t, srv)
	msg := p.Stream(context.Background(), simpleReq, nil)
	if msg.StopReason != llm.StopToolUse || len(msg.ToolCalls()) != 2 {
		t.Errorf("message = %+v", msg)
	}
}

func TestNewRejects(t *testing.T) {
	for _, o := range []openai.Options{
		{},
		{Model: "m", BaseURL: "localhost:11434"},
		{Model: "m", BaseURL: "ftp://x"},
	} {
		if _, err := openai.New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	p, err := openai.New(openai.Options{Model: "m"})
	if err != nil || p.BaseURL() != openai.DefaultBaseURL || p.Model() != "m" {
		t.Errorf("defaults: %v, %v", p, err)
	}
}

// A connection lost after finish_reason (before the usage chunk and [DONE]) loses nothing.
func TestDroppedAfterFinish(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	srv := replay.New(t, replay.Step{Body: body, Drop: true, Header: map[string]string{"Content-Type": "text/event-stream"}})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd || msg.Text() != "Done." || msg.ErrorMessage != "" {
		t.Errorf("message = %+v, want the complete answer", msg)
	}
}

// Stream never panics, not even when the sink does: the panic becomes an error message.
func TestSinkPanic(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse")})
	p, _ := newProvider(t, srv)
	msg := p.Stream(context.Background(), simpleReq, func(_ *llm.Message, ev llm.StreamEvent) {
		if ev.Kind == llm.StreamTextDelta {
			panic("sink exploded")
		}
	})
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "sink exploded") {
		t.Errorf("message = %+v", msg)
	}
}

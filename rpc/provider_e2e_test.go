// This file runs the real pid binary against a local server that speaks the OpenAI
// chat-completions streaming API (issue 5's end-to-end test): a prompt leads to a parallel
// batch of tool calls whose arguments arrive in fragments, the results go back to the
// server in source order in the next request, and the run ends with text. Two more tests
// cover a rejected key (401) and a cancel while the server is mid-stream.
//
// Orders are fixed with gates, never with sleeps: the server's handler stops at a gate
// until the test has seen the daemon forward what was streamed so far, and the scripted
// tools use waitForEnd. Every wait is bounded by hangGuard.

package rpc

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// e2eKey is the API key the daemon reads from e2eKeyEnv. It must never reach the client
// or the daemon's stderr.
const (
	e2eKeyEnv = "PID_E2E_KEY"
	e2eKey    = "sk-e2e-secret-value"
)

// e2eEnv is the environment, added to the test's, that gives the daemon the key.
var e2eEnv = []string{e2eKeyEnv + "=" + e2eKey}

// stopDaemon ends the daemon the way an editor does (shutdown, exit) and waits for it, so that
// its stderr is complete.
func stopDaemon(t *testing.T, d *daemon) {
	t.Helper()
	d.call("shutdown", omit)
	d.notify("exit", omit)
	if code := d.wait(); code != 0 {
		t.Errorf("pid exit code %d, want 0", code)
	}
}

// fakeRequest is what the fake server was sent.
type fakeRequest struct {
	method, path, auth string
	body               []byte
}

// fakeOpenAI is a chat-completions server answering request n with answers[n]. Requests
// beyond the script get a 400 (which is not retried) and show in requests().
type fakeOpenAI struct {
	*httptest.Server
	answers []func(w http.ResponseWriter, r *http.Request)

	// mu guards reqs.
	mu   sync.Mutex
	reqs []fakeRequest
}

// newFakeOpenAI starts the server. Its cleanup, registered before the daemon's, runs after
// the daemon has exited, so no request is still open when it closes.
func newFakeOpenAI(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{answers: answers}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, fakeRequest{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	f.mu.Unlock()
	if n >= len(f.answers) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"unexpected request #%d","type":"invalid_request_error"}}`, n+1)
		return
	}
	f.answers[n](w, r)
}

func (f *fakeOpenAI) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

// streamStep is one step of a scripted answer: a chunk to send (data), or a gate to wait at.
type streamStep struct {
	data string
	gate chan struct{}
}

// sseChunk is a chat.completion.chunk with one choice holding delta and finish (nil: null).
func sseChunk(delta obj, finish any) streamStep {
	return streamStep{data: mustJSON(obj{
		"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1718000001, "model": "test-model",
		"choices": []obj{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		"usage":   nil,
	})}
}

// sseUsage is the last chunk stream_options.include_usage asks for: no choices, usage.
func sseUsage(prompt, cached, completion int) streamStep {
	return streamStep{data: mustJSON(obj{
		"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1718000001, "model": "test-model",
		"choices": []obj{},
		"usage": obj{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": obj{"cached_tokens": cached}},
	})}
}

// callFragment is a delta carrying one fragment of tool call index (id and name only on
// the call's first fragment).
func callFragment(index int, id, name, args string) obj {
	tc := obj{"index": index, "function": obj{"arguments": args}}
	if id != "" {
		tc["id"], tc["type"] = id, "function"
		tc["function"].(obj)["name"] = name
	}
	return obj{"tool_calls": []obj{tc}}
}

var sseDone = streamStep{data: "[DONE]"}

func sseGate(g chan struct{}) streamStep { return streamStep{gate: g} }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sseAnswer streams steps as text/event-stream, flushing after every chunk. At a gate it
// waits until the test opens it; it gives up when the request ends (the client went away)
// or after hangGuard.
func sseAnswer(steps ...streamStep) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		guard := time.NewTimer(hangGuard)
		defer guard.Stop()
		for _, st := range steps {
			if st.gate != nil {
				select {
				case <-st.gate:
				case <-r.Context().Done():
					return
				case <-guard.C:
					return
				}
				continue
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", st.data); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}

// e2eModel is the session's model: the openai provider at the fake server, its key in
// e2eKeyEnv.
func e2eModel(f *fakeOpenAI) obj {
	return obj{"provider": "openai", "id": "test-model", "baseUrl": f.URL + "/v1", "apiKeyEnv": e2eKeyEnv, "maxTokens": 1234}
}

// keyLeaks returns the runs of 8 or more of the key's characters (the redactor's window:
// servers echo keys whole or masked) that appear in s, each with some context.
func keyLeaks(s string) []string {
	var out []string
	for i := 0; i+8 <= len(s); {
		n := 0
		for j := 0; j+8 <= len(e2eKey); j++ {
			if strings.HasPrefix(s[i:], e2eKey[j:j+8]) {
				for n = 8; i+n < len(s) && j+n < len(e2eKey) && s[i+n] == e2eKey[j+n]; n++ {
				}
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		out = append(out, fmt.Sprintf("%q in …%s…", s[i:i+n], s[max(0, i-60):min(len(s), i+n+20)]))
		i += n
	}
	return out
}

// checkNoKey fails the test if the key shows in any frame the client received or in the
// daemon's stderr.
func checkNoKey(t *testing.T, d *daemon, stderr *syncBuffer) {
	t.Helper()
	for _, m := range d.snapshot() {
		if l := keyLeaks(string(m.raw)); l != nil {
			t.Errorf("frame %d holds the API key: %v", m.seq, l)
		}
	}
	if l := keyLeaks(stderr.String()); l != nil {
		t.Errorf("pid's stderr holds the API key: %v", l)
	}
}

// jsonEq reports whether a and b are the same JSON value.
func jsonEq(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// isAssistantEnd matches the messageEnd of an assistant message.
func isAssistantEnd(m *wireMsg) bool {
	return m.isNotification() && m.method() == "messageEnd" && m.get("params.message.role").String() == "assistant"
}

func countMatching(msgs []*wireMsg, pred func(*wireMsg) bool) int {
	n := 0
	for _, m := range msgs {
		if pred(m) {
			n++
		}
	}
	return n
}

// streamedMessage is what the client saw of one assistant message: its updates, between
// its messageStart and its messageEnd.
type streamedMessage struct {
	updates []*wireMsg
	end     *wireMsg
}

// assistantStreams splits a session's notifications into its assistant messages, failing
// on a messageUpdate outside a messageStart … messageEnd of an assistant message.
func assistantStreams(t *testing.T, notes []*wireMsg) []*streamedMessage {
	t.Helper()
	var out []*streamedMessage
	var cur *streamedMessage
	for _, m := range notes {
		isAssistant := m.get("params.message.role").String() == "assistant"
		switch m.method() {
		case "messageStart":
			if isAssistant {
				if cur != nil {
					t.Errorf("messageStart %d while an assistant message is open", m.seq)
				}
				cur = &streamedMessage{}
				out = append(out, cur)
			}
		case "messageUpdate":
			if cur == nil {
				t.Errorf("messageUpdate %d outside an assistant message's start and end: %s", m.seq, truncate(m.String(), 300))
				continue
			}
			cur.updates = append(cur.updates, m)
		case "messageEnd":
			if isAssistant {
				if cur == nil {
					t.Errorf("messageEnd %d without a messageStart", m.seq)
					continue
				}
				cur.end = m
				cur = nil
			}
		}
	}
	if cur != nil {
		t.Errorf("an assistant message was never ended")
	}
	return out
}

// deltaText returns the concatenated deltas of the given type for contentIndex i, and the
// set of delta types seen.
func deltaText(s *streamedMessage, typ string, i int64) (string, map[string]bool) {
	var sb strings.Builder
	kinds := map[string]bool{}
	for _, u := range s.updates {
		k := u.get("params.delta.type").String()
		kinds[k] = true
		if k == typ && u.get("params.delta.contentIndex").Int() == i {
			sb.WriteString(u.get("params.delta.delta").String())
		}
	}
	return sb.String(), kinds
}

// The tools of the round trip, with their JSON Schemas as session/new gives them and as
// the server must receive them.
const (
	peekSchema = `{"type":"object","properties":{"path":{"type":"string","description":"file to read"}},"required":["path"],"additionalProperties":false}`
	scanSchema = `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`
	e2eSystem  = "You are pid, under test."
)

// A prompt against an OpenAI-compatible server, through the real binary: the first answer
// streams text and two parallel tool calls with fragmented, interleaved arguments; the
// calls run and finish in the opposite of source order; the second request carries the
// results in source order right after the assistant message with both calls; the second
// answer streams text and ends the run. The key is only ever in the Authorization header.
func TestE2EOpenAIRoundTrip(t *testing.T) {
	t.Parallel()
	// Gates: the server stops after a text delta, after tool-call argument fragments, and
	// in the second answer after a text delta, until the test has seen the daemon forward
	// them: so messageUpdate notifications reach the client while the stream is open.
	textSeen, argsSeen, text2Seen := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := newFakeOpenAI(t,
		sseAnswer(
			sseChunk(obj{"role": "assistant", "content": "Let me "}, nil),
			sseGate(textSeen),
			sseChunk(obj{"content": "look."}, nil),
			sseChunk(callFragment(0, "call_peek_a", "peek", ""), nil),
			sseChunk(callFragment(0, "", "", `{"pa`), nil),
			sseChunk(callFragment(1, "call_scan_b", "scan", `{"pattern": `), nil),
			sseGate(argsSeen),
			sseChunk(callFragment(0, "", "", `th": "a.`), nil),
			sseChunk(callFragment(1, "", "", `"TODO", "path"`), nil),
			sseChunk(callFragment(0, "", "", `txt"}`), nil),
			sseChunk(callFragment(1, "", "", `: "b/"}`), nil),
			sseChunk(obj{}, "tool_calls"),
			sseUsage(310, 0, 42),
			sseDone,
		),
		sseAnswer(
			sseChunk(obj{"role": "assistant", "content": "Found one TODO"}, nil),
			sseGate(text2Seen),
			sseChunk(obj{"content": " in b/x.go."}, nil),
			sseChunk(obj{}, "stop"),
			sseUsage(400, 120, 9),
			sseDone,
		),
	)
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Env: e2eEnv, Stderr: stderr})
	d.initialize(nil)
	newRes := d.call("session/new", obj{
		"model":        e2eModel(srv),
		"systemPrompt": e2eSystem,
		"scriptedTools": []obj{
			// peek finishes only after scan's toolEnd: completion order scan, peek.
			{"name": "peek", "description": "Show a file", "parameters": json.RawMessage(peekSchema),
				"steps": []obj{waitForEnd("call_scan_b"), resultStep("contents of a.txt")}},
			{"name": "scan", "description": "Search files for a pattern", "parameters": json.RawMessage(scanSchema),
				"steps": []obj{resultStep("b/x.go:3: // TODO")}},
		},
	})
	sid := newRes.Get("sessionId").String()
	sessionTools := map[string]gjson.Result{}
	for _, tl := range newRes.Get("tools").Array() {
		sessionTools[tl.Get("name").String()] = tl
	}
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "Show a.txt and scan b/ for TODO."})

	// (1) Deltas reach the client while the server holds the stream open.
	isUpdate := func(typ string) func(*wireMsg) bool {
		return func(m *wireMsg) bool {
			return m.get("params.sessionId").String() == sid && m.get("params.delta.type").String() == typ
		}
	}
	u := d.notification("messageUpdate", isUpdate("text_delta"))
	if got := u.get("params.delta.delta").String(); got != "Let me " {
		t.Errorf("first text_delta %q, want %q", got, "Let me ")
	}
	if n := countMatching(d.snapshot(), isAssistantEnd); n != 0 {
		t.Errorf("an assistant messageEnd arrived while the server held the stream open")
	}
	close(textSeen)
	u = d.notification("messageUpdate", func(m *wireMsg) bool {
		return isUpdate("toolcall_delta")(m) && m.get("params.delta.contentIndex").Int() == 2
	})
	if got := u.get("params.delta.delta").String(); got != `{"pattern": ` {
		t.Errorf("scan's first toolcall_delta %q, want %q", got, `{"pattern": `)
	}
	if u.get("params.message").Exists() {
		t.Errorf("a toolcall_delta carries the partial message (only the *_end deltas do): %s", truncate(u.String(), 300))
	}
	if n := countMatching(d.snapshot(), isAssistantEnd); n != 0 {
		t.Errorf("an assistant messageEnd arrived while the server held the stream open")
	}
	close(argsSeen)
	// Block 1 is the peek call: its toolcall_end carries the partial message with it whole.
	u = d.notification("messageUpdate", func(m *wireMsg) bool {
		return isUpdate("toolcall_end")(m) && m.get("params.delta.contentIndex").Int() == 1
	})
	if got := u.get("params.message.content.1.name").String(); got != "peek" || !jsonEq(u.get("params.message.content.1.arguments").Raw, `{"path": "a.txt"}`) {
		t.Errorf("at its toolcall_end the partial message's block 1 is %s, want the peek call: %s", u.get("params.message.content.1").Raw, truncate(u.String(), 400))
	}
	d.notification("messageUpdate", func(m *wireMsg) bool {
		return isUpdate("text_delta")(m) && m.get("params.delta.delta").String() == "Found one TODO"
	})
	if n := countMatching(d.snapshot(), isAssistantEnd); n != 1 {
		t.Errorf("%d assistant messageEnds while the second stream is held open, want 1 (the first message's)", n)
	}
	close(text2Seen)

	res := d.result(prompt)

	// (4) The run ends with the streamed text, stop, and the usage the stream reported.
	msgs := res.Get("messages").Array()
	if got := res.Get("stopReason").String(); got != "stop" {
		t.Errorf("stopReason %q, want stop: %s", got, res.Raw)
	}
	if got := roles(msgs); !reflect.DeepEqual(got, []string{"user", "assistant", "toolResult", "toolResult", "assistant"}) {
		t.Fatalf("messages' roles %v; result %s", got, res.Raw)
	}
	last := msgs[4]
	if got := last.Get("content.#").Int(); got != 1 || last.Get("content.0.text").String() != "Found one TODO in b/x.go." {
		t.Errorf("last message content %s, want the text %q", last.Get("content").Raw, "Found one TODO in b/x.go.")
	}
	if got := last.Get("stopReason").String(); got != "stop" {
		t.Errorf("last message stopReason %q, want stop", got)
	}
	if u := last.Get("usage").Raw; !jsonEq(u, `{"input":280,"output":9,"cacheRead":120,"totalTokens":409}`) {
		t.Errorf("last message usage %s, want input 280, output 9, cacheRead 120, total 409", u)
	}
	first := msgs[1]
	if got := first.Get("stopReason").String(); got != "toolUse" {
		t.Errorf("first assistant message stopReason %q, want toolUse", got)
	}
	if u := first.Get("usage").Raw; !jsonEq(u, `{"input":310,"output":42,"totalTokens":352}`) {
		t.Errorf("first assistant message usage %s", u)
	}
	wantBlocks := []struct{ typ, text, id, name, args string }{
		{typ: "text", text: "Let me look."},
		{typ: "toolCall", id: "call_peek_a", name: "peek", args: `{"path":"a.txt"}`},
		{typ: "toolCall", id: "call_scan_b", name: "scan", args: `{"pattern":"TODO","path":"b/"}`},
	}
	if got := first.Get("content.#").Int(); got != int64(len(wantBlocks)) {
		t.Errorf("first assistant message has %d blocks, want %d: %s", got, len(wantBlocks), first.Raw)
	}
	for i, w := range wantBlocks {
		b := first.Get(fmt.Sprintf("content.%d", i))
		if b.Get("type").String() != w.typ || b.Get("text").String() != w.text || b.Get("id").String() != w.id ||
			b.Get("name").String() != w.name || (w.args != "" && !jsonEq(b.Get("arguments").Raw, w.args)) {
			t.Errorf("first assistant message block %d = %s, want %+v", i, b.Raw, w)
		}
	}
	// Tool results in source order in the result.
	for i, w := range []struct{ id, text string }{{"call_peek_a", "contents of a.txt"}, {"call_scan_b", "b/x.go:3: // TODO"}} {
		m := msgs[2+i]
		if m.Get("toolCallId").String() != w.id || m.Get("content.0.text").String() != w.text || m.Get("isError").Bool() {
			t.Errorf("result message %d = %s, want %s with %q", i, m.Raw, w.id, w.text)
		}
	}

	notes := d.notes(sid)
	// (1) Every delta type of both messages arrived, inside its message's start and end,
	// and the fragments add up to what the server sent.
	streams := assistantStreams(t, notes)
	if len(streams) != 2 {
		t.Fatalf("%d assistant messages streamed, want 2", len(streams))
	}
	peekArgs, kinds := deltaText(streams[0], "toolcall_delta", 1)
	for _, k := range []string{"text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end"} {
		if !kinds[k] {
			t.Errorf("first message: no %s update; got %v", k, kinds)
		}
	}
	if peekArgs != `{"path": "a.txt"}` {
		t.Errorf("peek's toolcall_delta fragments add up to %q", peekArgs)
	}
	if scanArgs, _ := deltaText(streams[0], "toolcall_delta", 2); scanArgs != `{"pattern": "TODO", "path": "b/"}` {
		t.Errorf("scan's toolcall_delta fragments add up to %q", scanArgs)
	}
	if txt, _ := deltaText(streams[0], "text_delta", 0); txt != "Let me look." {
		t.Errorf("first message's text deltas add up to %q", txt)
	}
	if txt, kinds := deltaText(streams[1], "text_delta", 0); txt != "Found one TODO in b/x.go." || !kinds["text_start"] || !kinds["text_end"] {
		t.Errorf("second message's text deltas add up to %q (kinds %v)", txt, kinds)
	}

	// (2) toolStart in source order, toolEnd in completion order (scan first).
	var starts, ends []string
	for _, m := range notes {
		switch m.method() {
		case "toolStart":
			starts = append(starts, m.get("params.toolCallId").String())
			if m.get("params.toolCallId").String() == "call_peek_a" && !jsonEq(m.get("params.args").Raw, `{"path":"a.txt"}`) {
				t.Errorf("peek's toolStart args %s", m.get("params.args").Raw)
			}
		case "toolEnd":
			ends = append(ends, m.get("params.toolCallId").String())
		}
	}
	if !reflect.DeepEqual(starts, []string{"call_peek_a", "call_scan_b"}) {
		t.Errorf("toolStart order %v, want source order", starts)
	}
	if !reflect.DeepEqual(ends, []string{"call_scan_b", "call_peek_a"}) {
		t.Errorf("toolEnd order %v, want completion order [call_scan_b call_peek_a]", ends)
	}

	// (3) What the server received.
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("the server got %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.method != http.MethodPost || r.path != "/v1/chat/completions" {
			t.Errorf("request %d: %s %s, want POST /v1/chat/completions", i, r.method, r.path)
		}
		if r.auth != "Bearer "+e2eKey {
			t.Errorf("request %d: Authorization %q, want the bearer key", i, r.auth)
		}
		body := gjson.ParseBytes(r.body)
		if body.Get("model").String() != "test-model" || !body.Get("stream").Bool() || !body.Get("stream_options.include_usage").Bool() {
			t.Errorf("request %d: model, stream or stream_options wrong: %s", i, r.body)
		}
		if body.Get("max_tokens").Int() != 1234 || body.Get("max_completion_tokens").Exists() {
			t.Errorf("request %d: want max_tokens 1234 (and no max_completion_tokens) for a server that is not api.openai.com: %s", i, r.body)
		}
		// The tools sent are the session's tools (built-in ones included), each with its
		// description and JSON Schema; the scripted ones with the schemas given above.
		sent := map[string]gjson.Result{}
		for _, tl := range body.Get("tools").Array() {
			if tl.Get("type").String() != "function" {
				t.Errorf("request %d: tool %s is not a function", i, tl.Raw)
			}
			sent[tl.Get("function.name").String()] = tl.Get("function")
		}
		if len(sent) != len(sessionTools) {
			t.Errorf("request %d: %d tools sent, the session has %d", i, len(sent), len(sessionTools))
		}
		for name, st := range sessionTools {
			fn, ok := sent[name]
			if !ok || fn.Get("description").String() != st.Get("description").String() || !jsonEq(fn.Get("parameters").Raw, st.Get("parameters").Raw) {
				t.Errorf("request %d: tool %s sent as %s, want its description and schema %s", i, name, fn.Raw, st.Raw)
			}
		}
		for name, w := range map[string]struct{ desc, schema string }{"peek": {"Show a file", peekSchema}, "scan": {"Search files for a pattern", scanSchema}} {
			if fn := sent[name]; fn.Get("description").String() != w.desc || !jsonEq(fn.Get("parameters").Raw, w.schema) {
				t.Errorf("request %d: scripted tool %s sent as %s, want description %q and schema %s", i, name, fn.Raw, w.desc, w.schema)
			}
		}
	}
	first1 := gjson.ParseBytes(reqs[0].body).Get("messages")
	if !jsonEq(first1.Raw, mustJSON([]obj{{"role": "system", "content": e2eSystem}, {"role": "user", "content": "Show a.txt and scan b/ for TODO."}})) {
		t.Errorf("first request's messages %s", first1.Raw)
	}
	history := gjson.ParseBytes(reqs[1].body).Get("messages").Array()
	if len(history) != 5 {
		t.Fatalf("second request: %d messages, want system, user, assistant, tool, tool: %s", len(history), reqs[1].body)
	}
	if history[0].Get("role").String() != "system" || history[0].Get("content").String() != e2eSystem {
		t.Errorf("second request message 0 = %s, want the system prompt", history[0].Raw)
	}
	if history[1].Get("role").String() != "user" || history[1].Get("content").String() != "Show a.txt and scan b/ for TODO." {
		t.Errorf("second request message 1 = %s, want the user's prompt", history[1].Raw)
	}
	asst := history[2]
	if asst.Get("role").String() != "assistant" || asst.Get("content").String() != "Let me look." || asst.Get("tool_calls.#").Int() != 2 {
		t.Errorf("second request message 2 = %s, want the assistant's text and both tool calls", asst.Raw)
	}
	for i, w := range wantBlocks[1:] {
		c := asst.Get(fmt.Sprintf("tool_calls.%d", i))
		// arguments is a JSON string holding the reassembled arguments.
		if c.Get("id").String() != w.id || c.Get("type").String() != "function" || c.Get("function.name").String() != w.name ||
			c.Get("function.arguments").Type != gjson.String || !jsonEq(c.Get("function.arguments").String(), w.args) {
			t.Errorf("second request: tool call %d = %s, want %s %s with arguments %s", i, c.Raw, w.id, w.name, w.args)
		}
	}
	for i, w := range []struct{ id, text string }{{"call_peek_a", "contents of a.txt"}, {"call_scan_b", "b/x.go:3: // TODO"}} {
		m := history[3+i]
		if m.Get("role").String() != "tool" || m.Get("tool_call_id").String() != w.id || m.Get("content").String() != w.text {
			t.Errorf("second request message %d = %s, want the tool result of %s (%q): results go back in source order", 3+i, m.Raw, w.id, w.text)
		}
	}

	// (5) The key never reached the client or stderr.
	stopDaemon(t, d)
	checkNoKey(t, d, stderr)
}

// A server that rejects the key (and echoes it, whole and masked, as servers do): the
// prompt ends with stopReason error and a message that names the variable to check, and
// the key is nowhere the client or stderr can see.
func TestE2EOpenAIRejectedKey(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		masked := e2eKey[:8] + "*******" + e2eKey[len(e2eKey)-4:]
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (%s). You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, e2eKey, masked)
	})
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Env: e2eEnv, Stderr: stderr})
	d.initialize(nil)
	sid := d.newSession(obj{"model": e2eModel(srv), "scriptedTools": []obj{tool("peek", resultStep("x"))}})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "hello"})

	if got := res.Get("stopReason").String(); got != "error" {
		t.Errorf("stopReason %q, want error: %s", got, res.Raw)
	}
	msgs := res.Get("messages").Array()
	if len(msgs) == 0 {
		t.Fatalf("no messages: %s", res.Raw)
	}
	last := msgs[len(msgs)-1]
	em := last.Get("errorMessage").String()
	if last.Get("role").String() != "assistant" || last.Get("stopReason").String() != "error" {
		t.Errorf("last message %s, want an assistant message with stopReason error", last.Raw)
	}
	for _, want := range []string{e2eKeyEnv, "HTTP 401", "rejected the API key", "Incorrect API key provided"} {
		if !strings.Contains(em, want) {
			t.Errorf("errorMessage %q does not contain %q", em, want)
		}
	}
	if l := keyLeaks(em); l != nil {
		t.Errorf("errorMessage holds the key: %v", l)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Errorf("the server got %d requests, want 1 (a 401 is not retried)", len(reqs))
	}
	if len(reqs) > 0 && reqs[0].auth != "Bearer "+e2eKey {
		t.Errorf("Authorization %q, want the bearer key", reqs[0].auth)
	}
	stopDaemon(t, d)
	checkNoKey(t, d, stderr)
}

// A cancel while the server is mid-stream: the prompt answers aborted at once, with the
// text streamed so far, and the server sees its request end. The session then works, and
// its next request leaves the aborted message out.
func TestE2EOpenAICancelMidStream(t *testing.T) {
	t.Parallel()
	// promptly bounds the time from the cancel to the answer. It is far above what an
	// abort takes (the HTTP stream is closed at once), and well below hangGuard, which is
	// what a daemon that waits for the stream to end on its own would hit.
	const promptly = 10 * time.Second
	ctxEnded := make(chan struct{})
	srv := newFakeOpenAI(t,
		func(w http.ResponseWriter, r *http.Request) {
			sseAnswer(sseChunk(obj{"role": "assistant", "content": "Thinking"}, nil))(w, r)
			guard := time.NewTimer(hangGuard)
			defer guard.Stop()
			select {
			case <-r.Context().Done():
				close(ctxEnded)
			case <-guard.C:
			}
		},
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "Back again."}, nil), sseChunk(obj{}, "stop"), sseDone),
	)
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Env: e2eEnv, Stderr: stderr})
	d.initialize(nil)
	sid := d.newSession(obj{"model": e2eModel(srv), "scriptedTools": []obj{tool("peek", resultStep("x"))}})
	prompt := d.request("session/prompt", obj{"sessionId": sid, "text": "think hard"})
	d.notification("messageUpdate", func(m *wireMsg) bool { return m.get("params.delta.type").String() == "text_delta" })

	start := time.Now()
	d.cancel(prompt)
	res := d.result(prompt)
	if el := time.Since(start); el > promptly {
		t.Errorf("the prompt answered %v after the cancel, want at once", el)
	}
	if got := res.Get("stopReason").String(); got != "aborted" {
		t.Errorf("stopReason %q, want aborted: %s", got, res.Raw)
	}
	msgs := res.Get("messages").Array()
	last := msgs[len(msgs)-1]
	if last.Get("role").String() != "assistant" || last.Get("stopReason").String() != "aborted" || last.Get("content.0.text").String() != "Thinking" {
		t.Errorf("last message %s, want the aborted assistant message with the text so far", last.Raw)
	}
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	select {
	case <-ctxEnded:
	case <-guard.C:
		t.Fatalf("hang guard: the server's request context did not end within %v of the cancel", hangGuard)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("the server got %d requests before the next prompt, want 1 (no model call after a cancel)", n)
	}

	// The session goes on; the aborted message is not sent back.
	res = d.call("session/prompt", obj{"sessionId": sid, "text": "again"})
	if got := res.Get("stopReason").String(); got != "stop" {
		t.Errorf("next prompt: stopReason %q, want stop: %s", got, res.Raw)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("the server got %d requests, want 2", len(reqs))
	}
	// (The system message, pid's own prompt, comes first.)
	history := gjson.ParseBytes(reqs[1].body).Get(`messages.#(role!="system")#`)
	if !jsonEq(history.Raw, mustJSON([]obj{{"role": "user", "content": "think hard"}, {"role": "user", "content": "again"}})) {
		t.Errorf("next request's messages %s, want both user messages and not the aborted answer", history.Raw)
	}
	stopDaemon(t, d)
	checkNoKey(t, d, stderr)
}

// This file tests what a streamed run puts on the wire: messageUpdate carries its delta
// always and the partial message only when a block is complete, so the bytes pid writes
// grow linearly with the answer (issue 11); and every call that starts executing is
// announced with toolExecutionStart. The byte count runs rpc.Serve over pipes against a
// local OpenAI-compatible server with the real openai provider.

package rpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// isBlockEnd reports whether a delta type completes a content block.
func isBlockEnd(typ string) bool { return strings.HasSuffix(typ, "_end") }

// Every messageUpdate carries its delta; only the *_end ones carry the partial message, and
// there the completed block is whole. The deltas of a block, put together, are the block:
// a text_delta carries text, a toolcall_delta a fragment of the arguments.
func TestMessageUpdateCarriesTheMessageOnlyAtBlockEnds(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{
		"model": scriptModel(
			turn(obj{"type": "thinking", "thinking": "Let me see."}, text("Running it."), toolCall("c1", "echo", obj{"path": "a.txt", "n": 2})),
			turn(text("Done.")),
		),
		"scriptedTools": []obj{tool("echo", resultStep("echoed"))},
	})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	msgs := res.Get("messages").Array()
	if len(msgs) != 4 {
		t.Fatalf("messages %s", res.Raw)
	}
	var updates, ends int
	var first *streamedMessage
	for _, s := range assistantStreams(t, d.notes(sid)) {
		if first == nil {
			first = s
		}
		for _, u := range s.updates {
			updates++
			typ := u.get("params.delta.type").String()
			if typ == "" || !u.get("params.delta.contentIndex").Exists() {
				t.Errorf("messageUpdate without a delta: %s", u)
			}
			if has := u.get("params.message").Exists(); has != isBlockEnd(typ) {
				t.Errorf("messageUpdate %s carries the message: %v, want %v: %s", typ, has, isBlockEnd(typ), truncate(u.String(), 300))
			}
			if isBlockEnd(typ) {
				ends++
				i := u.get("params.delta.contentIndex").Int()
				final := s.end.get("params.message.content." + strconv.FormatInt(i, 10))
				if got := u.get("params.message.content." + strconv.FormatInt(i, 10)); !jsonEq(got.Raw, final.Raw) {
					t.Errorf("block %d at its %s is %s, the final block is %s", i, typ, got.Raw, final.Raw)
				}
			}
		}
	}
	if updates != 12 || ends != 4 {
		t.Errorf("%d messageUpdates of which %d *_end, want 12 and 4 (4 blocks)", updates, ends)
	}
	if got, _ := deltaText(first, "thinking_delta", 0); got != "Let me see." {
		t.Errorf("thinking deltas %q", got)
	}
	if got, _ := deltaText(first, "text_delta", 1); got != "Running it." {
		t.Errorf("text deltas %q", got)
	}
	if got, _ := deltaText(first, "toolcall_delta", 2); !jsonEq(got, `{"path":"a.txt","n":2}`) {
		t.Errorf("toolcall deltas %q, want the arguments", got)
	}
}

// Native face: every call that starts executing is announced with toolExecutionStart
// {sessionId, toolCallId, toolName}, after its toolStart and its approval and before its
// progress and its toolEnd; in a parallel batch (R13) after the whole prepare pass, in
// source order for the calls that start together. Calls that end during the prepare pass
// (unknown tool, denied) get none.
func TestToolExecutionStartNotification(t *testing.T) {
	d := startInProcess(t)
	d.initialize(map[string]any{"beforeToolCall": true})
	sid := d.newSession(obj{
		"model": scriptModel(
			turn(toolCall("a", "slow", nil), toolCall("b", "gated", nil), toolCall("u", "nope", nil), toolCall("x", "gated", nil)),
			turn(text("done")),
		),
		"scriptedTools": []obj{
			tool("slow", updateStep("working\n"), waitForEnd("b"), resultStep("slow ok")),
			needsApproval(tool("gated", resultStep("gated ok"))),
		},
	})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	d.answer(d.serverRequest("beforeToolCall", "b"), obj{"decision": "allow"})
	d.answer(d.serverRequest("beforeToolCall", "x"), obj{"decision": "deny", "reason": "not now"})
	d.result(id)

	var seq []string
	for _, n := range d.notes(sid) {
		switch m := n.method(); m {
		case "toolStart", "toolExecutionStart", "$/toolUpdate", "toolEnd":
			seq = append(seq, m+" "+n.get("params.toolCallId").String())
			if m == "toolExecutionStart" {
				want := map[string]string{"a": "slow", "b": "gated"}[n.get("params.toolCallId").String()]
				if got := n.get("params.toolName").String(); got != want || len(n.get("params").Map()) != 3 {
					t.Errorf("toolExecutionStart %s, want {sessionId, toolCallId, toolName: %q}", n, want)
				}
			}
		}
	}
	want := []string{
		"toolStart a", "toolStart b", "toolStart u", "toolEnd u", "toolStart x", "toolEnd x",
		"toolExecutionStart a", "toolExecutionStart b",
	}
	if len(seq) < len(want) || strings.Join(seq[:len(want)], ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want them to start with %v", seq, want)
	}
	// After that only the two running calls' events: a's progress (R9) and b's end in
	// either order, then a's end (a waits for b's end, R13).
	rest := seq[len(want):]
	if len(rest) != 3 || rest[2] != "toolEnd a" || !slices.Contains(rest, "toolEnd b") || !slices.Contains(rest, "$/toolUpdate a") {
		t.Errorf("events after the execution starts: %v, want $/toolUpdate a and toolEnd b, then toolEnd a", rest)
	}
}

// wireCount is what pid wrote from the moment a prompt was sent to its response.
type wireCount struct {
	total    int64            // every byte: headers and bodies
	byMethod map[string]int64 // body bytes per notification method; responses under "response"
	frames   map[string]int
	result   []byte // the body of the prompt's response
}

func (w wireCount) String() string {
	var parts []string
	for _, m := range []string{"messageUpdate", "messageStart", "messageEnd", "turnEnd", "agentEnd", "response"} {
		parts = append(parts, fmt.Sprintf("%s %d×=%d", m, w.frames[m], w.byMethod[m]))
	}
	return fmt.Sprintf("%d bytes (%s)", w.total, strings.Join(parts, ", "))
}

// answerText is size bytes of text, ASCII letters and spaces.
func answerText(size int) string {
	const words = "stream linear bytes of an answer the editor reads "
	return strings.Repeat(words, size/len(words)+1)[:size]
}

// sseTextAnswer is a chat-completions stream of text in pieces of delta bytes.
func sseTextAnswer(text string, delta int) []byte {
	var b strings.Builder
	for i := 0; i < len(text); i += delta {
		b.WriteString("data: ")
		b.WriteString(mustJSON(obj{
			"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
			"choices": []obj{{"index": 0, "delta": obj{"content": text[i:min(i+delta, len(text))]}, "finish_reason": nil}},
		}))
		b.WriteString("\n\n")
	}
	b.WriteString("data: " + mustJSON(obj{
		"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
		"choices": []obj{{"index": 0, "delta": obj{}, "finish_reason": "stop"}},
	}) + "\n\ndata: [DONE]\n\n")
	return []byte(b.String())
}

// streamAnswer runs rpc.Serve over pipes, has a local OpenAI-compatible server stream an
// answer of size bytes in pieces of delta bytes, sends one prompt and counts what pid writes
// until the prompt's response. When the count passes limit (0: none) the test stops the
// run at once (it closes pid's input) and reports false, so a quadratic stream fails fast.
func streamAnswer(tb testing.TB, size, delta int, limit int64) (wireCount, bool) {
	tb.Helper()
	text := answerText(size)
	body := sseTextAnswer(text, delta)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	const keyEnv = "PID_STREAMING_TEST_KEY"
	tb.Setenv(keyEnv, "sk-streaming-test")

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		Serve(context.Background(), inR, outW, Options{Version: "test"})
		outW.Close()
	}()

	// The reader counts every frame once counting is on, and hands responses on; it closes
	// responses when pid's output ends.
	var (
		mu       sync.Mutex
		counting bool
		over     bool
		count    = wireCount{byMethod: map[string]int64{}, frames: map[string]int{}}
	)
	responses := make(chan []byte, 16)
	go func() {
		defer close(responses)
		br := bufio.NewReaderSize(outR, 64<<10)
		for {
			n, hdr, err := readFrameHeader(br)
			if err != nil {
				return
			}
			mu.Lock()
			on, stopped := counting, over
			mu.Unlock()
			if stopped {
				// Over the limit: drain what is left without looking at it.
				if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
					return
				}
				continue
			}
			frame := make([]byte, n)
			if _, err := io.ReadFull(br, frame); err != nil {
				return
			}
			method := gjson.GetBytes(frame, "method").String()
			isResponse := method == "" && gjson.GetBytes(frame, "id").Exists()
			if on {
				key := method
				if isResponse {
					key = "response"
				}
				mu.Lock()
				count.total += int64(hdr + n)
				count.byMethod[key] += int64(n)
				count.frames[key]++
				if limit > 0 && count.total > limit && !over {
					over = true
					go inW.Close() // stop the run: closing the input cancels the prompt
				}
				mu.Unlock()
			}
			if isResponse {
				responses <- frame
			}
		}
	}()
	send := func(id int, method string, params any) {
		msg := obj{"jsonrpc": "2.0", "method": method}
		if id > 0 {
			msg["id"] = id
		}
		if params != nil {
			msg["params"] = params
		}
		b := mustJSON(msg)
		fmt.Fprintf(inW, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	// await returns the response to id, or nil when pid's output ended first.
	await := func(id int, guard time.Duration) []byte {
		timeout := time.NewTimer(guard)
		defer timeout.Stop()
		for {
			select {
			case r, ok := <-responses:
				if !ok {
					return nil
				}
				if gjson.GetBytes(r, "id").Int() == int64(id) {
					return r
				}
			case <-timeout.C:
				tb.Fatalf("hang guard: no response to %d after %v", id, guard)
			}
		}
	}
	send(1, "initialize", obj{"capabilities": obj{}})
	await(1, hangGuard)
	send(0, "initialized", obj{})
	send(2, "session/new", obj{"model": obj{"provider": "openai", "id": "test-model", "baseUrl": srv.URL + "/v1", "apiKeyEnv": keyEnv}})
	sid := gjson.GetBytes(await(2, hangGuard), "result.sessionId").String()
	mu.Lock()
	counting = true
	mu.Unlock()
	send(3, "session/prompt", obj{"sessionId": sid, "text": "Write a long answer."})
	result := await(3, 10*hangGuard)
	inW.Close()
	<-served
	for range responses {
	}
	mu.Lock()
	defer mu.Unlock()
	if over {
		return count, false
	}
	if result == nil {
		tb.Fatalf("pid's output ended before the prompt's response")
	}
	count.result = result
	if got := gjson.GetBytes(result, "result.messages.1.content.0.text").String(); got != text {
		tb.Fatalf("the answer in the response is %d bytes, want the %d streamed: %s", len(got), len(text), truncate(string(result), 300))
	}
	return count, true
}

// readFrameHeader reads one LSP header and returns the body length and the header's size.
func readFrameHeader(br *bufio.Reader) (n, size int, err error) {
	n = -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return 0, 0, err
		}
		size += len(line)
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return 0, 0, err
			}
		}
	}
	if n < 0 {
		return 0, 0, fmt.Errorf("a frame without Content-Length")
	}
	return n, size, nil
}

// The bytes pid writes for a streamed answer grow linearly with it (issue 11): a 1 MB
// answer in 100-byte deltas puts at most 10 MB on the wire, everything of the prompt
// included (messageEnd, turnEnd, agentEnd and the response each carry the whole message
// once). With the partial message in every messageUpdate it was some 5 GB.
func TestStreamedAnswerBytesAreLinear(t *testing.T) {
	for _, size := range []int{100 << 10, 1 << 20} {
		limit := int64(10 * size)
		count, ok := streamAnswer(t, size, 100, limit)
		if !ok {
			t.Fatalf("a %d-byte answer in 100-byte deltas put more than %d bytes on the wire, so far %s", size, limit, count)
		}
		t.Logf("%d-byte answer in 100-byte deltas: %s, %.1f× the answer", size, count, float64(count.total)/float64(size))
		if n := count.frames["messageUpdate"]; n < size/100 {
			t.Errorf("%d messageUpdates for %d deltas", n, size/100)
		}
	}
}

// BenchmarkStreamedAnswer reports the bytes pid writes for a prompt whose answer (1 MB, or
// as -bench names) streams in 100-byte deltas, and the time it takes.
func BenchmarkStreamedAnswer(b *testing.B) {
	for _, size := range []int{100 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			var count wireCount
			for b.Loop() {
				count, _ = streamAnswer(b, size, 100, 0)
			}
			b.ReportMetric(float64(count.total), "wire-bytes/op")
			b.ReportMetric(float64(count.total)/float64(size), "wire/answer")
		})
	}
}

// This file is the recording server: it answers request n with step n of the script, in the
// wire format of the API the request came to (Anthropic's Messages API, OpenAI's chat
// completions or its Responses API, told by the path), and keeps every request body.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// block is one content block of a scripted answer.
type block struct {
	kind string // "text" or "call"
	text string // a text block's
	// A call's id suffix, tool name and arguments (JSON).
	id, name, args string
}

func text(s string) block { return block{kind: "text", text: s} }

func call(id, name, args string) block { return block{kind: "call", id: id, name: name, args: args} }

// request is one request the server was sent.
type request struct {
	path string
	body []byte
}

// server answers the script's steps in order; past the script it answers 400.
type server struct {
	*httptest.Server
	steps []step
	// thinking makes each answer (but a summary's) start with thinking: Anthropic's signed
	// thinking, a Responses API reasoning item, chat completions' reasoning_content.
	thinking bool

	// mu guards reqs.
	mu   sync.Mutex
	reqs []request
}

func newServer(steps []step, thinking bool) *server {
	s := &server{steps: steps, thinking: thinking}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *server) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, request{path: r.URL.Path, body: body})
	s.mu.Unlock()
	if n >= len(s.steps) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":"the script has %d requests; this is request %d"}}`, len(s.steps), n+1)
		return
	}
	st := s.steps[n]
	think := s.thinking && st.conv != convSummary
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	var out strings.Builder
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages"):
		anthropicAnswer(&out, n, think, st.answer)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		responsesAnswer(&out, n, think, st.answer)
	default:
		chatAnswer(&out, n, think, st.answer)
	}
	io.WriteString(w, out.String())
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type obj = map[string]any

func hasCalls(bs []block) bool {
	for _, b := range bs {
		if b.kind == "call" {
			return true
		}
	}
	return false
}

// anthropicAnswer writes a Messages API stream of bs, after signed thinking when think is set.
func anthropicAnswer(w *strings.Builder, n int, think bool, bs []block) {
	ev := func(name string, data obj) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(data)) }
	ev("message_start", obj{"type": "message_start", "message": obj{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant",
		"content": []obj{}, "model": "m", "usage": obj{"input_tokens": 1000, "output_tokens": 1}}})
	i := 0
	if think {
		ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "thinking", "thinking": ""}})
		ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "thinking_delta", "thinking": fmt.Sprintf("Thinking before answer %d.", n)}})
		ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "signature_delta", "signature": fmt.Sprintf("EqQBCkYIBxgCKkBsig%04d", n)}})
		ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
		i++
	}
	for _, b := range bs {
		switch b.kind {
		case "text":
			ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
			ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": b.text}})
		case "call":
			ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "tool_use", "id": "toolu_" + b.id, "name": b.name, "input": obj{}}})
			ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "input_json_delta", "partial_json": b.args}})
		}
		ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if hasCalls(bs) {
		stop = "tool_use"
	}
	ev("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop}, "usage": obj{"output_tokens": 50}})
	ev("message_stop", obj{"type": "message_stop"})
}

// chatAnswer writes a chat-completions stream of bs, after reasoning_content when think is set.
func chatAnswer(w *strings.Builder, n int, think bool, bs []block) {
	chunk := func(delta obj, finish any) {
		fmt.Fprintf(w, "data: %s\n\n", mustJSON(obj{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}}))
	}
	if think {
		chunk(obj{"role": "assistant", "reasoning_content": fmt.Sprintf("Thinking before answer %d.", n)}, nil)
	}
	calls := 0
	for _, b := range bs {
		switch b.kind {
		case "text":
			chunk(obj{"role": "assistant", "content": b.text}, nil)
		case "call":
			chunk(obj{"tool_calls": []obj{{"index": calls, "id": "call_" + b.id, "type": "function", "function": obj{"name": b.name, "arguments": b.args}}}}, nil)
			calls++
		}
	}
	finish := "stop"
	if calls > 0 {
		finish = "tool_calls"
	}
	chunk(obj{}, finish)
	fmt.Fprintf(w, "data: %s\n\n", mustJSON(obj{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []obj{},
		"usage": obj{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}}))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// responsesAnswer writes a Responses API stream of bs, after a reasoning item with its
// encrypted content when think is set.
func responsesAnswer(w *strings.Builder, n int, think bool, bs []block) {
	seq := 0
	ev := func(data obj) {
		data["sequence_number"] = seq
		seq++
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], mustJSON(data))
	}
	ev(obj{"type": "response.created", "response": obj{"id": fmt.Sprintf("resp_%d", n), "status": "in_progress", "output": []obj{}}})
	idx := 0
	if think {
		rs := obj{"id": fmt.Sprintf("rs_%d", n), "type": "reasoning", "summary": []obj{{"type": "summary_text", "text": fmt.Sprintf("Thinking before answer %d.", n)}},
			"encrypted_content": fmt.Sprintf("gAAAAABenc%04d", n)}
		ev(obj{"type": "response.output_item.added", "output_index": idx, "item": obj{"id": rs["id"], "type": "reasoning", "summary": []obj{}}})
		ev(obj{"type": "response.reasoning_summary_text.delta", "item_id": rs["id"], "output_index": idx, "summary_index": 0, "delta": fmt.Sprintf("Thinking before answer %d.", n)})
		ev(obj{"type": "response.output_item.done", "output_index": idx, "item": rs})
		idx++
	}
	for _, b := range bs {
		switch b.kind {
		case "text":
			id := fmt.Sprintf("msg_%d_%d", n, idx)
			ev(obj{"type": "response.output_item.added", "output_index": idx, "item": obj{"id": id, "type": "message", "role": "assistant", "status": "in_progress", "content": []obj{}}})
			ev(obj{"type": "response.output_text.delta", "item_id": id, "output_index": idx, "content_index": 0, "delta": b.text})
			ev(obj{"type": "response.output_item.done", "output_index": idx, "item": obj{"id": id, "type": "message", "role": "assistant", "status": "completed",
				"content": []obj{{"type": "output_text", "text": b.text, "annotations": []obj{}}}}})
		case "call":
			id := fmt.Sprintf("fc_%d_%d", n, idx)
			item := obj{"id": id, "type": "function_call", "status": "in_progress", "call_id": "call_" + b.id, "name": b.name, "arguments": ""}
			ev(obj{"type": "response.output_item.added", "output_index": idx, "item": item})
			ev(obj{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": idx, "delta": b.args})
			ev(obj{"type": "response.output_item.done", "output_index": idx, "item": obj{"id": id, "type": "function_call", "status": "completed",
				"call_id": "call_" + b.id, "name": b.name, "arguments": b.args}})
		}
		idx++
	}
	ev(obj{"type": "response.completed", "response": obj{"id": fmt.Sprintf("resp_%d", n), "status": "completed",
		"usage": obj{"input_tokens": 1000, "input_tokens_details": obj{"cached_tokens": 0}, "output_tokens": 50, "total_tokens": 1050}}})
}

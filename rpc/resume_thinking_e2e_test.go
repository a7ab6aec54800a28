// This file checks that thinking survives a resume (issue 32): after session/load in a new
// pid, the next Anthropic request is the one the same conversation makes without the reload,
// byte for byte, its earlier thinking blocks sent back as thinking with their signatures
// (the session file holds them; the store's fast reader used to drop them, so the model read
// its own reasoning as text it had said and the prompt cache missed from the first assistant
// message on). With thinking off, the same holds.

package rpc

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// anthropicBlock is one content block of a scripted Messages API answer.
type anthropicBlock struct {
	kind      string // "thinking", "text" or "tool_use"
	text      string // thinking or text; a tool_use's input JSON
	signature string // a thinking block's
	id, name  string // a tool_use's
}

// anthropicAnswer streams a Messages API answer of blocks, stopping with stop.
func anthropicAnswer(stop string, blocks ...anthropicBlock) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ev := func(name string, data obj) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(data)) }
		ev("message_start", obj{"type": "message_start", "message": obj{"id": "msg_1", "type": "message", "role": "assistant", "content": []obj{},
			"model": "claude-sonnet-4-5", "usage": obj{"input_tokens": 900, "output_tokens": 1}}})
		for i, b := range blocks {
			switch b.kind {
			case "thinking":
				ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "thinking", "thinking": ""}})
				ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "thinking_delta", "thinking": b.text}})
				ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "signature_delta", "signature": b.signature}})
			case "text":
				ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
				ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": b.text}})
			case "tool_use":
				ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "tool_use", "id": b.id, "name": b.name, "input": obj{}}})
				ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "input_json_delta", "partial_json": b.text}})
			}
			ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
		}
		ev("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop}, "usage": obj{"output_tokens": 40}})
		ev("message_stop", obj{"type": "message_stop"})
	}
}

func TestE2EResumeKeepsThinking(t *testing.T) {
	for _, thinking := range []bool{true, false} {
		t.Run(fmt.Sprintf("thinking=%v", thinking), func(t *testing.T) { resumeKeepsThinking(t, thinking) })
	}
}

func resumeKeepsThinking(t *testing.T, thinking bool) {
	config, _ := xdgDirs(t)
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\n"})
	trustInUserSettings(t, config, ws)
	think := func(text, sig string) []anthropicBlock {
		if !thinking {
			return nil
		}
		return []anthropicBlock{{kind: "thinking", text: text, signature: sig}}
	}
	script := func() []func(w http.ResponseWriter, r *http.Request) {
		return []func(w http.ResponseWriter, r *http.Request){
			anthropicAnswer("tool_use", append(think("Read a.txt first.", "EqoBCkgIBxABGAIiQA1"),
				anthropicBlock{kind: "text", text: "Let me look."},
				anthropicBlock{kind: "tool_use", id: "toolu_01A", name: "read", text: `{"path":"a.txt"}`})...),
			anthropicAnswer("end_turn", append(think("It holds alpha.", "EqoBCkgIBxABGAIiQA2"),
				anthropicBlock{kind: "text", text: "It says alpha."})...),
			anthropicAnswer("end_turn", append(think("Nothing to do.", "EqoBCkgIBxABGAIiQA3"),
				anthropicBlock{kind: "text", text: "You're welcome."})...),
		}
	}
	direct, reloaded := newFakeOpenAI(t, script()...), newFakeOpenAI(t, script()...)
	cfg := func(srv *fakeOpenAI) obj {
		model := obj{"provider": "anthropic", "id": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKeyEnv": e2eKeyEnv}
		if thinking {
			model["thinking"] = "low"
		}
		return obj{"cwd": ws, "model": model}
	}
	prompt := func(d *daemon, sid, text string) {
		t.Helper()
		if r := d.call("session/prompt", obj{"sessionId": sid, "text": text}); r.Get("stopReason").String() != "stop" {
			t.Fatalf("prompt %q: %s", text, r.Raw)
		}
	}

	d1 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d1, nil, ws)
	s1 := d1.newSession(cfg(direct))
	prompt(d1, s1, "prompt A: what is in a.txt?")
	prompt(d1, s1, "prompt B: thanks")
	stopDaemon(t, d1)

	d2 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d2, nil, ws)
	s2 := d2.newSession(cfg(reloaded))
	prompt(d2, s2, "prompt A: what is in a.txt?")
	stopDaemon(t, d2)
	d3 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d3, nil, ws)
	d3.call("session/load", obj{"sessionId": s2})
	prompt(d3, s2, "prompt B: thanks")
	stopDaemon(t, d3)

	a, b := direct.requests(), reloaded.requests()
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("%d and %d requests, want 3 each", len(a), len(b))
	}
	for i := range 2 {
		if string(a[i].body) != string(b[i].body) {
			t.Fatalf("request %d of prompt A differs between the two daemons (the test is wrong): %s", i+1, firstDifference(a[i].body, b[i].body))
		}
	}
	if string(a[2].body) != string(b[2].body) {
		t.Errorf("prompt B's request after session/load is not the one without the reload: %s", firstDifference(a[2].body, b[2].body))
	}
	if thinking {
		for _, sig := range []string{"EqoBCkgIBxABGAIiQA1", "EqoBCkgIBxABGAIiQA2"} {
			if !strings.Contains(string(b[2].body), `"signature":"`+sig+`"`) {
				t.Errorf("prompt B's request after the load lacks the thinking signed %s: %s", sig, b[2].body)
			}
		}
		if strings.Contains(string(b[2].body), `"text":"Read a.txt first."`) {
			t.Errorf("thinking went back as text: %s", b[2].body)
		}
	}
}

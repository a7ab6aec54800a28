// This file tests reasoning effort: sent as reasoning_effort when set, the reasoning
// streamed back as thinking, and that thinking left out of the next request (the
// chat-completions API takes no reasoning back).

package openai_test

import (
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

func TestReasoningEffort(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("reasoning.sse")})
	p, err := openai.New(openai.Options{Model: "o4-mini", BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: srv.Client(), ReasoningEffort: "high"})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if len(msg.Content) != 2 || msg.Content[0].Type != llm.ContentThinking || msg.Content[0].Thinking != "The user wants a greeting." || msg.Text() != "Hi there." {
		t.Fatalf("content %+v", msg.Content)
	}
	stream(t, p, context.Background(), &llm.Request{Messages: []llm.Message{llm.NewUser("Hi"), msg, llm.NewUser("Again")}})
	reqs := srv.Requests()
	for i, r := range reqs {
		if got := gjson.GetBytes(r.Body, "reasoning_effort").String(); got != "high" {
			t.Errorf("request %d: reasoning_effort %q, want high", i, got)
		}
	}
	if got := gjson.GetBytes(reqs[1].Body, "messages.1").Raw; got != `{"role":"assistant","content":"Hi there."}` {
		t.Errorf("the assistant message went back as %s", got)
	}

	// Without an effort, the field is not sent at all.
	plain, _ := newProvider(t, srv)
	stream(t, plain, context.Background(), simpleReq)
	if r := srv.Requests()[2]; gjson.GetBytes(r.Body, "reasoning_effort").Exists() {
		t.Errorf("reasoning_effort sent without an effort: %s", r.Body)
	}
}

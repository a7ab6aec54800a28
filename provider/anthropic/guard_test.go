// This file tests what keeps a call safe from its server: the key stays on the base URL's
// origin through redirects, and a silent server fails the call instead of hanging it.

package anthropic_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/internal/replay"
)

// A 307 from the base URL to a server on another port: the answer is read from there, and
// that server never sees x-api-key (which net/http itself would forward).
func TestRedirectToAnotherPortDropsKey(t *testing.T) {
	other := replay.New(t, replay.Step{File: file("text.sse")})
	srv := replay.New(t, replay.Step{Status: 307, Header: map[string]string{"Location": other.URL + "/v1/messages"}})
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
		t.Fatalf("message = %+v", msg)
	}
	if got := srv.Requests()[0].Header.Get("x-api-key"); got != testKey {
		t.Errorf("the base URL got x-api-key %q", got)
	}
	reqs := other.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the other server got %d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("x-api-key"); got != "" {
		t.Errorf("the other port got x-api-key %q", got)
	}
	if reqs[0].Header.Get("anthropic-version") != anthropic.APIVersion {
		t.Error("the redirected request lost anthropic-version")
	}
}

// A redirect on the same server keeps the key.
func TestRedirectSameServerKeepsKey(t *testing.T) {
	srv := replay.New(t,
		replay.Step{Status: 308, Header: map[string]string{"Location": "/proxy/v1/messages"}},
		replay.Step{File: file("text.sse")},
	)
	p, _ := newProvider(t, srv, anthropic.Options{})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd {
		t.Fatalf("message = %+v", msg)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Path != "/proxy/v1/messages" || reqs[1].Header.Get("x-api-key") != testKey {
		t.Errorf("requests %+v; want the second at /proxy/v1/messages with the key", reqs)
	}
}

// No headers within the request timeout, every time: the call fails naming the setting.
func TestRequestTimeoutExhausted(t *testing.T) {
	srv := replay.New(t, replay.Step{NoHeaders: true})
	p, w := newProvider(t, srv, anthropic.Options{RequestTimeout: 30 * time.Millisecond, Retry: anthropic.Retry{Attempts: 2}})
	msg, rec := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || len(rec.Steps()) != 0 {
		t.Fatalf("message = %+v, steps %v", msg, rec.Steps())
	}
	for _, s := range []string{"did not start answering within 30ms (model.requestTimeoutMs)", "after 2 attempts", "raise model.requestTimeoutMs"} {
		if !strings.Contains(msg.ErrorMessage, s) {
			t.Errorf("error %q does not say %q", msg.ErrorMessage, s)
		}
	}
	if len(srv.Requests()) != 2 || len(w.Got()) != 1 {
		t.Errorf("%d requests and waits %v", len(srv.Requests()), w.Got())
	}
}

// Silence after message_start (no block yet): the request is made again, after the idle
// timeout and the backoff, and the answer comes from the second attempt; the sink sees one
// start. On synctest's clock, through a transport without a network.
func TestIdleBeforeFirstBlockRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":7,"output_tokens":1}}}

`
		tr := replay.NewTransport(t, replay.Answer{Body: start, Silent: true}, replay.Answer{File: file("text.sse")})
		p, err := anthropic.New(anthropic.Options{
			Model: "claude-sonnet-4-5", BaseURL: "https://llm.test", APIKey: testKey,
			HTTPClient: &http.Client{Transport: tr}, IdleTimeout: 100 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		msg, rec := stream(t, p, context.Background(), simpleReq)
		if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
			t.Fatalf("message = %+v", msg)
		}
		starts := 0
		for _, s := range rec.Steps() {
			if strings.HasPrefix(s, "start ") {
				starts++
			}
		}
		if took := time.Since(began); starts != 1 || tr.Requests() != 2 || took != 100*time.Millisecond+time.Second {
			t.Errorf("%d starts, %d requests, took %v; want 1, 2, 1.1s", starts, tr.Requests(), took)
		}
		// The usage is the second answer's alone (input 25), not the first's (7).
		if msg.Usage == nil || msg.Usage.Input != 25 || msg.Usage.Output != 15 {
			t.Errorf("usage = %+v", msg.Usage)
		}
	})
}

// Silence mid-answer: the call fails after the idle timeout, keeping the text so far.
func TestIdleMidStream(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 4})
	// 250ms, not less: the text comes with the headers and must be read before the bound.
	p, _ := newProvider(t, srv, anthropic.Options{IdleTimeout: 250 * time.Millisecond})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || msg.Text() != "Hello" {
		t.Fatalf("message = %+v", msg)
	}
	if !strings.Contains(msg.ErrorMessage, "sent nothing for 250ms in the middle of the answer (model.idleTimeoutMs)") {
		t.Errorf("error = %q", msg.ErrorMessage)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

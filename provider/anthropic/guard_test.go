// This file tests what keeps a call safe from its server: the key stays on the base URL's
// origin through redirects, and a silent server fails the call instead of hanging it.

package anthropic_test

import (
	"context"
	"strings"
	"testing"
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

// Silence after message_start (no block yet): the request is made again and the answer
// comes from the second attempt; the sink sees one start.
func TestIdleBeforeFirstBlockRetried(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 1}, replay.Step{File: file("text.sse")})
	p, w := newProvider(t, srv, anthropic.Options{IdleTimeout: 30 * time.Millisecond})
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
	if starts != 1 || len(srv.Requests()) != 2 || len(w.Got()) != 1 {
		t.Errorf("%d starts, %d requests, waits %v; want 1, 2, one backoff", starts, len(srv.Requests()), w.Got())
	}
	if msg.Usage == nil || msg.Usage.Output != 15 {
		t.Errorf("usage = %+v", msg.Usage)
	}
}

// Silence mid-answer: the call fails after the idle timeout, keeping the text so far.
func TestIdleMidStream(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 4})
	p, _ := newProvider(t, srv, anthropic.Options{IdleTimeout: 30 * time.Millisecond})
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || msg.Text() != "Hello" {
		t.Fatalf("message = %+v", msg)
	}
	if !strings.Contains(msg.ErrorMessage, "sent nothing for 30ms in the middle of the answer (model.idleTimeoutMs)") {
		t.Errorf("error = %q", msg.ErrorMessage)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// This file tests what keeps a call safe from its server: the key stays on the base URL's
// origin through redirects, and a silent server fails the call instead of hanging it.

package openai_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/openai"
)

// newTimedProvider is newProvider with the given timeouts.
func newTimedProvider(t *testing.T, srv *replay.Server, request, idle time.Duration) (*openai.Provider, *replay.Sleeps) {
	t.Helper()
	w := &replay.Sleeps{}
	p, err := openai.New(openai.Options{
		Model: "gpt-4.1", BaseURL: srv.URL + "/v1", APIKey: testKey, APIKeyEnv: "OPENAI_API_KEY",
		HTTPClient: srv.Client(), Retry: openai.Retry{Sleep: w.Sleep},
		RequestTimeout: request, IdleTimeout: idle,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

// A 307 from the base URL to a server on another port: the answer is read from there, and
// that server never sees the bearer token.
func TestRedirectToAnotherPortDropsKey(t *testing.T) {
	other := replay.New(t, replay.Step{File: file("text.sse")})
	srv := replay.New(t, replay.Step{Status: 307, Header: map[string]string{"Location": other.URL + "/v1/chat/completions"}})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
		t.Fatalf("message = %+v", msg)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("the base URL got Authorization %q", got)
	}
	reqs := other.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the other server got %d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "" {
		t.Errorf("the other port got Authorization %q", got)
	}
	if string(reqs[0].Body) != string(srv.Requests()[0].Body) {
		t.Error("the redirected request lost its body")
	}
}

// The other server then asks for a key: the text says why it had none.
func TestRedirectThenUnauthorized(t *testing.T) {
	other := replay.New(t, replay.Step{Status: 401, Body: `{"error":{"message":"Missing bearer authentication in header"}}`})
	srv := replay.New(t, replay.Step{Status: 308, Header: map[string]string{"Location": other.URL + "/v1/chat/completions"}})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	for _, w := range []string{"redirected the request to " + other.URL + "/v1/chat/completions", "sends no API key", "HTTP 401: Missing bearer", "set model.baseUrl"} {
		if !strings.Contains(msg.ErrorMessage, w) {
			t.Errorf("error %q does not say %q", msg.ErrorMessage, w)
		}
	}
}

// A 301 (a POST would come back as a GET) is not followed; the text names the new root.
func TestRedirectMovedRefused(t *testing.T) {
	other := replay.New(t, replay.Step{File: file("text.sse")})
	srv := replay.New(t, replay.Step{Status: 301, Header: map[string]string{"Location": other.URL + "/v1/chat/completions"}})
	p, _ := newProvider(t, srv)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "set model.baseUrl to "+other.URL+"/v1.") {
		t.Errorf("message = %+v", msg)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the target got %d requests", n)
	}
}

// No headers within the request timeout: the attempt is cut off and retried, after the
// backoff. On synctest's clock (through a transport without a network), so the instants
// are exact and the answer itself takes no time.
func TestRequestTimeoutRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := replay.NewTransport(t, replay.Answer{NoHeaders: true}, replay.Answer{File: file("text.sse")})
		p, err := openai.New(openai.Options{
			Model: "gpt-4.1", BaseURL: "http://llm.test/v1", APIKey: testKey,
			HTTPClient: &http.Client{Transport: tr}, RequestTimeout: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		msg, _ := stream(t, p, context.Background(), simpleReq)
		if msg.StopReason != llm.StopEnd || msg.Text() != "Hello! How can I help?" {
			t.Fatalf("message = %+v", msg)
		}
		if took := time.Since(start); took != 50*time.Millisecond+time.Second || tr.Requests() != 2 {
			t.Errorf("took %v with %d requests, want 1.05s (timeout, backoff) and 2", took, tr.Requests())
		}
	})
}

// A stream that stops mid-answer fails after the idle timeout, keeping the text so far.
func TestIdleMidStream(t *testing.T) {
	srv := replay.New(t, replay.Step{File: file("text.sse"), HoldAfter: 3})
	// 250ms, not less: the text comes with the headers and must be read before the bound.
	p, _ := newTimedProvider(t, srv, 0, 250*time.Millisecond)
	msg, _ := stream(t, p, context.Background(), simpleReq)
	if msg.StopReason != llm.StopError || msg.Text() != "Hello" {
		t.Fatalf("message = %+v", msg)
	}
	if !strings.Contains(msg.ErrorMessage, "OpenAI-compatible server at "+srv.URL+"/v1 sent nothing for 250ms") || !strings.Contains(msg.ErrorMessage, "model.idleTimeoutMs") {
		t.Errorf("error = %q", msg.ErrorMessage)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (text was shown, so no retry)", n)
	}
}

// The defaults, and the timeouts given.
func TestTimeoutOptions(t *testing.T) {
	p, err := openai.New(openai.Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if r, i := p.Timeouts(); r != 60*time.Second || i != 120*time.Second {
		t.Errorf("defaults = %v, %v; want 60s, 120s", r, i)
	}
	p, err = openai.New(openai.Options{Model: "m", RequestTimeout: time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r, i := p.Timeouts(); r != time.Second || i != 2*time.Second {
		t.Errorf("timeouts = %v, %v", r, i)
	}
}

// This file is the setup and the checks the provider tests share: a Retry.Sleep that
// records instead of sleeping, Stream calls checked for what every call must hold, and
// the comparison of a request body with the JSON it should be.

package replay

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
)

// Sleeps is a Retry.Sleep that records the waits instead of sleeping.
type Sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

// Sleep records d and returns at once, with ctx's error.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Got returns the waits so far.
func (s *Sleeps) Got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ds)
}

// Stream runs one Stream call of p into a Recorder and checks what every call must hold
// (see Check), with key the provider's API key. It fails t when Stream has not returned
// within 30 seconds: a hang is a failure the timeouts exist to prevent.
func Stream(t testing.TB, p llm.Provider, ctx context.Context, req *llm.Request, key string) (llm.Message, *Recorder) {
	t.Helper()
	rec := &Recorder{}
	done := make(chan llm.Message, 1)
	go func() { done <- p.Stream(ctx, req, rec.Sink) }()
	var msg llm.Message
	select {
	case msg = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return within 30s")
	}
	Check(t, msg, rec, key)
	return msg, rec
}

// Check fails t unless every partial rec saw encodes, msg is an assistant message that
// encodes, and msg's error text does not hold key.
func Check(t testing.TB, msg llm.Message, rec *Recorder, key string) {
	t.Helper()
	for _, e := range rec.Errors() {
		t.Error(e)
	}
	if msg.Role != llm.RoleAssistant {
		t.Errorf("role = %q", msg.Role)
	}
	if _, err := msg.AppendJSON(nil); err != nil {
		t.Errorf("final message does not encode: %v", err)
	}
	if strings.Contains(msg.ErrorMessage, key) {
		t.Errorf("error message holds the key: %q", msg.ErrorMessage)
	}
}

// StreamCancelled runs one Stream call of p whose context is cancelled once the first text
// delta reaches the sink (or when the test ends), and returns its message, checked as
// Stream checks it. It fails t when Stream has not returned within 10 seconds.
func StreamCancelled(t testing.TB, p llm.Provider, req *llm.Request, key string) llm.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rec := &Recorder{OnStep: func(ev llm.StreamEvent) {
		if ev.Kind == llm.StreamTextDelta {
			cancel()
		}
	}}
	done := make(chan llm.Message, 1)
	go func() { done <- p.Stream(ctx, req, rec.Sink) }()
	var msg llm.Message
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after the cancel")
	}
	Check(t, msg, rec, key)
	return msg
}

// CheckBody fails t unless the request body got is the JSON value want, member order and
// white space aside.
func CheckBody(t testing.TB, got []byte, want string) {
	t.Helper()
	var gotV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	var wantV any
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantV, gotV); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

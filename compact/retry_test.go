// This file tests StreamRetrying: when a call is made again, and what the stream's listener
// sees of a call made twice.

package compact_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

// attempt is one answer of a scripted model: the text it streams (none: it streams only its
// start), and whether it fails with a context overflow.
type attempt struct {
	text     string
	overflow bool
}

// scripted is a model that answers its attempts in order and records each request.
type scripted struct {
	attempts []attempt
	reqs     []*llm.Request
}

func (p *scripted) Stream(_ context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	a := p.attempts[len(p.reqs)]
	p.reqs = append(p.reqs, req)
	m := llm.Message{Role: llm.RoleAssistant, Timestamp: int64(len(p.reqs))}
	if sink != nil {
		sink(&m, llm.StreamEvent{Kind: llm.StreamStart})
	}
	if a.text != "" {
		m.Content = append(m.Content, llm.Text(a.text))
		if sink != nil {
			sink(&m, llm.StreamEvent{Kind: llm.StreamTextDelta, Delta: a.text})
		}
	}
	if a.overflow {
		m.StopReason, m.ErrorMessage = llm.StopError, "prompt is too long: 213462 tokens > 200000 maximum"
	} else {
		m.StopReason = llm.StopEnd
	}
	return m
}

// recorder is a sink that notes the kinds of events it hears, with the attempt (its
// message's Timestamp) each came from.
type recorder []string

func (r *recorder) sink(partial *llm.Message, ev llm.StreamEvent) {
	*r = append(*r, fmt.Sprint(ev.Kind, " attempt ", partial.Timestamp))
}

func TestStreamRetrying(t *testing.T) {
	first, second := &llm.Request{SystemPrompt: "first"}, &llm.Request{SystemPrompt: "again"}
	cases := []struct {
		name      string
		attempts  []attempt
		retry     *llm.Request // what again gives
		wantAgain bool
		wantModel int64
		wantReqs  []*llm.Request
		wantSink  []string
	}{{
		name:      "overflow before streaming: made again, one start",
		attempts:  []attempt{{overflow: true}, {text: "hi"}},
		retry:     second,
		wantAgain: true, wantModel: 2, wantReqs: []*llm.Request{first, second},
		wantSink: []string{"start attempt 2", "text_delta attempt 2"},
	}, {
		name:      "overflow, again declines: the held start is passed on",
		attempts:  []attempt{{overflow: true}},
		wantAgain: true, wantModel: 1, wantReqs: []*llm.Request{first},
		wantSink: []string{"start attempt 1"},
	}, {
		name:      "overflow after streaming: not made again",
		attempts:  []attempt{{text: "partial", overflow: true}},
		retry:     second,
		wantModel: 1, wantReqs: []*llm.Request{first},
		wantSink: []string{"start attempt 1", "text_delta attempt 1"},
	}, {
		name:      "an answer: passed on as it came",
		attempts:  []attempt{{text: "hi"}},
		retry:     second,
		wantModel: 1, wantReqs: []*llm.Request{first},
		wantSink: []string{"start attempt 1", "text_delta attempt 1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &scripted{attempts: c.attempts}
			var rec recorder
			called := false
			m := compact.StreamRetrying(context.Background(), p, first, rec.sink, func() *llm.Request {
				called = true
				return c.retry
			})
			if called != c.wantAgain {
				t.Errorf("again called = %v, want %v", called, c.wantAgain)
			}
			if m.Timestamp != c.wantModel {
				t.Errorf("answer from attempt %d, want %d", m.Timestamp, c.wantModel)
			}
			if !slices.Equal(p.reqs, c.wantReqs) {
				t.Errorf("%d requests made, want %d (or not the ones given)", len(p.reqs), len(c.wantReqs))
			}
			if !slices.Equal(rec, c.wantSink) {
				t.Errorf("sink heard %q, want %q", rec, c.wantSink)
			}
		})
	}
}

// TestStreamRetryingCancelled: a call whose context is done is not made again.
func TestStreamRetryingCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &scripted{attempts: []attempt{{overflow: true}, {text: "hi"}}}
	m := compact.StreamRetrying(ctx, p, &llm.Request{}, nil, func() *llm.Request {
		t.Error("again called for a cancelled call")
		return &llm.Request{}
	})
	if len(p.reqs) != 1 || m.Timestamp != 1 {
		t.Errorf("%d requests, answer from attempt %d; want 1, attempt 1", len(p.reqs), m.Timestamp)
	}
}

// This file tests Summarize: the call it makes (the messages before the cut point, the
// view's summary carried on, the instructions), what it gives back, and how it fails.

package compact_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

// summarizer is a model whose every answer is answer's, recording each request.
type summarizer struct {
	answer llm.Message
	reqs   []*llm.Request
}

func (p *summarizer) Stream(_ context.Context, req *llm.Request, _ llm.StreamSink) llm.Message {
	p.reqs = append(p.reqs, req)
	return p.answer
}

func TestSummarize(t *testing.T) {
	usage := &llm.Usage{Input: 900, Output: 40}
	ok := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Usage: usage, Content: []llm.Content{llm.Text("  the gist \n")}}
	view := msgs(u(1000), a(1000), u(1000), a(1000), u(100), a(100))
	cut, _ := compact.CutPoint(view, 500)
	if cut < 1 {
		t.Fatalf("the test's view has no cut point (%d)", cut)
	}

	p := &summarizer{answer: ok}
	got, err := compact.Summarize(t.Context(), p, view, 500, "focus on the tests")
	if err != nil || got.Text != "the gist" || got.Cut != cut || got.Previous != "" || got.Usage != usage {
		t.Fatalf("Summarize = %+v, %v; want the trimmed text, cut %d, the call's usage", got, err, cut)
	}
	if len(p.reqs) != 1 {
		t.Fatalf("%d calls, want 1", len(p.reqs))
	}
	if d := cmp.Diff(compact.SummaryRequest(view[:cut], "", "focus on the tests"), p.reqs[0]); d != "" {
		t.Errorf("the request is not the summary of the messages before the cut (-want +got):\n%s", d)
	}

	// A view that begins with an earlier summary carries it on.
	again := append([]llm.Message{compact.SummaryMessage("the old gist")}, view[1:]...)
	p = &summarizer{answer: ok}
	got, err = compact.Summarize(t.Context(), p, again, 500, "")
	if err != nil || got.Previous != "the old gist" {
		t.Fatalf("after a compaction: %+v, %v", got, err)
	}
	if d := cmp.Diff(compact.SummaryRequest(again[:got.Cut], "the old gist", ""), p.reqs[0]); d != "" {
		t.Errorf("the earlier summary is not carried on (-want +got):\n%s", d)
	}

	// Nothing before the most recent messages kept: no call at all.
	p = &summarizer{answer: ok}
	got, err = compact.Summarize(t.Context(), p, view, 1<<30, "")
	if err == nil || !strings.Contains(err.Error(), "nothing to compact yet") || len(p.reqs) != 0 || got.Usage != nil {
		t.Errorf("nothing to compact: %+v, %v, %d calls", got, err, len(p.reqs))
	}

	// A failed call: the provider's reason, and the usage it reported.
	p = &summarizer{answer: llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "overloaded", Usage: usage}}
	got, err = compact.Summarize(t.Context(), p, view, 500, "")
	if err == nil || !strings.Contains(err.Error(), "overloaded") || errors.Is(err, context.Canceled) || got.Usage != usage || got.Text != "" {
		t.Errorf("a failed call: %+v, %v", got, err)
	}

	// A cancel: the error says so and wraps the context's.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p = &summarizer{answer: llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Usage: usage}}
	got, err = compact.Summarize(ctx, p, view, 500, "")
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "the compaction was cancelled: ") || got.Usage != usage {
		t.Errorf("a cancel: %+v, %v", got, err)
	}
}

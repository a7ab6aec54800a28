package loop_test

// Tests that a streamed assistant message reaches the observer without copies: every
// MessageStart and MessageUpdate points at the provider's own partial message (the contract
// of event.MessageUpdate), so the loop's work per streaming step does not grow with the
// message.

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
)

// cloneContent deep-copies content blocks (Arguments included), as an observer that keeps
// a partial message must.
func cloneContent(cs []llm.Content) []llm.Content {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Arguments = bytes.Clone(out[i].Arguments)
	}
	return out
}

// streamer is a provider that streams one message of blocks text blocks, each in deltas
// steps, through one partial message it owns and mutates in place, as the real providers
// do. It allocates nothing per step itself.
type streamer struct {
	blocks, deltas int
	partial        llm.Message
}

func (p *streamer) Stream(_ context.Context, _ *llm.Request, sink llm.StreamSink) llm.Message {
	p.partial = llm.Message{Role: llm.RoleAssistant, Content: make([]llm.Content, 0, p.blocks), StopReason: llm.StopEnd, Timestamp: 1}
	sink(&p.partial, llm.StreamEvent{Kind: llm.StreamStart})
	const piece = "0123456789"
	text := strings.Repeat(piece, p.deltas)
	for i := 0; i < p.blocks; i++ {
		p.partial.Content = append(p.partial.Content, llm.Text(""))
		sink(&p.partial, llm.StreamEvent{Kind: llm.StreamTextStart, Index: i})
		for d := 1; d <= p.deltas; d++ {
			p.partial.Content[i].Text = text[:d*len(piece)]
			sink(&p.partial, llm.StreamEvent{Kind: llm.StreamTextDelta, Index: i, Delta: piece})
		}
		sink(&p.partial, llm.StreamEvent{Kind: llm.StreamTextEnd, Index: i})
	}
	final := p.partial
	final.Content = slices.Clone(p.partial.Content)
	return final
}

// The observer gets the provider's partial message itself, never a copy, in MessageStart and
// in every MessageUpdate, and reading it during the call shows the message so far.
func TestMessageUpdateIsTheProvidersPartial(t *testing.T) {
	p := &streamer{blocks: 2, deltas: 3}
	var starts, updates, copies int
	var texts []string
	sink := func(e event.Event) {
		switch e := e.(type) {
		case event.MessageStart:
			if e.Message.Role == llm.RoleAssistant {
				starts++
				if e.Message != &p.partial {
					copies++
				}
			}
		case event.MessageUpdate:
			updates++
			if e.Message != &p.partial {
				copies++
			}
			if e.Delta.Kind == llm.StreamTextDelta {
				texts = append(texts, e.Message.Content[e.Delta.Index].Text)
			}
		}
	}
	res := loop.Run(context.Background(), &loop.Config{Provider: p, Emit: sink}, nil, []llm.Message{user("hi")})
	if res.StopReason != llm.StopEnd {
		t.Fatalf("StopReason %q", res.StopReason)
	}
	if starts != 1 || updates != 2*(3+2) {
		t.Errorf("%d assistant MessageStart and %d MessageUpdate, want 1 and 10", starts, updates)
	}
	if copies != 0 {
		t.Errorf("%d events carried a copy of the partial message instead of the provider's own", copies)
	}
	want := []string{"0123456789", "01234567890123456789", "012345678901234567890123456789"}
	if d := strings.Join(texts, "|"); d != strings.Join(append(want, want...), "|") {
		t.Errorf("the partial text read during each delta: %q", texts)
	}
}

// allocPerUpdate returns the bytes the loop allocates per MessageUpdate when the streamed
// message has the given number of blocks, each streamed in deltas steps.
func allocPerUpdate(t *testing.T, blocks, deltas int) float64 {
	t.Helper()
	sink := func(event.Event) {}
	run := func(p *streamer) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		loop.Run(context.Background(), &loop.Config{Provider: p, Emit: sink}, nil, []llm.Message{user("hi")})
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	// The same run without deltas is the baseline: what the blocks, the run and the
	// provider's own message cost whatever the stream.
	base := run(&streamer{blocks: blocks, deltas: 0})
	full := run(&streamer{blocks: blocks, deltas: deltas})
	if full < base {
		return 0
	}
	return float64(full-base) / float64(blocks*deltas)
}

// The loop's cost per streaming step does not depend on how big the message already is:
// streaming n steps is O(n), not O(n) copies of a growing message. With a copy of the
// partial message per update, each of the 2,000 updates of a 400-block message would
// allocate the 400 blocks again (some 60 KB).
func TestStreamingCostDoesNotGrowWithTheMessage(t *testing.T) {
	small := allocPerUpdate(t, 1, 2000)
	big := allocPerUpdate(t, 400, 5)
	t.Logf("bytes allocated per MessageUpdate: %.0f with 1 block, %.0f with 400 blocks", small, big)
	// The bound leaves room for the event's own boxing and noise, far below a copy.
	const bound = 512
	if small > bound || big > bound {
		t.Errorf("the loop allocates %.0f bytes per update with 1 block and %.0f with 400 blocks, want at most %d each", small, big, bound)
	}
}

package wire

// Tests that the builder closes a streamed tool call's arguments incrementally: after every
// delta the partial Arguments are what the one-shot closer gives for the text so far, and
// the work for the whole stream is linear in its size (issue 11: 1,000 deltas of deep
// nesting pinned a CPU, the closer rescanning and copying everything for each).

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
)

func TestBuilderClosesArgumentsIncrementally(t *testing.T) {
	var raw []byte
	var mismatches int
	b := NewBuilder(func(partial *llm.Message, ev llm.StreamEvent) {
		if ev.Kind != llm.StreamToolCallDelta {
			return
		}
		raw = append(raw, ev.Delta...)
		want := closeJSONReference(raw)
		if got := partial.Content[ev.Index].Arguments; want != nil && !bytes.Equal(got, want) {
			mismatches++
		}
	})
	b.Start()
	i := b.Open(llm.ContentToolCall, "c1", "deep")
	for _, p := range deepPieces(100) {
		b.Append(i, p)
	}
	msg := b.Done(llm.StopToolUse)
	if mismatches != 0 {
		t.Errorf("%d deltas left partial arguments other than the closed text so far", mismatches)
	}
	// The arguments never closed: the final ones are the text that arrived, as a string.
	if want := FinalArgs([]byte(strings.Join(deepPieces(100), ""))); !bytes.Equal(msg.Content[0].Arguments, want) {
		t.Errorf("the final arguments %.80q…, want %.80q…", msg.Content[0].Arguments, want)
	}
}

// 1,000 deltas of 1,000 brackets each (1 MB, nested far beyond what JSON decoders take):
// the builder scans each byte once and copies at most a bounded amount per delta.
func TestBuilderDeepArgumentsWorkIsLinear(t *testing.T) {
	b := NewBuilder(func(*llm.Message, llm.StreamEvent) {})
	b.Start()
	i := b.Open(llm.ContentToolCall, "c1", "deep")
	piece := strings.Repeat("[", 1000)
	for range 1000 {
		b.Append(i, piece)
	}
	args := &b.blocks[i].args
	n := len(args.Raw())
	if args.pos != n {
		t.Errorf("scanned %d bytes of %d", args.pos, n)
	}
	// Up to depth 10,000 each delta copies its bytes and the closing suffix (at most 10,000
	// brackets); beyond it nothing valid can be made, and nothing is copied.
	limit := 2*n + 10*(maxDepth+1)
	t.Logf("%d bytes in 1000 deltas: work %d (limit %d)", n, args.work, limit)
	if args.work > limit {
		t.Errorf("work %d for %d bytes, want at most %d", args.work, n, limit)
	}
	b.Done(llm.StopToolUse)
}

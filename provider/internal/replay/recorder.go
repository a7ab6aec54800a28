// This file records what a provider streams to its sink, checking each partial message.

package replay

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/pid-agent/pid/llm"
)

// Recorder is an llm.StreamSink that keeps each step as "kind index delta" and a copy of
// each partial message, its Content and the tool calls' Arguments copied (a partial is
// valid during the sink's call only). It checks that every partial encodes, as the
// daemon's messageUpdate notification needs at the end of a block.
type Recorder struct {
	mu       sync.Mutex
	steps    []string
	partials []llm.Message
	errs     []string
	// OnStep, if set, is called after each step is recorded (on the Stream goroutine).
	OnStep func(ev llm.StreamEvent)
}

// Sink is the llm.StreamSink.
func (r *Recorder) Sink(partial *llm.Message, ev llm.StreamEvent) {
	r.mu.Lock()
	r.steps = append(r.steps, fmt.Sprintf("%s %d %q", ev.Kind, ev.Index, ev.Delta))
	snap := *partial
	snap.Content = slices.Clone(partial.Content)
	for i := range snap.Content {
		snap.Content[i].Arguments = bytes.Clone(snap.Content[i].Arguments)
	}
	r.partials = append(r.partials, snap)
	if _, err := partial.AppendJSON(nil); err != nil {
		r.errs = append(r.errs, fmt.Sprintf("partial at step %d (%s) does not encode: %v", len(r.steps)-1, r.steps[len(r.steps)-1], err))
	}
	on := r.OnStep
	r.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

// Steps returns the steps so far.
func (r *Recorder) Steps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.steps)
}

// Partials returns the partial messages so far, one per step.
func (r *Recorder) Partials() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.partials)
}

// Errors returns the partial messages that did not encode.
func (r *Recorder) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

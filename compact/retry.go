// This file holds StreamRetrying: one model call made again, once, after the provider
// answered that the context is too long and the caller compacted it, shown to the stream's
// listener as one message.

package compact

import (
	"context"

	"github.com/pid-agent/pid/llm"
)

// StreamRetrying streams req from p; when the answer is a context overflow (IsContextOverflow)
// that streamed nothing and ctx is not done, it calls again and, when again gives a request,
// streams that one from p and returns its answer instead. The first attempt's stream start is
// held back until it streams something, so that sink sees a call made again as one message
// (one StreamStart); a start held back and not followed is passed on before StreamRetrying
// returns the first answer.
//
// again is called at most once, on the caller's goroutine, after the first attempt ended; it
// compacts (or decides not to) and returns the request to make again, or nil to return the
// first answer (compaction off, it failed, or the context was just compacted). It must not
// call sink. sink may be nil.
func StreamRetrying(ctx context.Context, p llm.Provider, req *llm.Request, sink llm.StreamSink, again func() *llm.Request) llm.Message {
	var held *llm.Message // the first attempt's start, not yet passed on
	streamed := false
	first := func(partial *llm.Message, ev llm.StreamEvent) {
		if sink == nil {
			return
		}
		if ev.Kind == llm.StreamStart && !streamed {
			// The start as it was: the partial message will have grown when it is passed on.
			snap := *partial
			snap.Content = append([]llm.Content(nil), partial.Content...)
			held = &snap
			return
		}
		if held != nil {
			sink(held, llm.StreamEvent{Kind: llm.StreamStart})
			held = nil
		}
		streamed = true
		sink(partial, ev)
	}
	release := func() {
		if held != nil {
			sink(held, llm.StreamEvent{Kind: llm.StreamStart})
			held = nil
		}
	}
	m := p.Stream(ctx, req, first)
	if streamed || ctx.Err() != nil || !IsContextOverflow(&m) {
		release()
		return m
	}
	retry := again()
	if retry == nil {
		release()
		return m
	}
	return p.Stream(ctx, retry, sink)
}

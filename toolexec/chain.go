// This file composes several afterToolCall hooks into one (ChainAfter).

package toolexec

import (
	"context"
)

// ChainAfter returns one hook that runs hooks in order (nil ones skipped). Each hook sees the
// result as the hooks before it left it; the returned Override sets every field any hook
// set, a later hook's value winning (R11's "a set field replaces that field whole"). It
// returns nil when no hook set anything. The daemon's order is: the editor's afterToolCall,
// then redaction (so text the editor put in is redacted too), then the audit log (so it
// records the final isError).
//
// Contract: as AfterHook: called concurrently for different calls, and each hook of
// the chain is called at most once per call, in order, on the caller's goroutine. The first
// hook that fails stops the chain and its error is returned (the later hooks do not run); a
// panic propagates to toolexec, which recovers it.
func ChainAfter(hooks ...AfterHook) AfterHook {
	var hs []AfterHook
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	if len(hs) == 1 {
		return hs[0]
	}
	return func(ctx context.Context, in AfterInput) (*Override, error) {
		var acc *Override
		for _, h := range hs {
			o, err := h(ctx, in)
			if err != nil {
				return nil, err
			}
			if o == nil {
				continue
			}
			if acc == nil {
				acc = &Override{}
			}
			if o.Content != nil {
				acc.Content, in.Result.Content = o.Content, o.Content
			}
			if o.Details != nil {
				acc.Details, in.Result.Details = o.Details, o.Details
			}
			if o.IsError != nil {
				acc.IsError, in.IsError = o.IsError, *o.IsError
			}
			if o.Terminate != nil {
				acc.Terminate, in.Result.Terminate = o.Terminate, *o.Terminate
			}
		}
		return acc, nil
	}
}

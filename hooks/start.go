// This file holds StartRun: a session's SessionStart hooks run in the background, what they
// say kept for the session's first prompt after them, and the run stopped when the session
// closes.

package hooks

import (
	"context"
	"strings"
	"sync"
)

// StartRun is one session's run of its SessionStart hooks. The zero value is ready: no run
// started (Context returns "" at once). Its methods are safe for concurrent use.
type StartRun struct {
	// wg is the run, which Stop waits for (its Add is made under mu, before stopped is set).
	wg sync.WaitGroup

	// mu guards the fields below it.
	mu sync.Mutex
	// started closes when the run has ended (nil before Start); out is what it said for the
	// model, not yet taken.
	started chan struct{}
	out     []string
	// cancel cancels the run; stopped is set by Stop (no run starts after it).
	cancel  context.CancelFunc
	stopped bool
}

// Start runs run in the background when has (the session has SessionStart hooks) and Stop
// was not called; what run returns is kept for Context, unless the run was stopped. A Start
// without a run still marks the hooks as run, for Context.
//
// run is called once, on a goroutine of its own, with a context Stop cancels; it runs the
// hooks and returns what they said for the model. It must return once its context is done.
func (r *StartRun) Start(has bool, run func(ctx context.Context) []string) {
	done := make(chan struct{})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = done
	if !has || r.stopped {
		close(done)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		defer cancel()
		out := run(ctx)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		r.out = append(r.out, out...)
		r.mu.Unlock()
	}()
}

// Stop cancels the run, if one is going, and waits until it has ended; no run starts
// after it. The session calls it when it closes.
func (r *StartRun) Stop() {
	r.mu.Lock()
	r.stopped = true
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wg.Wait()
}

// Context waits for the run (or ctx) and returns what the hooks said, joined by blank
// lines, once: the first prompt after them gets it, later calls "". Before any Start, and
// when ctx is done first, it returns "".
func (r *StartRun) Context(ctx context.Context) string {
	r.mu.Lock()
	done := r.started
	r.mu.Unlock()
	if done == nil {
		return ""
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := strings.Join(r.out, "\n\n")
	r.out = nil
	return out
}

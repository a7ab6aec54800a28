// This file throttles the progress of one tool call the way bash's output is throttled: a
// server may send progress notifications as fast as it likes, the editor gets at most one
// update per ProgressInterval, always the latest, and the last one held back is delivered
// before the call returns, so the final state is never lost.

package mcp

import (
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/event"
)

// ProgressInterval is the least time between two progress updates of one call: bash's
// (tools.BashUpdateInterval, which a test holds equal; mcp does not import the built-in
// tools).
const ProgressInterval = 100 * time.Millisecond

// progressThrottle passes a call's progress notifications on to its onUpdate, at most one
// per interval; a notification that comes sooner is held (replacing any held before it)
// and delivered when the interval is over, or by finish.
type progressThrottle struct {
	onUpdate func(event.Result)
	interval time.Duration

	// mu serializes the calls of onUpdate and guards the fields below it.
	mu      sync.Mutex
	last    time.Time                       // when an update was last delivered; zero: never
	pending *sdk.ProgressNotificationParams // the latest notification held back
	timer   *time.Timer                     // delivers pending; nil when none is armed
	done    bool                            // finish was called: nothing more is delivered
}

func newProgressThrottle(onUpdate func(event.Result), interval time.Duration) *progressThrottle {
	return &progressThrottle{onUpdate: onUpdate, interval: interval}
}

// push takes a notification: delivered at once when the last delivery is an interval old
// and nothing is held, else held as the latest.
func (t *progressThrottle) push(p *sdk.ProgressNotificationParams) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	if t.pending != nil {
		t.pending = p // the armed timer delivers it
		return
	}
	wait := t.interval - time.Since(t.last)
	if t.last.IsZero() || wait <= 0 {
		t.deliverLocked(p)
		return
	}
	t.pending = p
	t.timer = time.AfterFunc(wait, t.fire)
}

// fire delivers the notification held back, when the interval since the last one is over.
func (t *progressThrottle) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer = nil
	if t.done || t.pending == nil {
		return
	}
	p := t.pending
	t.pending = nil
	t.deliverLocked(p)
}

// finish delivers the notification held back, if any, and ends the throttle: nothing is
// delivered after it returns.
//
// Contract: called once, when the call's response has been read (every notification sent
// before it has been pushed), before the call returns.
func (t *progressThrottle) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	if p := t.pending; p != nil {
		t.pending = nil
		t.deliverLocked(p)
	}
}

// deliverLocked hands p to onUpdate; t.mu is held, so deliveries never overlap.
func (t *progressThrottle) deliverLocked(p *sdk.ProgressNotificationParams) {
	t.last = time.Now()
	t.onUpdate(progressUpdate(p))
}

// This file holds Slots: a pool that caps how many calls of some tools execute at once
// (bash's processes, say), shared by every batch of every session, with the waiting calls
// served in the order they were prepared.

package toolexec

import (
	"context"
	"sync"
)

// Slots is a pool of n execution slots. A tool with Slots set takes one for each call while
// the call executes; calls beyond n wait, first prepared first served: in source order within
// a batch (the batch reserves its calls' places during the serial prepare pass), and in
// reservation order across batches and sessions.
//
// A Slots is safe for concurrent use and may be shared by several tools.
type Slots struct {
	// mu guards the fields below it.
	mu    sync.Mutex
	free  int
	queue []*ticket // reserved, not granted, in reservation order
}

// NewSlots returns a pool of n slots (n < 1 counts as 1).
func NewSlots(n int) *Slots {
	if n < 1 {
		n = 1
	}
	return &Slots{free: n}
}

// ticket is one call's place in a pool.
type ticket struct {
	s     *Slots
	ready chan struct{} // closed when granted
	// granted and done are guarded by s.mu.
	granted bool
	done    bool // released or given up
}

// reserve takes a place in the queue, granted at once when a slot is free and nobody waits.
func (s *Slots) reserve() *ticket {
	t := &ticket{s: s, ready: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && len(s.queue) == 0 {
		s.free--
		t.granted = true
		close(t.ready)
		return t
	}
	s.queue = append(s.queue, t)
	return t
}

// grantedNow reports whether the ticket holds a slot already.
func (t *ticket) grantedNow() bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.granted
}

// wait returns once the ticket holds a slot, or ctx's error (the place is then given up).
func (t *ticket) wait(ctx context.Context) error {
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
		t.release()
		return ctx.Err()
	}
}

// release gives the slot back (or the place in the queue up) and grants the next waiting
// ticket. Idempotent.
func (t *ticket) release() {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	if !t.granted {
		for i, q := range s.queue {
			if q == t {
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				break
			}
		}
		return
	}
	s.free++
	for s.free > 0 && len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		s.free--
		next.granted = true
		close(next.ready)
	}
}

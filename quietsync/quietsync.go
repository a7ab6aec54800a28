// Package quietsync flushes a file to disk soon after it is asked, but not while it is being
// written: once the file has had no write for a quiet spell, and in any case within a
// longest delay. A burst of quick writes (a turn of tools that take microseconds) is then
// flushed by one fsync after it, so that fsyncs do not slow the burst down; a lone write
// gets its fsync a quiet spell later. Its entry point is Start, which returns a Syncer
// running one goroutine until Close.
package quietsync

import (
	"time"
)

// Config is what a Syncer works with.
type Config struct {
	// Quiet is how long the file must have had no write before a flush.
	Quiet time.Duration
	// MaxDelay is the longest a request waits for its flush, quiet or not.
	MaxDelay time.Duration
	// LastWrite returns when the file was last written. Contract: called from the
	// Syncer's goroutine, concurrently with the writers; safe for that, and quick.
	LastWrite func() time.Time
	// Flush flushes the file (an fsync) and reports its own failure. Contract: called from
	// the Syncer's goroutine only, never twice at once; Close waits for a flush under way.
	Flush func()
}

// Syncer serves flush requests on one goroutine. Request and Close may be called from any
// goroutine; Request never blocks.
type Syncer struct {
	cfg  Config
	reqs chan struct{}
	done chan struct{}
}

// Start starts the Syncer's goroutine.
func Start(cfg Config) *Syncer {
	s := &Syncer{cfg: cfg, reqs: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
}

// Request asks for a flush without waiting for it: after the file has been quiet for
// Config.Quiet, within Config.MaxDelay. Requests made while one waits are served by the
// same flush. It must not be called after Close.
func (s *Syncer) Request() {
	select {
	case s.reqs <- struct{}{}:
	default: // one is pending already
	}
}

// Close stops the Syncer and waits for its goroutine to end: a flush under way ends first;
// a request still waiting for quiet is dropped (the caller flushes as it closes the file).
func (s *Syncer) Close() {
	close(s.reqs)
	<-s.done
}

// run serves the requests until reqs is closed.
func (s *Syncer) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for range s.reqs {
		if !s.waitQuiet(timer) {
			return
		}
		s.cfg.Flush()
	}
}

// waitQuiet waits until the file has been quiet for Quiet, or MaxDelay since the request;
// false when the Syncer was closed meanwhile.
func (s *Syncer) waitQuiet(timer *time.Timer) bool {
	asked := time.Now()
	for {
		wait := min(s.cfg.Quiet-time.Since(s.cfg.LastWrite()), s.cfg.MaxDelay-time.Since(asked))
		if wait <= 0 {
			return true
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case _, ok := <-s.reqs: // served by this flush too
			timer.Stop()
			if !ok {
				return false
			}
		}
		if time.Since(s.cfg.LastWrite()) >= s.cfg.Quiet || time.Since(asked) >= s.cfg.MaxDelay {
			return true
		}
	}
}

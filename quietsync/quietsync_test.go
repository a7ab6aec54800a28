// This file tests when the Syncer flushes, in a synctest bubble (its clock moves only when
// every goroutine of the bubble waits, so the times are exact): at once when the file is
// quiet already, a quiet spell after the last write, at the longest delay under a stream of
// writes, once for requests made while one waits, never after Close.

package quietsync

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	quiet    = 50 * time.Millisecond
	maxDelay = time.Second
)

// file is a file's write and flush times, as a Syncer sees them.
type file struct {
	// mu guards the fields below it.
	mu      sync.Mutex
	written time.Time
	flushes []time.Time
}

func (f *file) write() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written = time.Now()
}

func (f *file) flushed() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.flushes...)
}

func start(f *file) *Syncer {
	return Start(Config{Quiet: quiet, MaxDelay: maxDelay,
		LastWrite: func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.written },
		Flush:     func() { f.mu.Lock(); f.flushes = append(f.flushes, time.Now()); f.mu.Unlock() }})
}

// A request on a file quiet for long is flushed at once; after a write, a quiet spell
// after the write.
func TestFlushAfterQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &file{}
		s := start(f)
		defer s.Close()
		t0 := time.Now()
		s.Request()
		synctest.Wait()
		if got := f.flushed(); len(got) != 1 || !got[0].Equal(t0) {
			t.Fatalf("flushes %v, want one at once (%v)", got, t0)
		}
		time.Sleep(time.Minute)
		f.write()
		t1 := time.Now()
		time.Sleep(20 * time.Millisecond)
		s.Request()
		time.Sleep(time.Minute)
		if got := f.flushed(); len(got) != 2 || !got[1].Equal(t1.Add(quiet)) {
			t.Fatalf("flushes %v, want the second a quiet spell after the write (%v)", got, t1.Add(quiet))
		}
	})
}

// Under writes every 10 ms (never quiet), a request is flushed at the longest delay; the
// requests made while it waits are served by the same flush.
func TestFlushWithinMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &file{}
		s := start(f)
		defer s.Close()
		stop := make(chan struct{})
		go func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					f.write()
				case <-stop:
					return
				}
			}
		}()
		f.write()
		t0 := time.Now()
		s.Request()
		for range 5 {
			time.Sleep(100 * time.Millisecond)
			s.Request()
		}
		time.Sleep(maxDelay - 500*time.Millisecond + time.Millisecond)
		got := f.flushed()
		close(stop)
		if len(got) != 1 || !got[0].Equal(t0.Add(maxDelay)) {
			t.Fatalf("flushes %v, want one at the longest delay (%v)", got, t0.Add(maxDelay))
		}
	})
}

// Close while a request waits for quiet ends the Syncer without flushing.
func TestCloseDropsAWaitingRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &file{}
		s := start(f)
		f.write()
		s.Request()
		time.Sleep(10 * time.Millisecond)
		s.Close()
		time.Sleep(time.Minute)
		if got := f.flushed(); len(got) != 0 {
			t.Fatalf("flushes after Close: %v", got)
		}
	})
}

// This file is the Conn's writing side: a queue of framed messages that any goroutine adds
// to, written by whichever goroutine finds no write under way, so that messages queued while
// a write is in progress go out together in one write(2) (a burst of notifications, the
// toolExecutionStart and toolEnd of a tool that returns at once), without a goroutine hop for
// a message that finds the pipe idle.

package rpcconn

import (
	"io"
	"sync"
	"time"
)

// maxPending bounds the bytes queued behind a write in progress: a sender past it waits for
// the write to end, so that a client that does not read holds pid's senders back (as a
// blocking write did) instead of growing the queue without end.
const maxPending = 1 << 20

// handOffAfter is how many writes a sender does for others before it hands what is left to
// a goroutine of its own (so that a sender, such as a tool's goroutine, is not kept writing
// a flood it did not make).
const handOffAfter = 2

// deferFor is how long a deferred message may wait for the next message to share its write
// (see Conn.SendDeferred). A variable for tests only.
var deferFor = 200 * time.Microsecond

// sendQueue writes framed messages to w in the order they are queued.
type sendQueue struct {
	w     io.Writer
	codec Codec

	// broken closes when a write fails; failure then returns why.
	broken chan struct{}
	// drainers counts the goroutines a sender handed the writing to.
	drainers sync.WaitGroup

	// mu guards the fields below it; idle is signalled (with mu) when a write ends.
	mu      sync.Mutex
	idle    *sync.Cond
	pending []byte // framed messages waiting to be written
	spare   []byte // the last written batch's memory, reused
	writing bool   // a goroutine is writing: it takes pending when its write ends
	sealed  bool   // only answers are queued from now on
	err     error  // the first write error: nothing more is written
	// timer writes a deferred message that no other message followed within deferFor; nil
	// when none waits.
	timer *time.Timer
}

func newSendQueue(w io.Writer, codec Codec) *sendQueue {
	q := &sendQueue{w: w, codec: codec, broken: make(chan struct{})}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// send queues body (one encoded message) framed, and writes the queue unless a write is under
// way (whose writer then takes it). answer marks an answer to something the client sent,
// which is queued even when sealed; last seals the queue once body is in it. It returns
// ErrSealed for anything else after the seal, the write error once one failed, and, for the
// goroutine that wrote, its own write's error.
func (q *sendQueue) send(body []byte, answer, last bool) error {
	return q.queue(body, answer, last, false)
}

// sendDeferred queues body, a message pid starts, to go out with the next message queued
// within deferFor, or alone when none comes. Errors are as send's.
func (q *sendQueue) sendDeferred(body []byte) error {
	return q.queue(body, false, false, true)
}

func (q *sendQueue) queue(body []byte, answer, last, deferred bool) error {
	q.mu.Lock()
	for q.writing && len(q.pending) > maxPending && q.err == nil {
		q.idle.Wait()
	}
	switch {
	case q.err != nil:
		err := q.err
		q.mu.Unlock()
		return err
	case q.sealed && !answer:
		q.mu.Unlock()
		return ErrSealed
	}
	q.pending = q.codec.Frame(q.pending, body)
	if last {
		q.sealed = true
	}
	if q.writing {
		q.mu.Unlock()
		return nil
	}
	if deferred {
		if q.timer == nil {
			q.timer = time.AfterFunc(deferFor, q.flushDeferred)
		}
		q.mu.Unlock()
		return nil
	}
	q.writing = true
	return q.write(handOffAfter)
}

// flushDeferred writes what waits, unless a write is under way (it takes it).
func (q *sendQueue) flushDeferred() {
	q.mu.Lock()
	q.timer = nil
	if q.writing || len(q.pending) == 0 {
		q.idle.Broadcast() // flushed may wait for the timer
		q.mu.Unlock()
		return
	}
	q.writing = true
	q.write(-1)
}

// write writes the queue until it is empty, at most rounds times before handing the rest to
// a goroutine of its own (rounds < 0: no limit). Called with mu held and writing set; it
// returns with mu released.
func (q *sendQueue) write(rounds int) error {
	var first error
	if q.timer != nil && q.timer.Stop() {
		q.timer = nil // what it would have written goes now
	}
	for n := 0; len(q.pending) > 0 && q.err == nil; n++ {
		if n == rounds {
			q.drainers.Add(1)
			go func() {
				defer q.drainers.Done()
				q.mu.Lock()
				q.write(-1)
			}()
			q.mu.Unlock()
			return first
		}
		b := q.pending
		q.pending = q.spare[:0]
		q.mu.Unlock()
		_, err := q.w.Write(b)
		q.mu.Lock()
		if cap(b) <= maxPending {
			q.spare = b[:0]
		}
		if err != nil {
			q.err = err
			close(q.broken)
			if n == 0 {
				first = err
			}
		}
		q.idle.Broadcast()
	}
	q.writing = false
	q.idle.Broadcast()
	q.mu.Unlock()
	return first
}

// failure returns the write error that closed broken.
func (q *sendQueue) failure() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// flushed writes what is deferred and waits until everything queued has been written, or
// writing failed.
func (q *sendQueue) flushed() {
	q.mu.Lock()
	for q.writing && q.err == nil {
		q.idle.Wait()
	}
	if len(q.pending) > 0 && q.err == nil {
		q.writing = true
		q.write(-1)
		q.mu.Lock()
	}
	for q.timer != nil { // stopped too late: its flush is running
		q.idle.Wait()
	}
	q.mu.Unlock()
	q.drainers.Wait()
}

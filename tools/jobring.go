// This file holds a job's output: the last JobOutputBytes of it in a ring, with the count of
// all of it, and a signal for whoever waits for more.

package tools

import "sync"

// JobOutputBytes is how much of a job's output is kept (the rest, older, is dropped and the
// next read says so).
const JobOutputBytes = 1 << 20

// ring keeps the last len(buf) bytes written, and how many were written in all. Safe for
// concurrent use.
type ring struct {
	// mu guards the fields below it.
	mu      sync.Mutex
	buf     []byte // len(buf) is the capacity; the byte at offset o is buf[o%len(buf)]
	total   int64  // bytes written
	changed chan struct{}
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size), changed: make(chan struct{})} }

// write appends p, dropping the oldest bytes beyond the capacity, and wakes the waiters.
func (r *ring) write(p []byte) {
	if len(p) == 0 {
		return
	}
	r.mu.Lock()
	n := len(r.buf)
	if len(p) > n {
		r.total += int64(len(p) - n)
		p = p[len(p)-n:]
	}
	for len(p) > 0 {
		at := int(r.total % int64(n))
		c := copy(r.buf[at:], p)
		r.total += int64(c)
		p = p[c:]
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// since returns the bytes written from offset off on that are still kept, how many bytes
// after off were dropped (overwritten) before they could be read, the offset of the end
// (total), and a channel closed at the next write.
func (r *ring) since(off int64) (data []byte, dropped int64, end int64, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := int64(len(r.buf))
	first := max(r.total-n, 0) // the oldest offset kept
	if off < first {
		dropped, off = first-off, first
	}
	if off > r.total {
		off = r.total
	}
	data = make([]byte, 0, r.total-off)
	for o := off; o < r.total; {
		at := o % n
		stop := min(n, at+(r.total-o))
		data = append(data, r.buf[at:stop]...)
		o += stop - at
	}
	return data, dropped, r.total, r.changed
}

// size returns how many bytes were written in all.
func (r *ring) size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

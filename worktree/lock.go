// This file serializes the work on one repository: making a worktree (which reads the
// main tree) and merging one back (which writes it) never overlap, and merges go in the
// order they were asked for: the order the children finish.

package worktree

import (
	"context"
	"sync"
)

// fifo is a lock that its waiters get in the order they asked.
type fifo struct {
	// mu guards held and queue.
	mu    sync.Mutex
	held  bool
	queue []chan struct{}
}

// repoLocks holds one fifo per repository (its common git folder's real path).
var repoLocks struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]*fifo
}

// lockRepo waits for the repository's lock, in the order asked; it returns the function
// that releases it, or ctx's error when ctx ended first (then it does not hold the lock).
func lockRepo(ctx context.Context, key string) (unlock func(), err error) {
	repoLocks.mu.Lock()
	if repoLocks.m == nil {
		repoLocks.m = map[string]*fifo{}
	}
	f := repoLocks.m[key]
	if f == nil {
		f = &fifo{}
		repoLocks.m[key] = f
	}
	repoLocks.mu.Unlock()
	return f.lock(ctx)
}

func (f *fifo) lock(ctx context.Context) (func(), error) {
	f.mu.Lock()
	if !f.held {
		f.held = true
		f.mu.Unlock()
		return f.unlock, nil
	}
	turn := make(chan struct{})
	f.queue = append(f.queue, turn)
	f.mu.Unlock()
	select {
	case <-turn:
		return f.unlock, nil
	case <-ctx.Done():
		f.mu.Lock()
		for i, c := range f.queue {
			if c == turn {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
				f.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		f.mu.Unlock()
		// The lock was handed over as ctx ended: pass it on.
		f.unlock()
		return nil, ctx.Err()
	}
}

// unlock hands the lock to the first waiter, or frees it.
func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		f.held = false
		return
	}
	next := f.queue[0]
	f.queue = f.queue[1:]
	close(next)
}

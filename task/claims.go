// This file holds Claims: which running child changes which file, so that two children of
// one parent never change the same file at the same time, and the refusal the second gets.

package task

import (
	"fmt"
	"sync"
)

// Claims maps each file a running child changed to that child (of type C: the parent's
// handle on it). The zero value is empty and ready; it is safe for concurrent use.
type Claims[C comparable] struct {
	mu     sync.Mutex
	owners map[string]C
}

// Claim notes that child changes path; it reports the other running child that changed it
// first, and true, when there is one (its change must end first: path stays its).
func (c *Claims[C]) Claim(path string, child C) (other C, taken bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero C
	if o, ok := c.owners[path]; ok && o != child && o != zero {
		return o, true
	}
	if c.owners == nil {
		c.owners = map[string]C{}
	}
	c.owners[path] = child
	return zero, false
}

// Release forgets the files child changed, once it ended.
func (c *Claims[C]) Release(child C) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, o := range c.owners {
		if o == child {
			delete(c.owners, p)
		}
	}
}

// Conflict is the refusal of a child's change of path that another running child (the task
// described so, of call callID, in session sessionID) changed first.
func Conflict(path, description, callID, sessionID string) Failure {
	return Failure(fmt.Sprintf("%s is being changed by another subagent running alongside this one: the task %q (call %s, session %s). "+
		"Two subagents must not change one file at the same time: leave this file to that task, or say so in your answer so that the work is sequenced.",
		path, description, callID, sessionID))
}

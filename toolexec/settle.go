// This file holds Settle: a step that the calls of several tools of one batch wait for
// together, once they have all executed and before their afterToolCall (R18). pid uses it
// to ask for the diagnostics of every file a batch's edits changed in one request.

package toolexec

import (
	"context"
	"sync"

	"github.com/pid-agent/pid/event"
)

// Settle is a step run once for the calls of a batch whose tools share it (the same
// *Settle), after they have all executed: their results wait for it, and it may change
// them, before each call's afterToolCall and ToolEnd (R18).
//
// A Settle is safe for concurrent use and may be shared by several tools and batches.
type Settle struct {
	// Run gets the calls that executed without error, in source order, with their results,
	// and returns an Override per call (same index; nil or a short slice keeps the rest),
	// applied as afterToolCall's are (R11). It is not called when no call executed without
	// error, nor once the batch was aborted.
	//
	// Contract: called on the goroutine of the last of the calls to finish executing, never
	// twice for one batch (in sequential mode, once per call: R15); the batch's other calls
	// go on meanwhile. It must return promptly once ctx is cancelled, and bound its own
	// waits otherwise. A panic is caught: the results are then kept as they were, and a
	// Warning event says why.
	Run func(ctx context.Context, in []SettleInput) []*Override
}

// SettleInput is one executed call, for Settle.Run.
type SettleInput struct {
	Call   Call
	Result Result
}

// settleGroup is the calls of one batch that share a Settle: the last of them to execute
// runs it.
type settleGroup struct {
	settle *Settle
	// mu guards the fields below it.
	mu sync.Mutex
	// pending counts the calls that have not executed (or given up) yet.
	pending int
	// ok holds the calls that executed without error.
	ok []*call
	// done closes once Run has returned and over is set.
	done chan struct{}
	over map[*call]*Override
}

// groupSettles puts the runnable calls of a parallel batch whose tools have a Settle into
// their groups (none is made when no tool has one).
func groupSettles(runnable []*call) {
	var groups map[*Settle]*settleGroup
	for _, c := range runnable {
		st := c.entry.tool.Settle
		if st == nil {
			continue
		}
		if groups == nil {
			groups = map[*Settle]*settleGroup{}
		}
		g := groups[st]
		if g == nil {
			g = &settleGroup{settle: st, done: make(chan struct{})}
			groups[st] = g
		}
		g.pending++
		c.group = g
	}
}

// settled is the call's part of its group's Settle once it has executed (ran reports
// whether it did): the last call to arrive runs Settle.Run for the group, the others wait
// for it; then the call's override, if any, is applied. A call that did not run only
// leaves the group. Before waiting, the calls that depend on this one (C3) are released:
// they may be in the same group, and the group waits for them.
func (r *batch) settled(c *call, ran bool) {
	g := c.group
	if g == nil {
		return
	}
	r.release(c)
	g.mu.Lock()
	if ran && !c.isError {
		g.ok = append(g.ok, c)
	}
	g.pending--
	last := g.pending == 0
	g.mu.Unlock()
	if !ran {
		if last {
			r.runSettle(g)
		}
		return
	}
	if last {
		r.runSettle(g)
	} else {
		<-g.done
	}
	r.apply(c, g.over[c])
}

// runSettle runs the group's Settle over the calls that executed without error, in source
// order, and publishes the overrides.
func (r *batch) runSettle(g *settleGroup) {
	defer close(g.done)
	if len(g.ok) == 0 || r.ctx.Err() != nil {
		return
	}
	// Source order: the calls sit in r.calls in that order.
	ordered := make([]*call, 0, len(g.ok))
	for i := range r.calls {
		c := &r.calls[i]
		if c.group == g && contains(g.ok, c) {
			ordered = append(ordered, c)
		}
	}
	g.over = r.settleCalls(g.settle, ordered)
}

// settleCalls calls st.Run for calls and returns the overrides by call; a panic is reported
// and keeps every result.
func (r *batch) settleCalls(st *Settle, calls []*call) map[*call]*Override {
	in := make([]SettleInput, len(calls))
	for i, c := range calls {
		in[i] = SettleInput{Call: c.prepared, Result: c.result}
	}
	ovs, err := guard(func() ([]*Override, error) { return st.Run(r.ctx, in), nil })
	if err != nil {
		id := ""
		if len(calls) > 0 {
			id = calls[0].tc.ID
		}
		r.emit(event.Warning{ToolCallID: id, Message: "the batch's settle step failed, results kept: " + err.Error()})
		return nil
	}
	out := make(map[*call]*Override, len(calls))
	for i, c := range calls {
		if i < len(ovs) && ovs[i] != nil {
			out[c] = ovs[i]
		}
	}
	return out
}

// settleOne is Settle for one call of a sequential batch (R15: nothing waits for the
// calls after it).
func (r *batch) settleOne(c *call) {
	st := c.entry.tool.Settle
	if st == nil || c.isError || r.ctx.Err() != nil {
		return
	}
	r.apply(c, r.settleCalls(st, []*call{c})[c])
}

// apply applies an override to the call's result field by field (R11).
func (r *batch) apply(c *call, ov *Override) {
	if ov == nil {
		return
	}
	if ov.Content != nil {
		c.result.Content = ov.Content
	}
	if ov.Details != nil {
		c.result.Details = ov.Details
	}
	if ov.IsError != nil {
		c.isError = *ov.IsError
	}
	if ov.Terminate != nil {
		c.result.Terminate = *ov.Terminate
	}
}

// release lets the calls that depend on c (C3) start. Idempotent.
func (r *batch) release(c *call) {
	if c.done != nil && !c.released {
		c.released = true
		close(c.done)
	}
}

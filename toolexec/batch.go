// This file runs a batch: the prepare pass, parallel or sequential execution, finalize, and
// the source-ordered tool-result messages.

package toolexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// Batch is the tool calls of one assistant message and what they run against.
type Batch struct {
	// Assistant is the message the calls come from; hooks see it. May be nil.
	Assistant *llm.Message
	// Calls in source order (R1). When nil, the toolCall blocks of Assistant are used.
	Calls []llm.ToolCall
	// Tools is the set active at this point of the transcript (R5, R12).
	Tools *ActiveSet
	// Context is the transcript so far, for hooks; read only.
	Context []llm.Message
	// Results, when its capacity holds a message per call, is where the tool-result
	// messages are built, and Outcome.Messages is then Results[:n] (n calls): a caller that
	// keeps them right after the transcript (the loop) passes its spare capacity, so that
	// they are neither allocated nor copied again. Its elements are overwritten. Nil, or
	// too small, means a slice of the batch's own.
	Results []llm.Message
}

// Outcome is what a batch returns (R16).
type Outcome struct {
	// Messages holds one tool-result message per call, in source order (R14).
	Messages []llm.Message
	// Terminate is true when the batch is non-empty and every result asked to terminate.
	Terminate bool
	// Aborted is true when ctx was cancelled before the batch finished (R17).
	Aborted bool
}

const (
	msgAborted = "Operation aborted"
	msgBlocked = "Tool execution was blocked"
)

// call is the state of one call as it goes through the pipeline.
type call struct {
	tc       llm.ToolCall
	entry    *entry
	prepared Call
	result   Result
	isError  bool
	// deps are earlier calls sharing a resource with this one (C3); done closes when this
	// call is finalized, for the calls that depend on it.
	deps []*call
	done chan struct{}
	// released is set once done is closed (release); group is the call's Settle group
	// (R18), nil when its tool has no Settle.
	released bool
	group    *settleGroup
	// returned is set under batch.mu once Execute has returned (and again when ToolEnd is
	// sent); onUpdate calls after that are dropped, as Tool.Execute's contract says (R9).
	returned bool
	// begun is set when the call's ToolExecutionStart was sent: it will execute.
	begun bool
	// slot is the call's place in its tool's Slots, when the tool has some.
	slot *ticket
	// msg is the call's tool-result message, its place in the batch's msgs (source order);
	// built once, at its ToolEnd (built).
	msg   *llm.Message
	built bool
	// screened is what Screen said of the call for beforeToolCall ("allow", "ask", "").
	screened string
	// replacedBy names who replaced the call's arguments in Screen ("" when nobody did).
	replacedBy string
}

// batch is one Run in progress. Finished batches are pooled with their calls' room (see
// getBatch).
type batch struct {
	ctx context.Context
	cfg *Config
	b   Batch
	// calls and runnable are the room for the calls, kept across the batch's uses.
	calls    []call
	runnable []*call

	// msgs holds a tool-result message per call, in source order, each built in place.
	msgs []llm.Message
	// t0 is when the batch started: result messages take their time from it and the
	// monotonic clock (a reading of both costs twice one of the second).
	t0 time.Time

	// wg counts the goroutines running calls in parallel mode; next and rescue belong to
	// runInline.
	wg     sync.WaitGroup
	next   atomic.Int32
	rescue sync.WaitGroup

	// mu serializes calls of cfg.Emit and guards call.returned, gen, and the reset of the
	// fields when the batch is reused.
	mu sync.Mutex
	// gen counts the batch's uses: an onUpdate made in an earlier use (called by a goroutine
	// its tool left running) finds it changed and does nothing.
	gen uint64
}

// batches holds finished batches for the next Run: the state of 8 calls is some 2 KB, which
// was garbage the collector paid for at every turn, more so as a run's transcript grows.
var batches sync.Pool

// maxPooledCalls bounds the room a pooled batch keeps.
const maxPooledCalls = 64

// getBatch returns a batch with room for n zeroed calls, pooled if one is.
func getBatch(n int) *batch {
	r, _ := batches.Get().(*batch)
	if r == nil {
		r = &batch{}
	}
	if cap(r.calls) < n {
		r.calls = make([]call, n)
	}
	r.calls = r.calls[:n]
	return r
}

// putBatch pools r once its Run is over: every goroutine it started has finished, and
// nothing but a left-behind onUpdate (which checks gen) refers to it. What it held (the
// calls' arguments and results, the context, the transcript) is dropped, under mu since
// such an onUpdate may be reading.
func putBatch(r *batch) {
	if cap(r.calls) > maxPooledCalls {
		return
	}
	r.mu.Lock()
	r.gen++
	clear(r.calls[:cap(r.calls)])
	clear(r.runnable[:cap(r.runnable)])
	r.runnable = r.runnable[:0]
	r.ctx, r.cfg, r.b, r.msgs = nil, nil, Batch{}, nil
	r.next.Store(0)
	r.mu.Unlock()
	batches.Put(r)
}

func (r *batch) emit(ev event.Event) {
	if r.cfg.Emit == nil {
		return
	}
	r.mu.Lock()
	r.cfg.Emit(ev)
	r.mu.Unlock()
}

// Run executes one batch: every call gets exactly one ToolStart, one ToolEnd and one
// tool-result message, whatever happens (R17). It never panics because of a tool or hook.
//
// Run returns once every goroutine it started has finished.
func Run(ctx context.Context, cfg *Config, b Batch) Outcome {
	if cfg == nil {
		cfg = &Config{}
	}
	var r *batch
	if b.Calls == nil && b.Assistant != nil {
		// The toolCall blocks, read in place rather than through ToolCalls' copy.
		n := 0
		for i := range b.Assistant.Content {
			if b.Assistant.Content[i].Type == llm.ContentToolCall {
				n++
			}
		}
		r = getBatch(n)
		k := 0
		for i := range b.Assistant.Content {
			if c := &b.Assistant.Content[i]; c.Type == llm.ContentToolCall {
				r.calls[k].tc = llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
				k++
			}
		}
	} else {
		r = getBatch(len(b.Calls))
		for i := range b.Calls {
			r.calls[i].tc = b.Calls[i]
		}
	}
	defer putBatch(r)
	calls := r.calls
	r.ctx, r.cfg, r.b, r.msgs, r.t0 = ctx, cfg, b, resultSlots(b.Results, calls), time.Now()
	if r.sequential(calls) {
		r.runSequential(calls)
	} else {
		r.runParallel(calls)
		// A result message not built at its ToolEnd (no observer) is built now.
		ts := r.now()
		if r.cfg.Emit != nil && len(calls) > 1 {
			// The batch's results as they will be announced, for an observer that keeps them
			// all (one write instead of one per message).
			for i := range calls {
				calls[i].buildResult(ts)
			}
			r.emit(event.ToolResults{Messages: r.msgs})
			for i := range r.msgs {
				m := &r.msgs[i]
				r.emit(event.MessageStart{Message: m})
				r.emit(event.MessageEnd{Message: m})
			}
		} else {
			for i := range calls {
				r.addMessage(&calls[i], ts)
			}
		}
	}
	terminate := len(calls) > 0
	for i := range calls {
		terminate = terminate && calls[i].result.Terminate
	}
	return Outcome{Messages: r.msgs, Terminate: terminate, Aborted: ctx.Err() != nil}
}

// resultSlots returns the slice the batch's result messages are built in, dst's room when it
// has enough, and points each call at its message.
func resultSlots(dst []llm.Message, calls []call) []llm.Message {
	if cap(dst) < len(calls) {
		dst = make([]llm.Message, len(calls))
	}
	dst = dst[:len(calls):len(calls)]
	for i := range calls {
		calls[i].msg = &dst[i]
	}
	return dst
}

// sequential reports whether the batch runs sequentially (R2).
func (r *batch) sequential(calls []call) bool {
	if r.cfg.Mode == Sequential {
		return true
	}
	for i := range calls {
		if e := r.b.Tools.lookup(calls[i].tc.Name); e != nil && e.tool.ExecutionMode == Sequential {
			return true
		}
	}
	return false
}

func (r *batch) start(c *call) {
	if len(c.tc.Arguments) == 0 {
		c.tc.Arguments = json.RawMessage(`{}`)
	}
	r.emit(event.ToolStart{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments})
}

// begin reports whether prepared call c may execute now, which it may unless the batch was
// aborted (R17), and if so sends its ToolExecutionStart. Every call that executes goes
// through it exactly once, right before execute, so the event means "Execute is called".
func (r *batch) begin(c *call) bool {
	if c.begun {
		return true
	}
	if r.ctx.Err() != nil {
		return false
	}
	c.begun = true
	if r.cfg.Emit != nil {
		r.emit(event.ToolExecutionStart{ToolCallID: c.tc.ID, ToolName: c.tc.Name})
	}
	return true
}

// end sends the call's ToolEnd, with its result message, built now (the message the
// transcript will hold: an observer may save it before the end is announced).
func (r *batch) end(c *call) {
	if r.cfg.Emit == nil {
		return
	}
	c.buildResult(r.now())
	r.mu.Lock()
	c.returned = true
	r.cfg.Emit(event.ToolEnd{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Result: event.Result{Content: c.result.Content, Details: c.result.Details}, IsError: c.isError, Message: c.msg})
	r.mu.Unlock()
}

// now returns the current time in Unix milliseconds, from the batch's start and the
// monotonic clock.
func (r *batch) now() int64 { return r.t0.Add(time.Since(r.t0)).UnixMilli() }

// buildResult builds the call's tool-result message with timestamp ts, once, in place (a
// message is 168 bytes: built elsewhere, it would be copied in).
func (c *call) buildResult(ts int64) {
	if c.built {
		return
	}
	c.built = true
	*c.msg = llm.Message{
		Role: llm.RoleToolResult, ToolCallID: c.tc.ID, ToolName: c.tc.Name,
		Content: c.result.Content, Details: c.result.Details, IsError: c.isError, Timestamp: ts,
	}
	if c.msg.Content == nil {
		c.msg.Content = []llm.Content{}
	}
	if len(c.result.AddedToolNames) > 0 {
		c.msg.AddedToolNames = c.result.AddedToolNames
	}
}

// addMessage builds the call's tool-result message with timestamp ts and announces it
// (R14).
func (r *batch) addMessage(c *call, ts int64) {
	c.buildResult(ts)
	r.emit(event.MessageStart{Message: c.msg})
	r.emit(event.MessageEnd{Message: c.msg})
}

func (c *call) fail(text string) {
	c.result = TextResult(text)
	c.isError = true
}

// runSequential takes each call through its whole pipeline before the next (R15). After an
// abort the remaining calls get "Operation aborted" without being prepared (R17).
func (r *batch) runSequential(calls []call) {
	for i := range calls {
		c := &calls[i]
		r.start(c)
		switch {
		case r.ctx.Err() != nil:
			c.fail(msgAborted)
		case !r.prepare(c):
		case !r.takeSlot(c) || !r.begin(c):
			c.fail(msgAborted)
		default:
			r.execute(c)
			r.releaseSlot(c)
			r.settleOne(c)
			r.finalize(c)
		}
		r.releaseSlot(c)
		r.end(c)
		r.addMessage(c, r.now())
	}
}

// runParallel prepares every call serially in source order, ending immediate outcomes at
// once (R8), then executes and finalizes the prepared calls concurrently, each sending its
// ToolEnd when it finishes (R13); calls that share a resource wait for each other (C3).
// The calls that can start at once get their ToolExecutionStart here, in source order,
// before any of them runs, so that the order of those events does not depend on the
// scheduler; a call that waits gets it from runOne once it may start.
func (r *batch) runParallel(calls []call) {
	runnable := r.runnable[:0]
	var holders map[string]*call // resource -> last call that declared it
	screened := r.screening() && r.screenAll(calls)
	for i := range calls {
		c := &calls[i]
		if !screened {
			r.start(c)
		}
		if c.isError {
			r.end(c) // refused while screened
			continue
		}
		if r.ctx.Err() != nil {
			c.fail(msgAborted)
			r.end(c)
			continue
		}
		if !screened && !r.prepare(c) || screened && !r.ask(c) {
			r.end(c)
			continue
		}
		res, ok := r.resources(c)
		if !ok {
			r.end(c)
			continue
		}
		if len(res) > 0 {
			if holders == nil {
				holders = make(map[string]*call)
			}
			c.done = make(chan struct{})
			for _, name := range res {
				// prev == c when the call names a resource twice: it must not wait for itself.
				if prev := holders[name]; prev != nil && prev != c && !contains(c.deps, prev) {
					c.deps = append(c.deps, prev)
				}
				holders[name] = c
			}
		}
		if sl := c.entry.tool.Slots; sl != nil {
			c.slot = sl.reserve() // in source order: the queue serves calls as prepared
		}
		runnable = append(runnable, c)
	}
	r.runnable = runnable
	groupSettles(runnable)
	for _, c := range runnable {
		if len(c.deps) == 0 && (c.slot == nil || c.slot.grantedNow()) && !r.begin(c) {
			break // aborted: runOne ends this call and the rest with "Operation aborted"
		}
	}
	switch len(runnable) {
	case 0:
	case 1:
		r.runOne(runnable[0])
	default:
		r.runConcurrently(runnable)
	}
}

// quickCall is how long a call may execute and still count as quick; rescueAfter is how
// long the calls queued behind quick calls on the batch's goroutine wait at most (plus the
// runtime's timer latency) before they get goroutines of their own.
var quickCall, rescueAfter atomic.Int64 // nanoseconds; variables for the tests

func init() {
	quickCall.Store(int64(20 * time.Microsecond))
	rescueAfter.Store(int64(50 * time.Microsecond))
}

// runConcurrently executes and finalizes the prepared calls of a parallel batch (R13). A
// goroutine per call costs more than a call of a tool that returns at once (a no-op, a
// lookup): so the calls of tools known to be quick, and which wait for no other call or
// slot, run one after another on the batch's goroutine, while every other call gets its own
// goroutine. A quick tool that blocks this time does not hold the calls behind it back:
// after rescueAfter those get goroutines too, and the tool is no longer taken for quick. A
// call on a goroutine of its own is timed: under quickCall, its tool is quick again. The
// results are the same either way; only the completion order, which R13 leaves to the
// calls, may differ.
func (r *batch) runConcurrently(runnable []*call) {
	// Move the quick calls to the front, keeping their source order (runnable is this
	// function's to reorder; the order of the others does not matter).
	n := 0
	for i, c := range runnable {
		if c.entry.quick.Load() && len(c.deps) == 0 && c.slot == nil && c.group == nil {
			runnable[n], runnable[i] = runnable[i], runnable[n]
			n++
		}
	}
	inline, spawn := runnable[:n], runnable[n:]
	if len(inline) == 0 {
		// The batch's goroutine takes the last call itself, timed like the others.
		last := spawn[len(spawn)-1]
		for _, c := range spawn[:len(spawn)-1] {
			r.wg.Go(func() { r.runTimed(c) })
		}
		r.runTimed(last)
		r.wg.Wait()
		return
	}
	for _, c := range spawn {
		r.wg.Go(func() { r.runTimed(c) })
	}
	if len(inline) == 1 {
		r.runOne(inline[0])
	} else {
		r.runInline(inline)
	}
	r.wg.Wait()
}

// runTimed is runOne for a call on a goroutine of its own: it records whether the call was
// quick.
func (r *batch) runTimed(c *call) {
	t0 := time.Now()
	r.runOne(c)
	c.entry.quick.Store(int64(time.Since(t0)) < quickCall.Load())
}

// runInline runs calls in order on the batch's goroutine, handing those not yet started to
// goroutines of their own (added to r.wg) once rescueAfter has passed. It returns when every
// call it ran itself has finished and the hand-over, if any, is done. It runs once per
// batch.
func (r *batch) runInline(calls []*call) {
	r.rescue.Add(1)
	var stop func() bool
	if now := time.Now(); now != now.Round(0) {
		// A monotonic reading: not in a synctest bubble, so a pooled timer will do (making
		// a timer for each batch costs several µs here, resetting one does not).
		rs := getRescuer()
		rs.mu.Lock()
		rs.r, rs.calls = r, calls
		rs.mu.Unlock()
		rs.t.Reset(time.Duration(rescueAfter.Load()))
		stop = rs.t.Stop
		defer func() {
			rs.mu.Lock()
			rs.r, rs.calls = nil, nil
			rs.mu.Unlock()
			rescuers.Put(rs)
		}()
	} else {
		// In a bubble: a timer of the bubble's own, which its clock drives; a pooled one
		// would be another bubble's (fatal to use) or a real one (the bubble would never
		// see it fire).
		stop = time.AfterFunc(time.Duration(rescueAfter.Load()), func() { r.handOver(calls) }).Stop
	}
	for {
		i := int(r.next.Add(1)) - 1 // r.next: the next call to start; len(calls) or more once all are taken
		if i >= len(calls) {
			break
		}
		r.runOne(calls[i])
	}
	if stop() {
		r.rescue.Done()
	}
	r.rescue.Wait()
}

// handOver is runInline's rescue: it hands the calls not started yet to goroutines, and
// marks the tool of the call running now as not quick.
func (r *batch) handOver(calls []*call) {
	defer r.rescue.Done()
	from := min(int(r.next.Swap(int32(len(calls)))), len(calls))
	if from > 0 {
		calls[from-1].entry.quick.Store(false)
	}
	for _, c := range calls[from:] {
		r.wg.Go(func() { r.runTimed(c) })
	}
}

// rescuer is a timer for runInline outside synctest bubbles, pooled: it serves one batch
// at a time.
type rescuer struct {
	t *time.Timer
	// mu guards the fields below it.
	mu    sync.Mutex
	r     *batch
	calls []*call
}

var rescuers sync.Pool

// getRescuer returns a pooled rescuer, or a new one; never call it in a synctest bubble.
func getRescuer() *rescuer {
	if v := rescuers.Get(); v != nil {
		return v.(*rescuer)
	}
	rs := &rescuer{}
	rs.t = time.AfterFunc(time.Hour, rs.fire)
	rs.t.Stop()
	return rs
}

// fire is the timer's function: runInline's rescue for the batch it serves.
func (rs *rescuer) fire() {
	rs.mu.Lock()
	r, calls := rs.r, rs.calls
	rs.mu.Unlock()
	if r != nil {
		r.handOver(calls)
	}
}

func contains(cs []*call, c *call) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// runOne executes and finalizes one prepared call in parallel mode. A call whose batch was
// aborted before it started does not run: it gets "Operation aborted" (R17).
func (r *batch) runOne(c *call) {
	for _, d := range c.deps {
		<-d.done
	}
	if r.takeSlot(c) && r.begin(c) {
		r.execute(c)
		r.releaseSlot(c)
		r.settled(c, true)
		r.finalize(c)
	} else {
		c.fail(msgAborted)
		r.settled(c, false)
	}
	r.releaseSlot(c)
	r.end(c)
	r.release(c)
}

// screenAll starts every call (ToolStart, in source order), validates each, then screens
// the valid ones concurrently: each call's Screen runs in parallel with the others'. It
// returns true; the calls refused meanwhile hold their error result (isError).
func (r *batch) screenAll(calls []call) bool {
	var wg sync.WaitGroup
	for i := range calls {
		c := &calls[i]
		r.start(c)
		if r.ctx.Err() != nil {
			c.fail(msgAborted)
			continue
		}
		if !r.validate(c) {
			continue
		}
		wg.Go(func() { r.screen(c) })
	}
	wg.Wait()
	return true
}

// takeSlot waits, when the call's tool has Slots, until the call holds one (reserving its
// place first in sequential mode). It reports false when the run was aborted meanwhile.
func (r *batch) takeSlot(c *call) bool {
	if c.slot == nil {
		sl := c.entry.tool.Slots
		if sl == nil {
			return true
		}
		c.slot = sl.reserve()
	}
	return c.slot.wait(r.ctx) == nil
}

// releaseSlot gives the call's slot back once it has executed (before afterToolCall, so the
// next call need not wait for the hooks). Idempotent.
func (r *batch) releaseSlot(c *call) {
	if c.slot != nil {
		c.slot.release()
	}
}

// prepare looks the tool up (R5), rewrites and validates the arguments (R6), lets the tool
// refuse the call (Check), screens it (Screen) and asks beforeToolCall (R7). It reports
// whether the call must execute; otherwise c holds its immediate outcome (R8).
func (r *batch) prepare(c *call) bool {
	return r.validate(c) && r.screen(c) && r.ask(c)
}

// validate is prepare up to the tool's Check.
func (r *batch) validate(c *call) bool {
	e := r.b.Tools.lookup(c.tc.Name)
	if e == nil {
		c.fail(fmt.Sprintf("Tool %s not found", c.tc.Name))
		return false
	}
	if e.tool.Unavailable != "" {
		c.fail(fmt.Sprintf("Tool %s is unavailable: %s", c.tc.Name, e.tool.Unavailable))
		return false
	}
	c.entry = e
	args := c.tc.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if e.tool.PrepareArguments != nil {
		var err error
		args, err = guard(func() (json.RawMessage, error) { return e.tool.PrepareArguments(args) })
		if err != nil {
			c.fail(fmt.Sprintf("Tool %s: prepareArguments failed: %v", c.tc.Name, err))
			return false
		}
	}
	if text := c.check(args); text != "" {
		c.fail(text)
		return false
	}
	return true
}

// check decodes and validates args against the call's tool (R6) and lets the tool refuse
// the call (Check); it returns the error result's text, or "" with c.prepared set.
func (c *call) check(args json.RawMessage) string {
	e := c.entry
	value, err := decodeArgs(args)
	if err != nil {
		value, err = jsonschema.UnmarshalJSON(bytes.NewReader(args))
	}
	if err != nil {
		return fmt.Sprintf("Invalid arguments for tool %s: the arguments are not valid JSON (%v).\n\nReceived arguments:\n%s", c.tc.Name, err, args)
	}
	if e.fast == nil || !e.fast.accepts(value) {
		if err := e.schema.Validate(value); err != nil {
			return validationMessage(c.tc.Name, err, args)
		}
	}
	c.prepared = Call{ID: c.tc.ID, Name: c.tc.Name, Args: args, Value: value}
	if e.tool.Check != nil {
		var refused error
		_, err := guard(func() (struct{}, error) { refused = e.tool.Check(c.prepared); return struct{}{}, nil })
		switch {
		case err != nil:
			return fmt.Sprintf("Tool %s: its check of the call failed: %v", c.tc.Name, err)
		case refused != nil:
			return refused.Error()
		}
	}
	return ""
}

// screening reports whether the batch's calls are screened.
func (r *batch) screening() bool {
	return r.cfg.Screen != nil && (r.cfg.ScreenWhen == nil || r.cfg.ScreenWhen())
}

// screen runs Screen for a validated call: it may block the call, replace its arguments
// (checked again as validate checks them) and say how beforeToolCall should treat it. It
// reports whether the call goes on.
func (r *batch) screen(c *call) bool {
	if r.cfg.Screen == nil {
		return true
	}
	if r.cfg.ScreenWhen != nil && !r.cfg.ScreenWhen() {
		return true
	}
	sc, err := guard(func() (*Screening, error) {
		return r.cfg.Screen(r.ctx, ScreenInput{Assistant: r.b.Assistant, Call: c.tc, Args: c.prepared.Args, Context: r.b.Context})
	})
	switch {
	case r.ctx.Err() != nil:
		c.fail(msgAborted)
		return false
	case err != nil:
		msg := fmt.Sprintf("screening hook failed for tool %s: %v", c.tc.Name, err)
		r.emit(event.Warning{ToolCallID: c.tc.ID, Message: msg})
		c.fail(msg)
		return false
	case sc == nil:
		return true
	case sc.Block != nil:
		reason := sc.Block.Reason
		if reason == "" {
			reason = msgBlocked
		}
		c.fail(reason)
		c.result.Terminate = sc.Block.Terminate
		return false
	}
	if sc.Args != nil {
		if text := c.check(sc.Args); text != "" {
			c.fail(fmt.Sprintf("%s replaced the arguments of this %s call with invalid ones: %s", sc.Source, c.tc.Name, text))
			return false
		}
		c.replacedBy = sc.Source
		if c.replacedBy == "" {
			c.replacedBy = "the screening hook"
		}
	}
	c.screened = sc.Verdict
	return true
}

// ask asks beforeToolCall about a prepared call (R7).
func (r *batch) ask(c *call) bool {
	if r.cfg.Before != nil {
		block, err := guard(func() (*Block, error) {
			return r.cfg.Before(r.ctx, BeforeInput{Assistant: r.b.Assistant, Call: c.tc, Args: c.prepared.Value, Context: r.b.Context, Screened: c.screened, Prepared: c.prepared.Args, ReplacedBy: c.replacedBy})
		})
		switch {
		case r.ctx.Err() != nil:
			c.fail(msgAborted)
			return false
		case err != nil:
			msg := fmt.Sprintf("beforeToolCall hook failed for tool %s: %v", c.tc.Name, err)
			r.emit(event.Warning{ToolCallID: c.tc.ID, Message: msg})
			c.fail(msg)
			return false
		case block != nil:
			reason := block.Reason
			if reason == "" {
				reason = msgBlocked
			}
			c.fail(reason)
			c.result.Terminate = block.Terminate
			return false
		}
	}
	if r.ctx.Err() != nil {
		c.fail(msgAborted)
		return false
	}
	return true
}

// resources returns what a prepared call declares it touches (C3). A panicking Resources
// turns the call into an error result and reports false.
func (r *batch) resources(c *call) ([]string, bool) {
	if c.entry.tool.Resources == nil {
		return nil, true
	}
	res, err := guard(func() ([]string, error) { return c.entry.tool.Resources(c.prepared), nil })
	if err != nil {
		c.fail(fmt.Sprintf("Tool %s: declaring its resources failed: %v", c.tc.Name, err))
		return nil, false
	}
	return res, true
}

// execute runs the tool (R9, R10).
func (r *batch) execute(c *call) {
	tool := &c.entry.tool
	gen := r.gen
	onUpdate := func(p event.Result) {
		r.mu.Lock()
		if r.gen == gen && !c.returned && r.cfg.Emit != nil {
			r.cfg.Emit(event.ToolUpdate{ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.tc.Arguments, Partial: p})
		}
		r.mu.Unlock()
	}
	res, err := guard(func() (Result, error) { return tool.Execute(r.ctx, c.prepared, onUpdate) })
	// Updates sent after Execute returned (say, by a goroutine the tool left behind) are
	// dropped, also while afterToolCall runs.
	r.mu.Lock()
	c.returned = true
	r.mu.Unlock()
	if err != nil {
		r.executeFailed(c, err)
		return
	}
	c.result = res
	c.isError = false
}

// executeFailed turns a tool's error or panic into its error result (R10). It is kept out
// of execute so that execute's frame stays small: in parallel mode execute runs at the
// bottom of a new goroutine's stack, which would otherwise have to grow.
//
//go:noinline
func (r *batch) executeFailed(c *call, err error) {
	var pe *panicError
	if errors.As(err, &pe) {
		err = fmt.Errorf("tool %s panicked: %v", c.tc.Name, pe.value)
		r.emit(event.Warning{ToolCallID: c.tc.ID, Message: err.Error(), Stack: string(pe.stack)})
	}
	switch {
	case r.ctx.Err() != nil && errors.Is(err, context.Canceled):
		c.fail(msgAborted)
	case r.ctx.Err() != nil:
		c.fail(msgAborted + ": " + err.Error())
	default:
		c.fail(err.Error())
	}
	// An error that carries details keeps them on its result (bash's details.sandbox: what
	// the check after a sandboxed command put back).
	var d interface{ ResultDetails() any }
	if pe == nil && errors.As(err, &d) {
		c.result.Details = d.ResultDetails()
	}
}

// finalize applies afterToolCall's override field by field (R11).
func (r *batch) finalize(c *call) {
	if r.cfg.After == nil {
		return
	}
	ov, err := guard(func() (*Override, error) {
		return r.cfg.After(r.ctx, AfterInput{Assistant: r.b.Assistant, Call: c.tc, Args: c.prepared.Value, Result: c.result, IsError: c.isError, Context: r.b.Context})
	})
	if err != nil {
		msg := fmt.Sprintf("afterToolCall hook failed for tool %s: %v", c.tc.Name, err)
		r.emit(event.Warning{ToolCallID: c.tc.ID, Message: msg})
		c.fail(msg)
		return
	}
	r.apply(c, ov)
}

// panicError is a recovered panic, with the stack for the log.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// guard calls f, turning a panic into an error.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return f()
}

// RejectTruncated fails every call of an assistant message that stopped at the output-token
// limit (R3): its arguments may be cut short, so none runs and no hook is asked. Each call
// gets its ToolStart, ToolEnd and an error result asking the model to send the change in
// smaller parts: the same call would be cut again.
func RejectTruncated(cfg *Config, calls []llm.ToolCall) Outcome {
	if cfg == nil {
		cfg = &Config{}
	}
	r := &batch{ctx: context.Background(), cfg: cfg, msgs: make([]llm.Message, len(calls)), t0: time.Now()}
	for i, tc := range calls {
		c := &call{tc: tc, msg: &r.msgs[i]}
		r.start(c)
		c.fail(fmt.Sprintf("Tool call %s (%s) was not run: the reply hit the output-token limit, so its arguments may be incomplete. The same call would be cut again: send the change in smaller parts (edit in steps of a few hunks each, or write the file's first part, then add the rest with edit calls).", tc.Name, tc.ID))
		r.end(c)
		r.addMessage(c, r.now())
	}
	return Outcome{Messages: r.msgs}
}

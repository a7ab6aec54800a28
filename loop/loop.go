// Package loop is pid's agent loop: pi's double loop of model turns and tool batches, with
// steering messages taken after each turn and follow-up messages taken when the agent would
// stop. The entry points are Run (one run over a transcript) and Agent (a transcript, its
// queues and its active tools, kept across runs).
//
// This file holds Run.
package loop

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// Config is what one run needs.
type Config struct {
	// Provider is the model. Required.
	Provider     llm.Provider
	SystemPrompt string
	// Tools is the set active at the end of the history the run starts from (see
	// toolexec.Replay); nil means no tools.
	Tools *toolexec.ActiveSet
	// ToolExecution is the session's mode; "" means parallel (R2).
	ToolExecution toolexec.Mode
	// Before and After are the pipeline's hooks; nil costs nothing (C1).
	Before toolexec.BeforeHook
	After  toolexec.AfterHook
	// Screen screens each validated call before Before (the person's PreToolUse hooks);
	// nil costs nothing.
	Screen     toolexec.ScreenHook
	ScreenWhen func() bool
	// BeforeStop, if set, is asked when the run would end because the model answered
	// without tool calls and nothing is queued (the person's Stop hooks): the messages it
	// returns start another round of turns, as follow-ups do.
	//
	// Contract: called on the loop's goroutine with the last assistant message; it may run
	// commands but must return promptly once ctx is cancelled; nil or empty lets the run end.
	BeforeStop func(ctx context.Context, last *llm.Message) []llm.Message

	// TransformContext, if set, rewrites the whole transcript before each model call (for
	// pruning or compaction); its result is then converted message by message.
	//
	// Contract: called on the loop's goroutine before every model call, with the transcript
	// so far, which it must not modify. It must return promptly when ctx is cancelled. An
	// error (or panic) ends the run with an assistant message of StopReason "error" that
	// names it; it is not retried.
	TransformContext func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)

	// ConvertToLlm, if set, maps one transcript message to what the model sees, or drops it
	// (false). Without it every message goes to the model as it is.
	//
	// Contract: called on the loop's goroutine exactly once per message as the message
	// enters the transcript (results are kept, so a run's conversion work is linear in its
	// length, not quadratic as in pi), or once per message of TransformContext's output on
	// every model call when that is set. It must be pure and must not panic.
	ConvertToLlm func(m *llm.Message) (llm.Message, bool)

	// Steering, if set, returns the messages queued for the running prompt; they are
	// added after the current turn, before the next model call.
	//
	// Contract: called on the loop's goroutine after every turn; returns and forgets the
	// queued messages (nil when none). Must not block.
	Steering func() []llm.Message
	// FollowUp, if set, returns the messages queued for when the agent would stop; they
	// start another round of turns. Same contract as Steering.
	FollowUp func() []llm.Message

	// Emit receives every event; see package event for the order. nil drops them.
	Emit event.Sink
}

// Result is what a run did.
type Result struct {
	// Messages is every message the run added, in transcript order.
	Messages []llm.Message
	// StopReason is the last assistant message's, or "aborted" after a cancel.
	StopReason llm.StopReason
	// Terminated is true when a terminating batch (R16) ended the run.
	Terminated bool
	// Aborted is true when ctx was cancelled during the run.
	Aborted bool
	// Tools is the active set at the end of the run (R12).
	Tools *toolexec.ActiveSet
}

// run is one Run in progress.
type run struct {
	ctx  context.Context
	cfg  *Config
	emit event.Sink

	// transcript is the history followed by everything the run added (from index start):
	// what hooks and transforms see.
	transcript []llm.Message
	start      int
	// forModel is the converted transcript, kept in step with it when ConvertToLlm is set
	// and TransformContext is not; without either, the model gets transcript itself.
	// While every message converted to itself (a filter that kept them all), forModel is
	// not built and converted is false: the model gets transcript, which is the same.
	forModel  []llm.Message
	converted bool
	tools     *toolexec.ActiveSet
	batchCfg  toolexec.Config
}

func dropEvent(event.Event) {}

var emptyToolbox, _ = toolexec.NewToolbox()

// Run runs the loop from history with prompts added as the new input, until the model stops
// asking for tools and no queued message is left, a batch terminates (R16), the model fails,
// or ctx is cancelled. It never panics because of a provider, tool or hook; every goroutine
// it starts has finished when it returns.
func Run(ctx context.Context, cfg *Config, history []llm.Message, prompts []llm.Message) Result {
	r := &run{ctx: ctx, cfg: cfg, emit: cfg.Emit, tools: cfg.Tools}
	if r.tools == nil {
		empty, _ := emptyToolbox.Activate()
		r.tools = empty
	}
	if r.emit == nil {
		r.emit = dropEvent
	}
	r.transcript = make([]llm.Message, len(history), 2*len(history)+len(prompts)+16)
	copy(r.transcript, history)
	r.start = len(history)
	if cfg.TransformContext == nil && cfg.ConvertToLlm != nil {
		for i := range r.transcript {
			r.convert(i)
		}
	}
	r.batchCfg = toolexec.Config{Mode: cfg.ToolExecution, Before: cfg.Before, After: cfg.After, Screen: cfg.Screen, ScreenWhen: cfg.ScreenWhen, Emit: cfg.Emit}
	return r.loop(prompts)
}

// convert converts transcript message i, the last one converted so far plus one.
func (r *run) convert(i int) {
	if r.cfg.TransformContext != nil || r.cfg.ConvertToLlm == nil {
		return
	}
	m := &r.transcript[i]
	c, ok := r.cfg.ConvertToLlm(m)
	if !r.converted {
		if ok && sameMessage(&c, m) {
			return // forModel would equal transcript[:i+1]
		}
		r.converted = true
		r.forModel = make([]llm.Message, i, cap(r.transcript))
		copy(r.forModel, r.transcript[:i])
	}
	if ok {
		r.forModel = appendDoubling(r.forModel, c)
	}
}

// sameMessage reports whether a and b are the same message: equal fields, slices sharing
// their arrays, Details the same value (sameDetails). A false answer is always safe: the
// caller then keeps a converted copy.
func sameMessage(a, b *llm.Message) bool {
	return a.Role == b.Role && sameSlice(a.Content, b.Content) && a.StopReason == b.StopReason &&
		a.Usage == b.Usage && a.ErrorMessage == b.ErrorMessage && a.ToolCallID == b.ToolCallID &&
		a.ToolName == b.ToolName && a.IsError == b.IsError && sameSlice(a.AddedToolNames, b.AddedToolNames) &&
		a.Timestamp == b.Timestamp && sameDetails(a.Details, b.Details)
}

// sameDetails reports whether two Details hold the same value without ever comparing values
// Go cannot compare (== on two interfaces holding the same map type panics): comparable
// values compare with ==, maps, slices and funcs by identity, anything else (a struct with
// a slice in it) counts as different.
func sameDetails(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	if va.Comparable() && vb.Comparable() {
		return a == b
	}
	switch va.Kind() {
	case reflect.Map, reflect.Func:
		return va.Pointer() == vb.Pointer()
	case reflect.Slice:
		return va.Pointer() == vb.Pointer() && va.Len() == vb.Len()
	}
	return false
}

func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && (len(a) == 0 || &a[0] == &b[0])
}

// appendDoubling appends m, doubling the capacity when it runs out: append alone grows
// large slices by a quarter, which copies a long transcript many times over.
func appendDoubling(s []llm.Message, m llm.Message) []llm.Message {
	return append(growDoubling(s, 1), m)
}

// growDoubling returns s with room for n more messages, its capacity doubled as often as
// that takes.
func growDoubling(s []llm.Message, n int) []llm.Message {
	if cap(s)-len(s) >= n {
		return s
	}
	c := cap(s)
	for c-len(s) < n {
		c = 2*c + 16
	}
	grown := make([]llm.Message, len(s), c)
	copy(grown, s)
	return grown
}

// add appends m to the transcript and returns where it now is. Earlier pointers into the
// transcript stay valid (a grown transcript leaves the old array to them).
func (r *run) add(m llm.Message) *llm.Message {
	r.transcript = appendDoubling(r.transcript, m)
	r.convert(len(r.transcript) - 1)
	return &r.transcript[len(r.transcript)-1]
}

// reserve makes room in the transcript for n more messages.
func (r *run) reserve(n int) { r.transcript = growDoubling(r.transcript, n) }

// addResults adds a batch's tool-result messages to the transcript and applies their
// addedToolNames (R12). Results built in the transcript's own room (Batch.Results) are
// already in place: the transcript only grows over them.
func (r *run) addResults(results []llm.Message) {
	end := len(r.transcript)
	if len(results) > 0 && cap(r.transcript)-end >= len(results) && &r.transcript[:end+1][end] == &results[0] {
		r.transcript = r.transcript[:end+len(results)]
		for i := end; i < len(r.transcript); i++ {
			r.convert(i)
			r.activate(&r.transcript[i])
		}
		return
	}
	for i := range results {
		r.activate(r.add(results[i]))
	}
}

// added returns every message the run added.
func (r *run) added() []llm.Message { return r.transcript[r.start:len(r.transcript):len(r.transcript)] }

// addInput adds and announces a user-side message (prompt, steering, follow-up).
func (r *run) addInput(m llm.Message) {
	p := r.add(m)
	r.emit(event.MessageStart{Message: p})
	r.emit(event.MessageEnd{Message: p})
}

func (r *run) take(f func() []llm.Message) []llm.Message {
	if f == nil {
		return nil
	}
	return f()
}

func (r *run) loop(prompts []llm.Message) Result {
	res := Result{}
	r.emit(event.AgentStart{})
	r.emit(event.TurnStart{})
	for _, p := range prompts {
		r.addInput(p)
	}
	pending := r.take(r.cfg.Steering)
	firstTurn := true
	for {
		moreTools := true
		for moreTools || len(pending) > 0 {
			if !firstTurn {
				r.emit(event.TurnStart{})
			}
			firstTurn = false
			for _, m := range pending {
				r.addInput(m)
			}
			pending = nil
			res.Terminated = false

			msg := r.ask()
			r.add(msg)
			res.StopReason = msg.StopReason
			if msg.StopReason == llm.StopError || msg.StopReason == llm.StopAborted {
				r.emit(event.TurnEnd{Message: msg})
				// A failure caused by a cancel is an abort (Result.Aborted, R17).
				if msg.StopReason == llm.StopAborted || r.ctx.Err() != nil {
					res.Aborted = true
					res.StopReason = llm.StopAborted
				}
				return r.finish(res)
			}

			moreTools = false
			var results []llm.Message
			if n := toolCalls(&msg); n > 0 {
				var out toolexec.Outcome
				if msg.StopReason == llm.StopLength {
					out = toolexec.RejectTruncated(&r.batchCfg, msg.ToolCalls()) // R3
				} else {
					// Calls nil: the batch reads the toolCall blocks of Assistant (R1), and
					// builds its results in the transcript's room for them (Results).
					r.reserve(n)
					end := len(r.transcript)
					out = toolexec.Run(r.ctx, &r.batchCfg, toolexec.Batch{
						Assistant: &r.transcript[end-1], Tools: r.tools,
						Context: r.transcript[:end:end], Results: r.transcript[end:end],
					})
				}
				results = out.Messages
				r.addResults(results)
				moreTools = !out.Terminate
				res.Terminated = out.Terminate
				res.Aborted = out.Aborted
			}
			r.emit(event.TurnEnd{Message: msg, ToolResults: results})
			if res.Aborted || r.ctx.Err() != nil {
				// R17: after an abort the model is asked nothing more.
				res.Aborted = true
				res.StopReason = llm.StopAborted
				return r.finish(res)
			}
			pending = r.take(r.cfg.Steering)
		}
		if pending = r.take(r.cfg.FollowUp); len(pending) == 0 {
			if r.cfg.BeforeStop == nil || res.Terminated || r.ctx.Err() != nil || len(r.transcript) == 0 {
				break
			}
			last := &r.transcript[len(r.transcript)-1]
			if last.Role != llm.RoleAssistant || last.StopReason != llm.StopEnd {
				break
			}
			if pending = r.cfg.BeforeStop(r.ctx, last); len(pending) == 0 || r.ctx.Err() != nil {
				break
			}
		}
		res.Terminated = false
	}
	return r.finish(res)
}

// toolCalls returns how many tool calls the assistant message asks for.
func toolCalls(m *llm.Message) int {
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == llm.ContentToolCall {
			n++
		}
	}
	return n
}

func (r *run) finish(res Result) Result {
	res.Messages = r.added()
	r.emit(event.AgentEnd{Messages: res.Messages})
	res.Tools = r.tools
	return res
}

// activate applies a tool result's addedToolNames (R12); unknown names are ignored with a
// warning.
func (r *run) activate(m *llm.Message) {
	if len(m.AddedToolNames) == 0 {
		return
	}
	var unknown []string
	r.tools, unknown = r.tools.With(m.AddedToolNames)
	if len(unknown) > 0 {
		r.emit(event.Warning{ToolCallID: m.ToolCallID, Message: fmt.Sprintf("tool %s: addedToolNames names unknown tools %q; ignored", m.ToolName, unknown)})
	}
}

// ask makes one model call, streaming its events, and returns the assistant message.
func (r *run) ask() llm.Message {
	if r.ctx.Err() != nil {
		return r.aborted()
	}
	req := &llm.Request{SystemPrompt: r.cfg.SystemPrompt}
	if r.cfg.TransformContext != nil {
		msgs, err := protect(func() ([]llm.Message, error) { return r.cfg.TransformContext(r.ctx, r.transcript) })
		if err != nil && r.ctx.Err() != nil {
			// The transform gave up because the run was cancelled, as its contract asks:
			// that is an abort, not a transform failure.
			return r.aborted()
		}
		if err != nil {
			return r.failed(fmt.Sprintf("transformContext failed: %v", err))
		}
		if r.cfg.ConvertToLlm == nil {
			// The transform's own slice: copying it would make every call cost the
			// transcript's length (a run quadratic in it). The provider never modifies it.
			req.Messages = slices.Clip(msgs)
		} else {
			req.Messages = make([]llm.Message, 0, len(msgs))
			for i := range msgs {
				if c, ok := r.cfg.ConvertToLlm(&msgs[i]); ok {
					req.Messages = append(req.Messages, c)
				}
			}
		}
	} else {
		if r.converted {
			req.Messages = slices.Clip(r.forModel)
		} else {
			req.Messages = slices.Clip(r.transcript)
		}
	}
	// The tools as they are after the transform, which may have waited for some to come
	// (a loaded session's MCP servers still starting).
	req.Tools = r.tools.Specs()

	// The provider's partial message goes to the observer as it is, never copied: the
	// stream's contract (llm.StreamSink) and the events' (event.MessageUpdate) both make it
	// valid during the call only, so a stream of n steps costs O(n) here.
	started := false
	sink := func(partial *llm.Message, ev llm.StreamEvent) {
		if !started {
			started = true
			r.emit(event.MessageStart{Message: partial})
		}
		if ev.Kind != llm.StreamStart {
			r.emit(event.MessageUpdate{Message: partial, Delta: ev})
		}
	}
	msg, err := protect(func() (llm.Message, error) { return r.cfg.Provider.Stream(r.ctx, req, sink), nil })
	if err != nil {
		msg = llm.Message{StopReason: llm.StopError, ErrorMessage: fmt.Sprintf("model provider failed: %v", err)}
	}
	msg.Role = llm.RoleAssistant
	if msg.Content == nil {
		msg.Content = []llm.Content{}
	}
	if msg.Timestamp == 0 {
		msg.Timestamp = llm.Now()
	}
	if !started {
		r.emit(event.MessageStart{Message: &msg})
	}
	r.emit(event.MessageEnd{Message: &msg})
	return msg
}

// aborted announces and returns the assistant message of a model call not made because the
// run was cancelled.
func (r *run) aborted() llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{}, StopReason: llm.StopAborted, ErrorMessage: "Operation aborted", Timestamp: llm.Now()}
	r.emit(event.MessageStart{Message: &m})
	r.emit(event.MessageEnd{Message: &m})
	return m
}

func (r *run) failed(text string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{}, StopReason: llm.StopError, ErrorMessage: text, Timestamp: llm.Now()}
	r.emit(event.Warning{Message: text})
	r.emit(event.MessageStart{Message: &m})
	r.emit(event.MessageEnd{Message: &m})
	return m
}

// protect calls f, turning a panic into an error.
func protect[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

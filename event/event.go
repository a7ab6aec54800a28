// Package event defines the closed set of events the agent loop and the tool pipeline send
// to their observer, and the Sink they send them through. The entry point is Sink.
//
// # Delivery
//
// A Sink is called synchronously and never concurrently: the pipeline serializes its calls,
// so an observer needs no lock of its own. The order is the loop's:
//
//	AgentStart
//	  TurnStart
//	    MessageStart/MessageEnd (prompt, steering or follow-up messages)
//	    MessageStart, MessageUpdate*, MessageEnd (the assistant message)
//	    per tool call: ToolStart, [ToolExecutionStart, ToolUpdate*], ToolEnd
//	    [ToolResults] MessageStart/MessageEnd per tool-result message, in source order (R14)
//	  TurnEnd
//	  ...
//	AgentEnd
//
// ToolStart events come in source order, each before its call is prepared (R4). A call gets
// ToolExecutionStart if and only if its tool's Execute is called, just before that call;
// calls that end during the prepare pass (R3, R5-R8: unknown tool, invalid arguments, a
// denial, an abort before running) get none. In sequential mode each call's events come
// whole, one call after the other (R15). In parallel mode, once the prepare pass is over,
// the ToolExecutionStart events of the calls that start at once come in source order from
// the batch's goroutine before any of them runs; a call that waits for another one sharing
// a resource (C3) gets its ToolExecutionStart from its own goroutine once that one has
// ended. The ToolUpdate and ToolEnd events of different calls come from the calls' own
// goroutines and interleave in completion order (R13); they never overlap in time, and
// every ToolUpdate of a call follows its ToolExecutionStart and precedes its ToolEnd (R9).
// Everything else comes from the loop's goroutine. Warning may come from either.
//
// CompactionStart and CompactionEnd come from the session layer, not the loop: around a
// compaction of the transcript, before a model call (on the loop's goroutine, between
// TurnStart and the assistant's MessageStart) or on request while no run is in progress.
//
// # Cost
//
// Sending an event is a synchronous call of the Sink; the senders copy nothing for it. In
// particular a MessageUpdate points at the provider's partial message itself, so a stream of
// n deltas costs the loop O(n), not O(n) copies of a growing message: an observer that
// wants the partial message encodes it only where it needs it (the faces do at the *_end
// steps, when a block is complete).
package event

import (
	"encoding/json"

	"github.com/pid-agent/pid/llm"
)

// Event is one of the types below; the set is closed.
type Event interface{ isEvent() }

// ToolResults is sent in parallel mode once every call of a batch has finished, right before
// its tool-result messages are announced one by one (R14): Messages are those messages, in
// source order, so an observer that keeps them (a session's file) can take the batch at once.
// The slice is the sender's: read it during the call only.
type ToolResults struct{ Messages []llm.Message }

// CompactionStart and CompactionEnd bracket a compaction of a session's transcript: the
// messages before a cut point are summarized by the model, and from then on the model sees
// the summary instead of them. Reason is "manual", "threshold" (the context grew past the
// model's window less the reserve) or "overflow" (the provider said the context is too long).
type (
	CompactionStart struct{ Reason string }
	// CompactionEnd carries the summary, or Err when the compaction failed or was
	// cancelled (the transcript is then as it was). TokensBefore is the context size that
	// was compacted. Summary is the text the model now sees in place of the compacted
	// messages (the summary, then what Kept lists); Kept is nil on failure.
	CompactionEnd struct {
		Reason       string
		Summary      string
		TokensBefore int
		Err          string
		Kept         *CompactionKept
	}
)

// FileText is a file a call changed, with its text before and now when both are known:
// Old is nil for a file the call made, New nil for one it deleted. Known is false for a
// file whose text is not given (binary, larger than the bound, not kept): its path alone.
type FileText struct {
	Path     string
	Old, New *string
	Known    bool
}

// Sink receives events.
//
// Contract: called synchronously, never concurrently (see the package comment). It must not
// block for long (the pipeline waits for it), must not call back into the loop or pipeline
// that called it, and must not mutate what it is given nor retain it beyond the call unless
// it copies it: a finished message, from MessageEnd, may be kept; the partial message of a
// MessageStart or MessageUpdate changes after the call. Events whose only field is a pointer
// cost no allocation to send. It cannot fail: an observer with trouble handles it itself.
type Sink func(Event)

// Result is the content and details of a tool result or of a progress update.
type Result struct {
	Content []llm.Content `json:"content"`
	Details any           `json:"details,omitempty"`
}

type (
	// AgentStart opens a run.
	AgentStart struct{}
	// AgentEnd closes a run; Messages is every message the run added, in transcript order.
	AgentEnd struct{ Messages []llm.Message }
	// TurnStart opens a turn: one model call and the batch of its tool calls.
	TurnStart struct{}
	// TurnEnd closes a turn with its assistant message and tool results in source order.
	TurnEnd struct {
		Message     llm.Message
		ToolResults []llm.Message
	}
	// MessageStart announces a message (a partial one for a streaming assistant message).
	// Message points at the sender's copy: read it during the call only, never modify it
	// (a streaming message goes on changing after the call).
	MessageStart struct{ Message *llm.Message }
	// MessageUpdate carries a streaming step of an assistant message (Delta: for a
	// *_delta step the text or arguments fragment that arrived) and the partial message so
	// far. Message is the provider's own partial message, not a copy: it is valid to read
	// during the call only, must never be modified, and changes after the call returns (a
	// sink that keeps anything of it copies it). It is never nil.
	MessageUpdate struct {
		Message *llm.Message
		Delta   llm.StreamEvent
	}
	// MessageEnd announces a finished message; it will not change again, so the pointer may
	// be kept (never modified).
	MessageEnd struct{ Message *llm.Message }
	// ToolStart is sent before a call is prepared (R4).
	ToolStart struct {
		ToolCallID string
		ToolName   string
		Args       json.RawMessage
	}
	// ToolExecutionStart is sent when a prepared call begins executing: just before its
	// tool's Execute is called, after its ToolStart and before any of its ToolUpdate (see
	// the package comment for the order). Calls that end during the prepare pass never get
	// one.
	ToolExecutionStart struct {
		ToolCallID string
		ToolName   string
	}
	// ToolUpdate is a progress report from a running tool (R9).
	ToolUpdate struct {
		ToolCallID string
		ToolName   string
		Args       json.RawMessage
		Partial    Result
	}
	// ToolEnd is sent when a call is finalized, in completion order in parallel mode (R13).
	ToolEnd struct {
		ToolCallID string
		ToolName   string
		Result     Result
		IsError    bool
		// Message is the call's tool-result message exactly as the transcript will hold it
		// (its MessageStart/MessageEnd come later, in source order, R14), for an observer
		// that must keep each result before the call's end is announced (the session's
		// file). It may be kept (it does not change); it is nil from senders that build no
		// message.
		Message *llm.Message
		// Files are the files the call changed that its result does not describe: a bash
		// call's, and a task call's (what its subagent's bash calls changed), filled by the
		// session layer (nil from the pipeline). Read it during the call only.
		Files []FileText
	}
	// Warning reports something an operator should know that did not stop the run: a
	// failing hook (C2), an unknown name in addedToolNames.
	Warning struct {
		ToolCallID string // empty when not about one call
		Message    string
		// Stack is the goroutine stack of a recovered panic, for the daemon's own log; it is
		// not meant for the editor or the model.
		Stack string
	}
)

func (AgentStart) isEvent()         {}
func (AgentEnd) isEvent()           {}
func (TurnStart) isEvent()          {}
func (TurnEnd) isEvent()            {}
func (MessageStart) isEvent()       {}
func (MessageUpdate) isEvent()      {}
func (MessageEnd) isEvent()         {}
func (ToolStart) isEvent()          {}
func (ToolExecutionStart) isEvent() {}
func (CompactionStart) isEvent()    {}
func (ToolResults) isEvent()        {}
func (CompactionEnd) isEvent()      {}
func (ToolUpdate) isEvent()         {}
func (ToolEnd) isEvent()            {}
func (Warning) isEvent()            {}

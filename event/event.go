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
//	    per tool call: ToolStart ... ToolEnd
//	    MessageStart/MessageEnd per tool-result message, in source order (R14)
//	  TurnEnd
//	  ...
//	AgentEnd
//
// In parallel mode the ToolUpdate and ToolEnd events of different calls come from the
// calls' own goroutines and interleave in completion order (R13); they never overlap in
// time, and every ToolUpdate of a call precedes that call's ToolEnd (R9). ToolStart events
// come in source order, each before its call is prepared (R4). Everything else comes from
// the loop's goroutine. Warning may come from either.
package event

import (
	"encoding/json"

	"github.com/pid-agent/pid/llm"
)

// Event is one of the types below; the set is closed.
type Event interface{ isEvent() }

// Sink receives events.
//
// Contract: called synchronously, never concurrently (see the package comment). It must not
// block for long (the pipeline waits for it), must not call back into the loop or pipeline
// that called it, and must not retain or mutate the slices it is given beyond the call
// unless it copies them (a finished message, from MessageEnd, may be kept). Events whose
// only field is a pointer cost no allocation to send. It cannot fail: an observer with trouble handles it itself.
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
	// Message points at the sender's copy: read it during the call, never modify it.
	MessageStart struct{ Message *llm.Message }
	// MessageUpdate carries a streaming step of an assistant message and a snapshot of the
	// partial message so far (a fresh copy for each update).
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

func (AgentStart) isEvent()    {}
func (AgentEnd) isEvent()      {}
func (TurnStart) isEvent()     {}
func (TurnEnd) isEvent()       {}
func (MessageStart) isEvent()  {}
func (MessageUpdate) isEvent() {}
func (MessageEnd) isEvent()    {}
func (ToolStart) isEvent()     {}
func (ToolUpdate) isEvent()    {}
func (ToolEnd) isEvent()       {}
func (Warning) isEvent()       {}

// This file defines the Provider interface: how the loop asks a model for its next message.

package llm

import (
	"context"
	"encoding/json"
)

// ToolSpec is what a model is told about one tool: its name, a description and the JSON
// Schema of its parameters.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call: the system prompt, the converted history and the active tools.
// The Messages slice is shared with the loop: a provider reads it and never modifies it.
type Request struct {
	SystemPrompt string
	Messages     []Message
	Tools        []ToolSpec
	// CacheKey names the conversation (the session's id), for a provider that can ask its
	// server to route the requests of one conversation to the same prompt cache (OpenAI's
	// prompt_cache_key); "" for none.
	CacheKey string
}

// StreamKind names a streaming step of an assistant message.
type StreamKind string

const (
	StreamStart         StreamKind = "start"
	StreamTextStart     StreamKind = "text_start"
	StreamTextDelta     StreamKind = "text_delta"
	StreamTextEnd       StreamKind = "text_end"
	StreamThinkingStart StreamKind = "thinking_start"
	StreamThinkingDelta StreamKind = "thinking_delta"
	StreamThinkingEnd   StreamKind = "thinking_end"
	StreamToolCallStart StreamKind = "toolcall_start"
	StreamToolCallDelta StreamKind = "toolcall_delta"
	StreamToolCallEnd   StreamKind = "toolcall_end"
)

// StreamEvent is one streaming step: its kind, the index of the content block it concerns
// and, for deltas, what arrived: the text of a text_delta or thinking_delta, the fragment
// of the raw arguments of a toolcall_delta (the fragments of a call, put together, are
// its arguments as the model wrote them).
type StreamEvent struct {
	Kind  StreamKind `json:"type"`
	Index int        `json:"contentIndex"`
	Delta string     `json:"delta,omitempty"`
}

// StreamSink receives the streaming steps of one assistant message together with the
// partial message built so far.
//
// Contract: the provider calls it synchronously on the goroutine that called Stream, one
// call at a time, never after Stream has returned. partial is valid only during the call;
// a sink that keeps it must copy it.
type StreamSink func(partial *Message, ev StreamEvent)

// Provider is a model behind some API.
type Provider interface {
	// Stream asks the model for the next assistant message and returns it whole.
	//
	// Contract: the loop calls Stream once per turn, never concurrently for one run. It
	// must never panic and never report failure any other way than in the message it
	// returns: a failed call returns a message with StopReason StopError and an
	// ErrorMessage a person can act on; a cancelled ctx returns StopAborted promptly.
	// sink may be nil. The returned message has Role RoleAssistant.
	Stream(ctx context.Context, req *Request, sink StreamSink) Message
}

// This file defines the beforeToolCall and afterToolCall hooks and the batch Config.

package toolexec

import (
	"context"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// BeforeInput is what beforeToolCall sees of one call.
type BeforeInput struct {
	Assistant *llm.Message // the message whose calls run (nil for a batch with no model)
	Call      llm.ToolCall // the call as the model wrote it
	Args      any          // the validated arguments
	Context   []llm.Message
}

// Block is beforeToolCall's answer when a call must not run (R7).
type Block struct {
	// Reason is the error result's text; empty means "Tool execution was blocked".
	Reason string
	// Terminate marks the blocked result as asking the loop to stop (R16).
	Terminate bool
}

// BeforeHook decides whether a prepared call may run (R7).
//
// Contract: called during the serial prepare pass, in source order, never concurrently for
// one batch. Return nil to let the call run, a Block to stop it. It may wait (for a person
// to approve) but must return promptly once ctx is cancelled; a call whose run was aborted
// while the hook waited gets "Operation aborted" whatever the hook answered. An error or a
// panic becomes the call's error result naming the hook (C2), and a Warning event.
type BeforeHook func(ctx context.Context, in BeforeInput) (*Block, error)

// AfterInput is what afterToolCall sees of one executed call.
type AfterInput struct {
	Assistant *llm.Message
	Call      llm.ToolCall
	Args      any
	Result    Result
	IsError   bool
	Context   []llm.Message
}

// Override is afterToolCall's partial replacement of a result (R11). Each field that is set
// replaces that field whole; unset fields keep their value; nothing is merged deeply.
type Override struct {
	Content   []llm.Content // nil: keep; an empty non-nil slice replaces with no content
	Details   any           // nil: keep
	IsError   *bool
	Terminate *bool
}

// AfterHook may change the result of an executed call (R11). It does not run for immediate
// outcomes (unknown tool, invalid arguments, blocked, aborted before running).
//
// Contract: in parallel mode it is called concurrently for different calls, each right
// after its call executed. Return nil to keep the result. An error or a panic replaces the
// result with an error result naming the hook (C2) and sends a Warning event.
type AfterHook func(ctx context.Context, in AfterInput) (*Override, error)

// Config is how a batch runs.
type Config struct {
	// Mode is the session's toolExecution; "" means Parallel. A batch calling any tool whose
	// ExecutionMode is Sequential runs sequentially whatever Mode says (R2).
	Mode Mode
	// Before and After are optional; when nil they cost nothing (C1).
	Before BeforeHook
	After  AfterHook
	// Emit receives the batch's events; nil drops them.
	Emit event.Sink
}

// This file defines the beforeToolCall and afterToolCall hooks and the batch Config.

package toolexec

import (
	"context"
	"encoding/json"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// BeforeInput is what beforeToolCall sees of one call.
type BeforeInput struct {
	Assistant *llm.Message // the message whose calls run (nil for a batch with no model)
	Call      llm.ToolCall // the call as the model wrote it
	Args      any          // the validated arguments (Screen's replacement, when it made one)
	Context   []llm.Message
	// Screened is what Screen said of the call: "allow", "ask" or "" (no Screen, or no say).
	Screened string
	// Prepared is the raw JSON of Args: what the tool will run with. beforeToolCall decides
	// on it, not on Call.Arguments, which Screen may have replaced.
	Prepared json.RawMessage
	// ReplacedBy names who replaced the arguments in Screen (Screening.Source), "" when
	// nobody did (Prepared then differs from Call.Arguments only by PrepareArguments).
	ReplacedBy string
}

// ScreenInput is what Screen gets about a validated call.
type ScreenInput struct {
	Assistant *llm.Message
	Call      llm.ToolCall
	Args      json.RawMessage // the arguments after PrepareArguments, validated
	Context   []llm.Message
}

// Screening is Screen's answer about one call.
type Screening struct {
	// Block, when set, ends the call with an error result (as beforeToolCall's Block).
	Block *Block
	// Args, when set, replace the call's arguments; they are validated again against the
	// tool's schema and checked by the tool (Check), and an invalid replacement ends the
	// call with an error result naming Source.
	Args json.RawMessage
	// Verdict is passed on to beforeToolCall as BeforeInput.Screened.
	Verdict string
	// Source names who screened, for the error results it causes.
	Source string
}

// ScreenHook screens a validated call before beforeToolCall (the person's PreToolUse
// hooks): it may block the call, replace its arguments and give beforeToolCall a verdict.
//
// Contract: in parallel mode it is called concurrently for the batch's calls (after every
// call's ToolStart), in sequential mode once per call in turn; it must return promptly once
// ctx is cancelled. An error or a panic becomes the call's error result and a Warning event.
type ScreenHook func(ctx context.Context, in ScreenInput) (*Screening, error)

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
	// Screen is optional; when nil it costs nothing and the prepare pass is as before.
	Screen ScreenHook
	// ScreenWhen, if set, reports (once per batch) whether Screen has work: when it says
	// no, the batch runs as without Screen. Contract: quick, pure, safe for concurrent use.
	ScreenWhen func() bool
	// Emit receives the batch's events; nil drops them.
	Emit event.Sink
}

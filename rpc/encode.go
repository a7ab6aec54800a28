// This file encodes the hot messages by hand: the notifications of a run and pid's approval
// requests. They carry transcript messages and tool results, for which encoding/json's
// reflection cost more than the write to the pipe (see docs/performance.md). Everything else
// (responses, rare notifications) goes through encoding/json. A tool call's arguments reach
// the editor elided past elide.MaxArgs, except in the approval requests.

package rpc

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// note appends `{"jsonrpc":"2.0","method":M,"params":{"sessionId":S` to b; the caller
// appends the other params fields and closes with noteEnd.
func note(b []byte, method, sessionID string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = llm.AppendString(b, method)
	b = append(b, `,"params":{"sessionId":`...)
	return llm.AppendString(b, sessionID)
}

func noteEnd(b []byte) []byte { return append(b, "}}"...) }

// field appends `,"name":` to b.
func field(b []byte, name string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendMessages(b []byte, ms []llm.Message) ([]byte, error) {
	b = append(b, '[')
	for i := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendMessage(b, &ms[i]); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendMessage appends m as the editor gets it: the arguments of a tool call longer than
// elide.MaxArgs elided (see package elide; the transcript keeps them whole).
func appendMessage(b []byte, m *llm.Message) ([]byte, error) {
	if m.Role != llm.RoleAssistant {
		return m.AppendJSON(b)
	}
	for i := range m.Content {
		if c := &m.Content[i]; c.Type == llm.ContentToolCall && len(c.Arguments) > elide.MaxArgs {
			short := *m
			short.Content = slices.Clone(m.Content)
			for j := i; j < len(short.Content); j++ {
				if c := &short.Content[j]; c.Type == llm.ContentToolCall {
					c.Arguments = elide.Args(c.Arguments)
				}
			}
			return short.AppendJSON(b)
		}
	}
	return m.AppendJSON(b)
}

// editorMessages are messages in a response, encoded as appendMessage does.
type editorMessages []llm.Message

func (ms editorMessages) MarshalJSON() ([]byte, error) { return appendMessages(nil, ms) }

// appendResult appends {content, details?}.
func appendResult(b []byte, r event.Result) ([]byte, error) {
	b = append(b, `{"content":`...)
	b, err := llm.AppendContentJSON(b, r.Content)
	if err != nil {
		return b, err
	}
	if r.Details != nil {
		b = field(b, "details")
		if b, err = llm.AppendAny(b, r.Details); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendCall appends the fields every tool notification and request shares.
func appendCall(b []byte, toolCallID, toolName string) []byte {
	b = field(b, "toolCallId")
	b = llm.AppendString(b, toolCallID)
	b = field(b, "toolName")
	return llm.AppendString(b, toolName)
}

// encodeEvent appends the notification for ev, or reports false for events that are not
// notifications of their own.
func encodeEvent(b []byte, sessionID string, ev event.Event) (_ []byte, ok bool, err error) {
	switch e := ev.(type) {
	case event.AgentStart:
		b = note(b, "agentStart", sessionID)
	case event.AgentEnd:
		b = note(b, "agentEnd", sessionID)
		b = field(b, "messages")
		b, err = appendMessages(b, e.Messages)
	case event.TurnStart:
		b = note(b, "turnStart", sessionID)
	case event.TurnEnd:
		b = note(b, "turnEnd", sessionID)
		b = field(b, "message")
		if b, err = appendMessage(b, &e.Message); err == nil {
			b = field(b, "toolResults")
			b, err = appendMessages(b, e.ToolResults)
		}
	case event.MessageStart:
		b = note(b, "messageStart", sessionID)
		b = field(b, "message")
		b, err = appendMessage(b, e.Message)
	case event.MessageEnd:
		b = note(b, "messageEnd", sessionID)
		b = field(b, "message")
		b, err = appendMessage(b, e.Message)
	case event.MessageUpdate:
		elided, skip := argsElided(e.Message, e.Delta)
		if skip {
			return b, false, nil
		}
		b = note(b, "messageUpdate", sessionID)
		b = field(b, "delta")
		b = append(b, `{"type":`...)
		b = llm.AppendString(b, string(e.Delta.Kind))
		b = field(b, "contentIndex")
		b = strconv.AppendInt(b, int64(e.Delta.Index), 10)
		switch {
		case e.Delta.Delta == "":
		case elided:
			b = field(b, "elided")
			b = append(b, "true"...)
		default:
			b = field(b, "delta")
			b = llm.AppendString(b, e.Delta.Delta)
		}
		b = append(b, '}')
		// The partial message goes only with the step that completes a block: with every
		// step it would make the bytes written grow with the square of the answer.
		if blockEnd(e.Delta.Kind) {
			b = field(b, "message")
			b, err = appendMessage(b, e.Message)
		}
	case event.ToolExecutionStart:
		b = note(b, "toolExecutionStart", sessionID)
		b = appendCall(b, e.ToolCallID, e.ToolName)
	case event.CompactionStart:
		b = note(b, "compactionStart", sessionID)
		b = field(b, "reason")
		b = llm.AppendString(b, e.Reason)
	case event.CompactionEnd:
		b = note(b, "compactionEnd", sessionID)
		b = field(b, "reason")
		b = llm.AppendString(b, e.Reason)
		if e.Summary != "" {
			b = field(b, "summary")
			b = llm.AppendString(b, e.Summary)
		}
		b = field(b, "tokensBefore")
		b = strconv.AppendInt(b, int64(e.TokensBefore), 10)
		if e.Kept != nil {
			b = field(b, "kept")
			b, err = llm.AppendAny(b, e.Kept)
		}
		if e.Err != "" {
			b = field(b, "error")
			b = llm.AppendString(b, e.Err)
		}
	case event.ToolStart:
		b = note(b, "toolStart", sessionID)
		b = appendCall(b, e.ToolCallID, e.ToolName)
		b = field(b, "args")
		b, err = llm.AppendRaw(b, elide.Args(e.Args))
	case event.ToolUpdate:
		b = note(b, "$/toolUpdate", sessionID)
		b = appendCall(b, e.ToolCallID, e.ToolName)
		b = field(b, "partialResult")
		b, err = appendResult(b, e.Partial)
	case event.ToolEnd:
		b = note(b, "toolEnd", sessionID)
		b = appendCall(b, e.ToolCallID, e.ToolName)
		b = field(b, "result")
		if b, err = appendResult(b, e.Result); err == nil {
			b = field(b, "isError")
			b = strconv.AppendBool(b, e.IsError)
		}
	default:
		return b, false, nil
	}
	return noteEnd(b), true, err
}

// argsElided says what becomes of a streaming step d of the partial message m: a
// toolcall_delta whose call's arguments are past elide.MaxArgs is elided, and skipped
// (not sent at all) unless it is the one that crossed the limit, which goes with
// "elided": true instead of its text. The editor gets a call's arguments as far as the
// limit, then one word that the rest is left out, whatever the number of steps.
func argsElided(m *llm.Message, d llm.StreamEvent) (elided, skip bool) {
	if d.Kind != llm.StreamToolCallDelta || d.Index < 0 || d.Index >= len(m.Content) {
		return false, false
	}
	n := len(m.Content[d.Index].Arguments)
	if n <= elide.MaxArgs {
		return false, false
	}
	return true, n-len(d.Delta) > elide.MaxArgs
}

// blockEnd reports whether k is the step that completes a content block.
func blockEnd(k llm.StreamKind) bool {
	return k == llm.StreamTextEnd || k == llm.StreamThinkingEnd || k == llm.StreamToolCallEnd
}

// beforeParamsJSON encodes beforeToolCall's params (sandbox: a bash call's escalation out
// of the sandbox); always, annotations and sandbox are omitted
// when nil.
func beforeParamsJSON(sessionID, parentID, toolCallID, toolName string, args json.RawMessage, always *session.Always, annotations map[string]any, esc *session.Escalation) ([]byte, error) {
	b := append([]byte(`{"sessionId":`), llm.AppendString(nil, sessionID)...)
	if parentID != "" {
		// A subagent's call: the editor can show it under its parent's task.
		b = field(b, "parentSessionId")
		b = llm.AppendString(b, parentID)
	}
	b = appendCall(b, toolCallID, toolName)
	b = field(b, "args")
	b, err := llm.AppendRaw(b, args)
	if err == nil && always != nil {
		b = field(b, "always")
		b = append(b, `{"tool":`...)
		b = llm.AppendString(b, always.Tool)
		if always.Pattern != "" {
			b = field(b, "pattern")
			b = llm.AppendString(b, always.Pattern)
		}
		b = field(b, "description")
		b = llm.AppendString(b, always.Description)
		b = append(b, '}')
	}
	if err == nil && annotations != nil {
		b = field(b, "annotations")
		b, err = llm.AppendAny(b, annotations)
	}
	if err == nil && esc != nil {
		b = field(b, "sandbox")
		b = append(b, `{"escalation":true,"justification":`...)
		b = llm.AppendString(b, esc.Justification)
		b = append(b, '}')
	}
	return append(b, '}'), err
}

// afterParamsJSON encodes afterToolCall's params.
func afterParamsJSON(sessionID, toolCallID, toolName string, args json.RawMessage, result event.Result, isError bool) ([]byte, error) {
	b := append([]byte(`{"sessionId":`), llm.AppendString(nil, sessionID)...)
	b = appendCall(b, toolCallID, toolName)
	b = field(b, "args")
	b, err := llm.AppendRaw(b, args)
	if err != nil {
		return b, err
	}
	b = field(b, "result")
	if b, err = appendResult(b, result); err != nil {
		return b, err
	}
	b = field(b, "isError")
	b = strconv.AppendBool(b, isError)
	return append(b, '}'), nil
}

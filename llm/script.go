// This file implements ScriptedProvider, a model whose turns are given in advance.

package llm

import (
	"context"
	"fmt"
	"sync"
)

// Turn is one scripted assistant message. An empty StopReason means StopToolUse when the
// content holds a toolCall and StopEnd otherwise.
type Turn struct {
	Content    []Content  `json:"content"`
	StopReason StopReason `json:"stopReason,omitempty"`
	// ErrorMessage is copied onto the message (useful with StopReason StopError).
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Usage, if set, is the token accounting the message reports, written as
	// {"input", "output", "cacheRead"?, "cacheWrite"?} like a provider's; a zero
	// totalTokens is filled with the sum of the four. Each message gets its own copy.
	Usage *Usage `json:"usage,omitempty"`
}

// usage returns a copy of the turn's usage with its total filled in, or nil.
func (t *Turn) usage() *Usage {
	if t.Usage == nil {
		return nil
	}
	u := *t.Usage
	if u.Total == 0 {
		u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return &u
}

// ScriptedProvider answers each Stream call with the next scripted turn and streams it the
// way a real provider would: start, then per block its start, one delta and its end.
// Running out of turns yields a StopError message that says so.
//
// It is safe for concurrent use, though the loop calls it one turn at a time.
type ScriptedProvider struct {
	// Next returns the turn for call n (0-based, counted from the script's start, so a
	// provider from NewScriptFrom(k, ...) asks for k first), or false when the script is
	// over.
	Next func(n int) (Turn, bool)
	// DoneOnly skips the streaming steps: the message arrives whole, as with pi's
	// "done-only" benchmark model.
	DoneOnly bool

	// first is the index of the turn the first Stream call plays. counted says the
	// constructor knew the number of turns, length.
	first, length int
	counted       bool

	mu sync.Mutex
	n  int
	// over is set once a call found the script over; end is the first such call's index,
	// which is the script's length when length is unknown.
	over bool
	end  int
}

// NewScript returns a provider that plays turns in order.
func NewScript(turns ...Turn) *ScriptedProvider { return NewScriptFrom(0, turns...) }

// NewScriptFrom returns a provider that plays turns in order starting with turns[k]: the
// model of a loaded session whose transcript already records k model calls. A k below 0
// counts as 0; a k at or past the end gives a provider whose every call says the script
// is over. Error text names calls as the script counts them (call k+1 first).
func NewScriptFrom(k int, turns ...Turn) *ScriptedProvider {
	k = max(k, 0)
	return &ScriptedProvider{first: k, length: len(turns), counted: true, Next: func(n int) (Turn, bool) {
		if n < len(turns) {
			return turns[n], true
		}
		return Turn{}, false
	}}
}

// Calls reports how many times Stream has been called on this provider (turns skipped by
// NewScriptFrom are not counted).
func (p *ScriptedProvider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Stream implements Provider.
func (p *ScriptedProvider) Stream(ctx context.Context, _ *Request, sink StreamSink) Message {
	p.mu.Lock()
	n := p.n
	p.n++
	p.mu.Unlock()

	if ctx.Err() != nil {
		return Message{Role: RoleAssistant, Content: []Content{}, StopReason: StopAborted, ErrorMessage: "Operation aborted", Timestamp: Now()}
	}
	n += p.first
	turn, ok := p.Next(n)
	if !ok {
		p.mu.Lock()
		if !p.over || n < p.end {
			p.over, p.end = true, n
		}
		length := p.end
		p.mu.Unlock()
		if p.counted {
			length = p.length
		}
		return Message{
			Role: RoleAssistant, Content: []Content{}, StopReason: StopError, Timestamp: Now(),
			ErrorMessage: fmt.Sprintf("scripted model: no turn left for model call %d (the script has %d turns)", n+1, length),
		}
	}
	stop := turn.StopReason
	if stop == "" {
		stop = StopEnd
		for _, c := range turn.Content {
			if c.Type == ContentToolCall {
				stop = StopToolUse
				break
			}
		}
	}
	final := Message{Role: RoleAssistant, Content: turn.Content, StopReason: stop, ErrorMessage: turn.ErrorMessage, Usage: turn.usage(), Timestamp: Now()}
	if final.Content == nil {
		final.Content = []Content{}
	}
	if sink == nil || p.DoneOnly {
		return final
	}
	partial := Message{Role: RoleAssistant, Content: make([]Content, 0, len(turn.Content)), StopReason: stop, Timestamp: final.Timestamp}
	sink(&partial, StreamEvent{Kind: StreamStart})
	for i, c := range turn.Content {
		var start, delta, end StreamKind
		var text string
		blank := c
		switch c.Type {
		case ContentText:
			start, delta, end, text = StreamTextStart, StreamTextDelta, StreamTextEnd, c.Text
			blank.Text = ""
		case ContentThinking:
			start, delta, end, text = StreamThinkingStart, StreamThinkingDelta, StreamThinkingEnd, c.Thinking
			blank.Thinking = ""
		case ContentToolCall:
			start, delta, end, text = StreamToolCallStart, StreamToolCallDelta, StreamToolCallEnd, string(c.Arguments)
			blank.Arguments = nil
		default:
			partial.Content = append(partial.Content, c)
			continue
		}
		partial.Content = append(partial.Content, blank)
		sink(&partial, StreamEvent{Kind: start, Index: i})
		if ctx.Err() != nil {
			return Message{Role: RoleAssistant, Content: partial.Content, StopReason: StopAborted, ErrorMessage: "Operation aborted", Timestamp: Now()}
		}
		partial.Content[i] = c
		sink(&partial, StreamEvent{Kind: delta, Index: i, Delta: text})
		sink(&partial, StreamEvent{Kind: end, Index: i})
	}
	return final
}

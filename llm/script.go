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
}

// ScriptedProvider answers each Stream call with the next scripted turn and streams it the
// way a real provider would: start, then per block its start, one delta and its end.
// Running out of turns yields a StopError message that says so.
//
// It is safe for concurrent use, though the loop calls it one turn at a time.
type ScriptedProvider struct {
	// Next returns the turn for call n (0-based), or false when the script is over.
	Next func(n int) (Turn, bool)
	// DoneOnly skips the streaming steps: the message arrives whole, as with pi's
	// "done-only" benchmark model.
	DoneOnly bool

	mu sync.Mutex
	n  int
	// over is set once a call found the script over; end is the first such call's index,
	// which is the script's length.
	over bool
	end  int
}

// NewScript returns a provider that plays turns in order.
func NewScript(turns ...Turn) *ScriptedProvider {
	return &ScriptedProvider{Next: func(n int) (Turn, bool) {
		if n < len(turns) {
			return turns[n], true
		}
		return Turn{}, false
	}}
}

// Calls reports how many times Stream has been called.
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
	turn, ok := p.Next(n)
	if !ok {
		p.mu.Lock()
		if !p.over || n < p.end {
			p.over, p.end = true, n
		}
		length := p.end
		p.mu.Unlock()
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
	final := Message{Role: RoleAssistant, Content: turn.Content, StopReason: stop, ErrorMessage: turn.ErrorMessage, Timestamp: Now()}
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

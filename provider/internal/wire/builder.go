// This file assembles a streamed assistant message block by block and reports each step
// to the stream sink, the way llm.ScriptedProvider does: start, then per block its start,
// deltas and end.

package wire

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pid-agent/pid/internal/secret"
	"github.com/pid-agent/pid/llm"
)

// Builder holds the partial assistant message of one Stream call. Blocks are appended in
// the order they first appear; an index returned by Open is the block's index in the
// message's Content and in the StreamEvents about it.
//
// A partial message is valid during the sink's call only (llm.StreamSink's contract): the
// Arguments of an open tool call are the arguments so far closed into valid JSON, kept in
// a buffer the next step rewrites, so that a step costs its own size plus the closing
// suffix, not the size of everything before it. Texts are immutable strings. The message
// Done or Fail returns is never changed afterwards.
//
// Text and thinking pass through the key's Secret (Hide) on their way: what the sink sees,
// the partial message and the message returned hold them redacted, each byte passed on once
// the bytes after it show it is not part of the key (the last ones at the block's end).
type Builder struct {
	msg     llm.Message
	sink    llm.StreamSink
	blocks  []*block
	started bool
	secret  *Secret // nil or inert: text passes as it arrives
}

type block struct {
	open bool
	text strings.Builder // text or thinking so far, as it arrived
	args PartialJSON     // tool-call arguments so far, and their closed form
	// out is the text passed on so far, redacted, and red what remains to pass on (used
	// when the builder hides a key).
	out strings.Builder
	red secret.Stream
}

// NewBuilder returns a builder of an empty assistant message stamped now; sink may be nil.
func NewBuilder(sink llm.StreamSink) *Builder {
	return &Builder{
		msg:  llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{}, StopReason: llm.StopEnd, Timestamp: llm.Now()},
		sink: sink,
	}
}

// Hide makes the builder redact k's key from the text and thinking it passes on. Called
// before the first block opens (Run does, with its Call's key).
func (b *Builder) Hide(k *Secret) {
	if k.Active() {
		b.secret = k
	}
}

func (b *Builder) emit(kind llm.StreamKind, i int, delta string) {
	if b.sink != nil {
		b.sink(&b.msg, llm.StreamEvent{Kind: kind, Index: i, Delta: delta})
	}
}

// Start reports the start of the message, when the stream has begun. Only the first call
// reports it, so a request made again after Reset does not start the message twice.
func (b *Builder) Start() {
	if !b.started {
		b.started = true
		b.emit(llm.StreamStart, 0, "")
	}
}

// Empty reports whether no block has been opened since the builder was made or Reset.
func (b *Builder) Empty() bool { return len(b.blocks) == 0 }

// Reset drops the message's blocks and usage, for a request made again before anything
// but the start reached the sink. It reports nothing; the message keeps its timestamp.
func (b *Builder) Reset() {
	b.msg.Content = []llm.Content{}
	b.msg.Usage = nil
	b.blocks = nil
}

// Open appends an empty block of type t (text, thinking or toolCall; id and name are for
// tool calls), reports its start and returns its index.
func (b *Builder) Open(t llm.ContentType, id, name string) int {
	c := llm.Content{Type: t}
	if t == llm.ContentToolCall {
		c.ID, c.Name = id, name
	}
	b.msg.Content = append(b.msg.Content, c)
	b.blocks = append(b.blocks, &block{open: true, red: secret.Stream{K: b.secret, With: Redacted}})
	i := len(b.msg.Content) - 1
	switch t {
	case llm.ContentText:
		b.emit(llm.StreamTextStart, i, "")
	case llm.ContentThinking:
		b.emit(llm.StreamThinkingStart, i, "")
	case llm.ContentToolCall:
		b.emit(llm.StreamToolCallStart, i, "")
	}
	return i
}

// IsOpen reports whether block i exists and has not been closed.
func (b *Builder) IsOpen(i int) bool { return i >= 0 && i < len(b.blocks) && b.blocks[i].open }

// Block returns block i of the partial message, so a caller can fill in a tool call's id
// or name that arrived after its start. It must not be kept.
func (b *Builder) Block(i int) *llm.Content { return &b.msg.Content[i] }

// Append adds delta to open block i and reports it. For a tool call the partial Arguments
// become the arguments so far closed into valid JSON (see PartialJSON), or stay as they were
// when nothing valid can be made yet. An empty delta, or one for a closed block, is ignored.
func (b *Builder) Append(i int, delta string) {
	if delta == "" || !b.IsOpen(i) {
		return
	}
	blk, c := b.blocks[i], &b.msg.Content[i]
	switch c.Type {
	case llm.ContentText, llm.ContentThinking:
		blk.text.WriteString(delta)
		b.passText(i, false)
	case llm.ContentToolCall:
		blk.args.WriteString(delta)
		if closed := blk.args.Closed(); closed != nil {
			c.Arguments = closed
		}
		b.emit(llm.StreamToolCallDelta, i, delta)
	}
}

// Close ends open block i and reports it. A tool call's Arguments become FinalArgs of
// everything that arrived.
func (b *Builder) Close(i int) {
	if !b.IsOpen(i) {
		return
	}
	b.blocks[i].open = false
	c := &b.msg.Content[i]
	switch c.Type {
	case llm.ContentText, llm.ContentThinking:
		b.passText(i, true)
	}
	switch c.Type {
	case llm.ContentText:
		b.emit(llm.StreamTextEnd, i, "")
	case llm.ContentThinking:
		b.emit(llm.StreamThinkingEnd, i, "")
	case llm.ContentToolCall:
		c.Arguments = FinalArgs(b.blocks[i].args.Raw())
		b.emit(llm.StreamToolCallEnd, i, "")
	}
}

// passText passes on what can be passed of text or thinking block i: all of it when no key
// is hidden or flush is set (the block ends), else all but the bytes that may still turn
// out to be part of the key. It updates the partial message and reports the delta.
func (b *Builder) passText(i int, flush bool) {
	blk, c := b.blocks[i], &b.msg.Content[i]
	var delta, text string
	if b.secret == nil {
		if flush {
			return
		}
		text = blk.text.String()
		delta = blk.red.Next(text, false)
	} else {
		delta = blk.red.Next(blk.text.String(), flush)
		blk.out.WriteString(delta)
		text = blk.out.String()
	}
	if delta == "" {
		return
	}
	kind := llm.StreamTextDelta
	if c.Type == llm.ContentText {
		c.Text = text
	} else {
		c.Thinking = text
		kind = llm.StreamThinkingDelta
	}
	if b.sink != nil {
		b.emit(kind, i, delta)
	}
}

// CloseAll closes every open block in index order.
func (b *Builder) CloseAll() {
	for i := range b.blocks {
		b.Close(i)
	}
}

// HasToolCalls reports whether the message holds a toolCall block.
func (b *Builder) HasToolCalls() bool {
	for _, c := range b.msg.Content {
		if c.Type == llm.ContentToolCall {
			return true
		}
	}
	return false
}

// SetUsage records the token accounting.
func (b *Builder) SetUsage(u llm.Usage) { b.msg.Usage = &u }

// Done closes the open blocks (reporting their ends) and returns the message with stop.
func (b *Builder) Done(stop llm.StopReason) llm.Message {
	b.CloseAll()
	b.msg.StopReason = stop
	return b.msg
}

// Fail returns the message so far with stop (StopError or StopAborted) and text, without
// reporting anything more. Open tool calls keep the valid partial Arguments they have.
func (b *Builder) Fail(stop llm.StopReason, text string) llm.Message {
	for i, blk := range b.blocks {
		c := &b.msg.Content[i]
		if blk.open && b.secret != nil && (c.Type == llm.ContentText || c.Type == llm.ContentThinking) {
			// The text held back is kept, redacted, without being reported.
			blk.out.WriteString(blk.red.Next(blk.text.String(), true))
			if c.Type == llm.ContentText {
				c.Text = blk.out.String()
			} else {
				c.Thinking = blk.out.String()
			}
		}
		blk.open = false
		switch {
		case c.Type != llm.ContentToolCall:
		case len(c.Arguments) == 0:
			c.Arguments = json.RawMessage("{}")
		default:
			// The partial arguments live in the block's buffer: the message returned gets
			// its own copy.
			c.Arguments = bytes.Clone(c.Arguments)
		}
	}
	b.msg.StopReason = stop
	b.msg.ErrorMessage = text
	return b.msg
}

// FinalArgs returns the arguments of a finished tool call: {} when none arrived, the JSON
// as it arrived when it is valid, and otherwise the text that arrived as a JSON string, so
// the message stays encodable and the tool's schema validation rejects the call with the
// text the model wrote (an object schema does not accept a string).
func FinalArgs(acc []byte) json.RawMessage {
	t := bytes.TrimSpace(acc)
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(t) {
		return json.RawMessage(bytes.Clone(t))
	}
	s, _ := json.Marshal(string(acc))
	return s
}

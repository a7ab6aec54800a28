// This file reads a Messages API event stream into the assistant message.

package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// streamEvent is the data of any event; its type is in the data too (the "event:" line
// repeats it), so the data alone decides.
type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *usage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
		Data     string          `json:"data"` // of a redacted_thinking block
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// usage holds the token counts; a count a message_delta leaves out keeps its earlier value.
type usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// open is a content block of the stream that has a block in the message.
type open struct {
	block     int             // index in the message
	signature string          // of a thinking block
	input     json.RawMessage // the input a tool_use block started with
	deltas    bool            // whether input_json_delta arrived
}

// decoder maps the API's content blocks (by their stream index) to message blocks. A
// redacted_thinking block is a thinking block marked Redacted, its data kept as the
// signature; block types pid has no place for (server tool blocks) are skipped.
type decoder struct {
	b    *wire.Builder
	info *wire.Info
	sigs *signatures

	blocks  map[int]*open
	usage   llm.Usage
	stop    string
	sawStop bool
}

func newDecoder(b *wire.Builder, info *wire.Info, sigs *signatures) *decoder {
	return &decoder{b: b, info: info, sigs: sigs, blocks: map[int]*open{}}
}

// Event implements wire.Decoder.
func (d *decoder) Event(ev wire.Event) (bool, string) {
	if strings.TrimSpace(ev.Data) == "" {
		return false, "" // an empty keep-alive
	}
	var e streamEvent
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		if ev.Name == "error" {
			return false, d.info.StreamError("", wire.Excerpt(ev.Data, 300))
		}
		return false, d.info.Malformed(err.Error(), ev.Data)
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			d.addUsage(e.Message.Usage)
		}
	case "content_block_start":
		if e.ContentBlock == nil {
			return false, d.info.Malformed("content_block_start without content_block", ev.Data)
		}
		cb := e.ContentBlock
		switch cb.Type {
		case "text":
			o := &open{block: d.b.Open(llm.ContentText, "", "")}
			d.blocks[e.Index] = o
			d.b.Append(o.block, cb.Text)
		case "thinking":
			o := &open{block: d.b.Open(llm.ContentThinking, "", "")}
			d.blocks[e.Index] = o
			d.b.Append(o.block, cb.Thinking)
		case "tool_use":
			d.blocks[e.Index] = &open{block: d.b.Open(llm.ContentToolCall, cb.ID, cb.Name), input: cb.Input}
		case "redacted_thinking":
			// Complete in its start event: it goes back to the API as it came.
			i := d.b.Open(llm.ContentThinking, "", "")
			c := d.b.Block(i)
			c.Signature, c.Redacted = cb.Data, true
			d.b.Close(i)
		}
	case "content_block_delta":
		o := d.blocks[e.Index]
		if o == nil || e.Delta == nil {
			return false, ""
		}
		switch e.Delta.Type {
		case "text_delta":
			d.b.Append(o.block, e.Delta.Text)
		case "thinking_delta":
			d.b.Append(o.block, e.Delta.Thinking)
		case "input_json_delta":
			o.deltas = true
			d.b.Append(o.block, e.Delta.PartialJSON)
		case "signature_delta":
			o.signature += e.Delta.Signature
			d.b.Block(o.block).Signature = o.signature
		}
	case "content_block_stop":
		o := d.blocks[e.Index]
		if o == nil {
			return false, ""
		}
		c := d.b.Block(o.block)
		if c.Type == llm.ContentToolCall && !o.deltas && len(o.input) > 0 && string(o.input) != "{}" {
			// A server that sends the whole input in the start event.
			d.b.Append(o.block, string(o.input))
		}
		d.b.Close(o.block)
		if c = d.b.Block(o.block); c.Type == llm.ContentThinking {
			// After Close: the thinking is complete only then (the builder holds back its
			// last bytes while they might be part of the key).
			d.sigs.put(c.Thinking, o.signature)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			d.stop, d.sawStop = e.Delta.StopReason, true
		}
		d.addUsage(e.Usage)
	case "message_stop":
		return true, ""
	case "error":
		if e.Error == nil {
			return false, d.info.StreamError("", wire.Excerpt(ev.Data, 300))
		}
		return false, d.info.StreamError(e.Error.Type, e.Error.Message)
	}
	return false, ""
}

func (d *decoder) addUsage(u *usage) {
	if u == nil {
		return
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&d.usage.Input, u.InputTokens)
	set(&d.usage.Output, u.OutputTokens)
	set(&d.usage.CacheWrite, u.CacheCreationInputTokens)
	set(&d.usage.CacheRead, u.CacheReadInputTokens)
	d.usage.Total = d.usage.Input + d.usage.Output + d.usage.CacheRead + d.usage.CacheWrite
	d.b.SetUsage(d.usage)
}

// End implements wire.Decoder. The stream is complete after message_stop or, for servers
// that omit it, once message_delta brought the stop reason.
func (d *decoder) End(terminal bool) (llm.StopReason, string, bool) {
	if !terminal && !d.sawStop {
		return "", "", false
	}
	switch d.stop {
	case "tool_use":
		return llm.StopToolUse, "", true
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopLength, "", true
	case "refusal":
		return llm.StopError, fmt.Sprintf("Model %q declined to answer (stop_reason refusal). Rephrase the request.", d.info.Model), true
	}
	// end_turn, stop_sequence, pause_turn and reasons added later.
	if d.b.HasToolCalls() {
		return llm.StopToolUse, "", true
	}
	return llm.StopEnd, "", true
}

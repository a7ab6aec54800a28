// This file reads a Responses API event stream into the assistant message.

package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// responsesEvent is the data of any event; its type is in the data (the "event:" line
// repeats it).
type responsesEvent struct {
	Type        string `json:"type"`
	OutputIndex int    `json:"output_index"`
	// SummaryIndex is the part of a reasoning summary a delta belongs to.
	SummaryIndex int `json:"summary_index"`
	// Delta is a string for every event pid reads; another event's may be anything.
	Delta     json.RawMessage `json:"delta"`
	Arguments string          `json:"arguments"`
	// Item is the item of output_item.added and output_item.done, kept raw: a reasoning
	// item goes back whole.
	Item     json.RawMessage  `json:"item"`
	Response *responsesResult `json:"response"`
	// Code and Message are an "error" event's.
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responsesResult struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		TotalTokens        int `json:"total_tokens"`
		InputTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// outputItem is what pid reads of an output item.
type outputItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent *string `json:"encrypted_content"`
}

// item is an output item that has a block in the message.
type item struct {
	block   int
	kind    string // the item's type
	deltas  bool   // whether any text, summary or arguments delta arrived
	summary int    // the summary part the last summary delta belonged to
}

// responsesDecoder maps output items (by output_index) to message blocks: a message item
// to a text block, a reasoning item to a thinking block whose Signature is the item to send
// back (ReasoningItem), a function_call to a toolCall block. Other items (built-in tools)
// are skipped.
type responsesDecoder struct {
	b    *wire.Builder
	info *wire.Info

	items   map[int]*item
	stop    llm.StopReason
	errText string
	done    bool
}

func newResponsesDecoder(b *wire.Builder, info *wire.Info) *responsesDecoder {
	return &responsesDecoder{b: b, info: info, items: map[int]*item{}}
}

// Event implements wire.Decoder.
func (d *responsesDecoder) Event(ev wire.Event) (bool, string) {
	data := strings.TrimSpace(ev.Data)
	if data == "" || data == "[DONE]" {
		return data == "[DONE]" && d.done, ""
	}
	var e responsesEvent
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		if ev.Name == "error" {
			return false, d.info.StreamError("", wire.Excerpt(ev.Data, 300))
		}
		return false, d.info.Malformed(err.Error(), ev.Data)
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "response.output_item.added":
		var it outputItem
		if json.Unmarshal(e.Item, &it) != nil {
			return false, d.info.Malformed("an output item that is not an object", ev.Data)
		}
		d.open(e.OutputIndex, &it)
	case "response.output_text.delta", "response.refusal.delta":
		d.text(e.OutputIndex, "message", deltaText(e.Delta))
	case "response.reasoning_summary_text.delta":
		it := d.text(e.OutputIndex, "reasoning", "")
		if it.deltas && e.SummaryIndex != it.summary {
			d.b.Append(it.block, "\n\n")
		}
		it.summary = e.SummaryIndex
		d.b.Append(it.block, deltaText(e.Delta))
		it.deltas = true
	case "response.reasoning_text.delta":
		d.text(e.OutputIndex, "reasoning", deltaText(e.Delta))
	case "response.function_call_arguments.delta":
		if it := d.items[e.OutputIndex]; it != nil && it.kind == "function_call" {
			d.b.Append(it.block, deltaText(e.Delta))
			it.deltas = true
		}
	case "response.function_call_arguments.done":
		if it := d.items[e.OutputIndex]; it != nil && it.kind == "function_call" && !it.deltas {
			d.b.Append(it.block, e.Arguments)
			it.deltas = true
		}
	case "response.output_item.done":
		var it outputItem
		if json.Unmarshal(e.Item, &it) != nil {
			return false, d.info.Malformed("an output item that is not an object", ev.Data)
		}
		d.finish(e.OutputIndex, &it, e.Item)
	case "response.completed":
		d.done = true
		d.usage(e.Response)
		d.stop = llm.StopEnd
		return true, ""
	case "response.incomplete":
		d.done = true
		d.usage(e.Response)
		reason := ""
		if e.Response != nil && e.Response.IncompleteDetails != nil {
			reason = e.Response.IncompleteDetails.Reason
		}
		switch reason {
		case "content_filter":
			d.stop = llm.StopError
			d.errText = fmt.Sprintf("%s stopped the answer with its content filter (incomplete: content_filter). Rephrase the request.", d.info.Subject())
		default: // max_output_tokens
			d.stop = llm.StopLength
		}
		return true, ""
	case "response.failed":
		if e.Response != nil && e.Response.Error != nil {
			return false, d.info.StreamError(e.Response.Error.Code, e.Response.Error.Message)
		}
		return false, d.info.StreamError("response.failed", "")
	case "error":
		if e.Code != "" || e.Message != "" {
			return false, d.info.StreamError(e.Code, e.Message)
		}
		if se, ok := wire.ParseServerError([]byte(data)); ok {
			return false, d.info.StreamError(se.Type, se.Message)
		}
		return false, d.info.StreamError("", wire.Excerpt(ev.Data, 300))
	}
	return false, ""
}

// open gives an output item its block.
func (d *responsesDecoder) open(index int, it *outputItem) *item {
	if o := d.items[index]; o != nil {
		return o
	}
	var o *item
	switch it.Type {
	case "message":
		o = &item{block: d.b.Open(llm.ContentText, "", ""), kind: it.Type}
	case "reasoning":
		o = &item{block: d.b.Open(llm.ContentThinking, "", ""), kind: it.Type}
	case "function_call":
		id := it.CallID
		if id == "" {
			id = newCallID()
		}
		o = &item{block: d.b.Open(llm.ContentToolCall, id, it.Name), kind: it.Type}
	default:
		return nil
	}
	d.items[index] = o
	return o
}

// text appends s to the text or thinking block of output item index, opening it as kind
// when its added event did not come.
func (d *responsesDecoder) text(index int, kind, s string) *item {
	it := d.items[index]
	if it == nil {
		it = d.open(index, &outputItem{Type: kind})
	}
	if s != "" {
		d.b.Append(it.block, s)
		it.deltas = true
	}
	return it
}

// finish closes an output item's block, completed from the item when no delta brought its
// content, and keeps a reasoning item whole as its thinking block's Signature.
func (d *responsesDecoder) finish(index int, it *outputItem, raw json.RawMessage) {
	o := d.items[index]
	if o == nil {
		if o = d.open(index, it); o == nil {
			return
		}
	}
	if !o.deltas {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				d.b.Append(o.block, c.Text+c.Refusal)
			}
		case "reasoning":
			for i, s := range it.Summary {
				if i > 0 {
					d.b.Append(o.block, "\n\n")
				}
				d.b.Append(o.block, s.Text)
			}
		case "function_call":
			d.b.Append(o.block, it.Arguments)
		}
	}
	if it.Type == "reasoning" && it.EncryptedContent != nil && *it.EncryptedContent != "" {
		d.b.Block(o.block).Signature = string(replayable(raw))
	}
	d.b.Close(o.block)
}

// replayable is a reasoning item as it goes back in a later request: its type, summary and
// encrypted content, as they came. Its id and status are left out (with store false the
// server keeps no item an id could name), and so is any raw reasoning text (content), which
// the API does not take back.
func replayable(raw json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw
	}
	kept := map[string]json.RawMessage{}
	for _, k := range []string{"type", "summary", "encrypted_content"} {
		if v, ok := fields[k]; ok {
			kept[k] = v
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return raw
	}
	return b
}

func (d *responsesDecoder) usage(r *responsesResult) {
	if r == nil || r.Usage == nil {
		return
	}
	u := r.Usage
	cached := 0
	if u.InputTokensDetails != nil {
		cached = u.InputTokensDetails.CachedTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	d.b.SetUsage(llm.Usage{Input: u.InputTokens - cached, Output: u.OutputTokens, CacheRead: cached, Total: total})
}

// End implements wire.Decoder. The stream is complete after response.completed or
// response.incomplete.
func (d *responsesDecoder) End(bool) (llm.StopReason, string, bool) {
	if !d.done {
		return "", "", false
	}
	if d.stop == llm.StopEnd && d.b.HasToolCalls() {
		return llm.StopToolUse, "", true
	}
	return d.stop, d.errText, true
}

// deltaText is a delta's text: its string value, "" for anything else.
func deltaText(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

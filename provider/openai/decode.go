// This file reads a chat-completions event stream into the assistant message.

package openai

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// chunk is one "data:" event: a chat.completion.chunk, or an error object.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			Refusal          *string `json:"refusal"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
					// Arguments is a JSON string of argument text; a few servers send
					// the arguments object itself, which is taken as its JSON.
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// decoder maps chunks to blocks. Text and reasoning deltas extend the current block of
// their kind or open a new one (closing the other kind's); tool-call fragments are matched
// to their call by index (or id, for servers that give every call index 0 or none), and
// tool calls stay open until the stream ends, since fragments of parallel calls may
// interleave.
type decoder struct {
	b    *wire.Builder
	info *wire.Info

	cur       int // the open text or thinking block, or -1
	byIndex   map[int]int
	byID      map[string]int
	lastCall  int // the tool call fragments without index or id belong to, or -1
	finish    string
	sawFinish bool
}

func newDecoder(b *wire.Builder, info *wire.Info) *decoder {
	return &decoder{b: b, info: info, cur: -1, byIndex: map[int]int{}, byID: map[string]int{}, lastCall: -1}
}

// Event implements wire.Decoder.
func (d *decoder) Event(ev wire.Event) (bool, string) {
	data := strings.TrimSpace(ev.Data)
	switch data {
	case "[DONE]":
		return true, ""
	case "":
		return false, "" // an empty keep-alive
	}
	if ev.Name == "error" {
		if se, ok := wire.ParseServerError([]byte(ev.Data)); ok {
			return false, d.info.StreamError(se.Type, se.Message)
		}
		return false, d.info.StreamError("", wire.Excerpt(ev.Data, 300))
	}
	var c chunk
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		return false, d.info.Malformed(err.Error(), ev.Data)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		se, _ := wire.ParseServerError([]byte(ev.Data))
		return false, d.info.StreamError(se.Type, se.Message)
	}
	if u := c.Usage; u != nil {
		cached := 0
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		d.b.SetUsage(llm.Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens, CacheRead: cached, Total: total})
	}
	if len(c.Choices) == 0 {
		return false, ""
	}
	ch := &c.Choices[0]
	delta := &ch.Delta
	switch {
	case delta.ReasoningContent != nil && *delta.ReasoningContent != "":
		d.flow(llm.ContentThinking, *delta.ReasoningContent)
	case delta.Reasoning != nil && *delta.Reasoning != "":
		d.flow(llm.ContentThinking, *delta.Reasoning)
	}
	if delta.Content != nil && *delta.Content != "" {
		d.flow(llm.ContentText, *delta.Content)
	}
	if delta.Refusal != nil && *delta.Refusal != "" {
		d.flow(llm.ContentText, *delta.Refusal)
	}
	for _, tc := range delta.ToolCalls {
		i := d.call(tc.Index, tc.ID, tc.Function.Name)
		blk := d.b.Block(i)
		if blk.ID == "" && tc.ID != "" {
			blk.ID = tc.ID
		}
		if blk.Name == "" && tc.Function.Name != "" {
			blk.Name = tc.Function.Name
		}
		d.b.Append(i, argumentText(tc.Function.Arguments))
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		d.finish, d.sawFinish = *ch.FinishReason, true
	}
	return false, ""
}

// flow appends text or reasoning to the current block of that kind, opening one first.
func (d *decoder) flow(t llm.ContentType, s string) {
	if d.cur < 0 || d.b.Block(d.cur).Type != t || !d.b.IsOpen(d.cur) {
		if d.cur >= 0 {
			d.b.Close(d.cur)
		}
		d.cur = d.b.Open(t, "", "")
	}
	d.b.Append(d.cur, s)
}

// call returns the block of the tool call a fragment belongs to, opening it when the
// fragment starts a new call. A call without an id gets a generated one.
func (d *decoder) call(index *int, id, name string) int {
	if id != "" {
		if i, ok := d.byID[id]; ok {
			d.lastCall = i
			return i
		}
	}
	if index != nil {
		if i, ok := d.byIndex[*index]; ok && (id == "" || d.b.Block(i).ID == "") {
			d.lastCall = i
			return i
		}
	} else if id == "" && d.lastCall >= 0 {
		return d.lastCall
	}
	if d.cur >= 0 {
		d.b.Close(d.cur)
		d.cur = -1
	}
	if id == "" {
		id = newCallID()
	}
	i := d.b.Open(llm.ContentToolCall, id, name)
	d.byID[id] = i
	if index != nil {
		d.byIndex[*index] = i
	}
	d.lastCall = i
	return i
}

// End implements wire.Decoder. The stream is complete after [DONE] or, for servers that
// omit it, once a finish_reason arrived. A "stop" with tool calls is taken as "tool_calls",
// as some local servers send it.
func (d *decoder) End(terminal bool) (llm.StopReason, string, bool) {
	if !terminal && !d.sawFinish {
		return "", "", false
	}
	switch d.finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse, "", true
	case "length":
		return llm.StopLength, "", true
	case "content_filter":
		return llm.StopError, fmt.Sprintf("%s stopped the answer with its content filter (finish_reason content_filter). Rephrase the request.", d.info.Subject()), true
	case "error":
		return llm.StopError, d.info.StreamError("finish_reason", "error"), true
	}
	if d.b.HasToolCalls() {
		return llm.StopToolUse, "", true
	}
	return llm.StopEnd, "", true
}

// argumentText is the argument text of a fragment: the string's value, or the JSON of an
// object sent in its place.
func argumentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

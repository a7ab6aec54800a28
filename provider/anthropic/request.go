// This file writes an llm.Request as a streaming Messages API request body.

package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

type messagesRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []*block    `json:"system,omitempty"`
	Messages  []message   `json:"messages"`
	Tools     []tool      `json:"tools,omitempty"`
	Thinking  *thinkingOn `json:"thinking,omitempty"`
	Stream    bool        `json:"stream"`
}

type thinkingOn struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type message struct {
	Role    string   `json:"role"`
	Content []*block `json:"content"`
}

// block is a content block of any type; the fields of other types stay empty and are
// left out. Content (of a tool_result) and Input (of a tool_use) are always written for
// their types, so they are set only there.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"` // of a redacted_thinking block
	Source       *imageSource    `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []*block        `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// emptySchema is the schema of a tool that declares no parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// noOutput stands in for a tool result with no content.
const noOutput = "(no output)"

// body returns the request body for req, asking for at most maxTokens. The system prompt and the last message carry
// cache_control breakpoints, so a conversation's prefix is read from Anthropic's prompt
// cache on the next turn.
func (p *Provider) body(req *llm.Request, maxTokens int) ([]byte, error) {
	mr := messagesRequest{
		Model:     p.opts.Model,
		MaxTokens: maxTokens,
		Messages:  p.convertMessages(req.Messages),
		Stream:    true,
	}
	if mr.Messages == nil {
		mr.Messages = []message{}
	}
	if req.SystemPrompt != "" {
		mr.System = []*block{{Type: "text", Text: req.SystemPrompt, CacheControl: ephemeral()}}
	}
	if p.opts.ThinkingBudget > 0 && !unthoughtToolLoop(mr.Messages) {
		mr.Thinking = &thinkingOn{Type: "enabled", BudgetTokens: p.opts.ThinkingBudget}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
			schema = emptySchema
		}
		mr.Tools = append(mr.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(mr.Messages); n > 0 {
		last := mr.Messages[n-1].Content
		switch b := last[len(last)-1]; b.Type {
		case "text", "image", "tool_result":
			b.CacheControl = ephemeral()
		}
	}
	return json.Marshal(mr)
}

// unthoughtToolLoop reports whether msgs end in a tool loop whose last assistant message does
// not start with thinking (it was made with thinking off, or by another provider): with
// thinking on, the API rejects such a request, so it goes without thinking until the loop
// ends (thinking cannot be turned on in the middle of a tool loop).
func unthoughtToolLoop(msgs []message) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" || msgs[n-2].Role != "assistant" || len(msgs[n-2].Content) == 0 {
		return false
	}
	results := false
	for _, b := range msgs[n-1].Content {
		results = results || b.Type == "tool_result"
	}
	switch msgs[n-2].Content[0].Type {
	case "thinking", "redacted_thinking":
		return false
	}
	return results
}

func ephemeral() *cacheControl { return &cacheControl{Type: "ephemeral"} }

// convertMessages writes the history (see wire.History for what is left out) as Messages
// API messages:
//
//   - user: text blocks (blank ones left out, as the API rejects them) and base64 images;
//   - assistant: text blocks (blank ones left out), thinking blocks as thinkingBlock
//     writes them, and tool_use blocks whose input is the arguments object;
//   - toolResult: a tool_result block in a user message; the results of one batch share
//     a user message, as the API asks.
//
// Messages of the same role in a row are merged into one. Tool ids are reduced to the
// characters the API accepts, the same way for a call and its result.
func (p *Provider) convertMessages(history []llm.Message) []message {
	var out []message
	add := func(role string, blocks []*block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	for _, m := range wire.History(history) {
		switch m.Role {
		case llm.RoleUser:
			add("user", userBlocks(m.Content))
		case llm.RoleAssistant:
			var blocks []*block
			for _, c := range m.Content {
				switch c.Type {
				case llm.ContentText:
					if strings.TrimSpace(c.Text) != "" {
						blocks = append(blocks, &block{Type: "text", Text: c.Text})
					}
				case llm.ContentThinking:
					if b := p.thinkingBlock(c); b != nil {
						blocks = append(blocks, b)
					}
				case llm.ContentToolCall:
					blocks = append(blocks, &block{Type: "tool_use", ID: toolID(c.ID), Name: c.Name, Input: inputObject(c.Arguments)})
				}
			}
			add("assistant", blocks)
		case llm.RoleToolResult:
			content := userBlocks(m.Content)
			if len(content) == 0 {
				content = []*block{{Type: "text", Text: noOutput}}
			}
			add("user", []*block{{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: content, IsError: m.IsError}})
		}
	}
	return out
}

// thinkingBlock writes a thinking block of the history: with its signature (the block's
// own, else one remembered for its text) as the API requires it back; a redacted one as
// redacted_thinking with its data; without a signature of Anthropic's (thinking another
// model did, an OpenAI reasoning item's summary) as text, since the API rejects an unsigned
// thinking block. nil for a blank one.
func (p *Provider) thinkingBlock(c llm.Content) *block {
	// Another API's token (an OpenAI reasoning item, a JSON object) is no signature of
	// Anthropic's, which are base64.
	signed := c.Signature != "" && !strings.HasPrefix(c.Signature, "{")
	switch {
	case c.Redacted && signed:
		return &block{Type: "redacted_thinking", Data: c.Signature}
	case strings.TrimSpace(c.Thinking) == "":
		return nil
	case signed:
		return &block{Type: "thinking", Thinking: c.Thinking, Signature: c.Signature}
	}
	if sig, ok := p.sigs.get(c.Thinking); ok {
		return &block{Type: "thinking", Thinking: c.Thinking, Signature: sig}
	}
	return &block{Type: "text", Text: c.Thinking}
}

// userBlocks converts text and image blocks, leaving out blank text (the API rejects it).
func userBlocks(cs []llm.Content) []*block {
	var out []*block
	for _, c := range cs {
		switch c.Type {
		case llm.ContentText:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, &block{Type: "text", Text: c.Text})
			}
		case llm.ContentImage:
			out = append(out, &block{Type: "image", Source: &imageSource{Type: "base64", MediaType: c.MimeType, Data: c.Data}})
		}
	}
	return out
}

// inputObject is a tool call's arguments as the input object the API wants: the JSON when
// it is an object, {} otherwise (arguments the model wrote badly, kept as a string).
func inputObject(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// toolID returns id with every character outside [a-zA-Z0-9_-] replaced by '_', cut to
// 64 characters, as the API requires of tool_use ids.
func toolID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

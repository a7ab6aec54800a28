// This file writes an llm.Request as a streaming chat-completions request body.

package openai

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one message of any role. Content is a string, a []part, or nil (null,
// for an assistant message that only calls tools).
type chatMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name string `json:"name"`
	// Arguments is the JSON of the arguments as a string, as the API wants it.
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function toolSpecJSON `json:"function"`
}

type toolSpecJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is the schema of a tool that declares no parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// imagesFromTools introduces the user message that carries a tool result's images, which
// a tool message cannot hold.
const imagesFromTools = "Attached image(s) from tool result:"

// body returns the chat-completions request body for req.
func (p *Provider) body(req *llm.Request) ([]byte, error) {
	cr := chatRequest{
		Model:           p.opts.Model,
		Messages:        convertMessages(req.SystemPrompt, req.Messages),
		Stream:          true,
		StreamOptions:   &streamOptions{IncludeUsage: true},
		ReasoningEffort: p.opts.ReasoningEffort,
	}
	if p.opts.PromptCacheKey {
		cr.PromptCacheKey = req.CacheKey
	}
	if p.opts.MaxTokens > 0 {
		if u, err := url.Parse(p.opts.BaseURL); err == nil && isOpenAI(u) {
			cr.MaxCompletionTokens = p.opts.MaxTokens
		} else {
			cr.MaxTokens = p.opts.MaxTokens
		}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = emptySchema
		}
		cr.Tools = append(cr.Tools, chatTool{Type: "function", Function: toolSpecJSON{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return json.Marshal(cr)
}

// convertMessages writes the system prompt and the history (see wire.History for what is
// left out) as chat messages:
//
//   - user: a string when it is all text, else text and image_url parts (images as data URLs);
//   - assistant: its text as a string (null when there is none) and its tool calls with
//     their arguments as a JSON string; thinking is not sent back;
//   - toolResult: a "tool" message with tool_call_id and the result's text (an error's
//     after ErrorPrefix). Images of a run of tool results follow the run in one user
//     message, since nothing may come between an assistant's tool calls and their tool
//     messages.
func convertMessages(system string, history []llm.Message) []chatMessage {
	var out []chatMessage
	if system != "" {
		out = append(out, chatMessage{Role: "system", Content: system})
	}
	var images []part // images of the current run of tool results
	flush := func() {
		if len(images) > 0 {
			out = append(out, chatMessage{Role: "user", Content: append([]part{{Type: "text", Text: imagesFromTools}}, images...)})
			images = nil
		}
	}
	for _, m := range wire.History(history) {
		if m.Role != llm.RoleToolResult {
			flush()
		}
		switch m.Role {
		case llm.RoleUser:
			if c, ok := userContent(m.Content); ok {
				out = append(out, chatMessage{Role: "user", Content: c})
			}
		case llm.RoleAssistant:
			msg := chatMessage{Role: "assistant"}
			if text := m.Text(); text != "" {
				msg.Content = text
			}
			for _, c := range m.Content {
				if c.Type == llm.ContentToolCall {
					msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: toolFunction{Name: c.Name, Arguments: argumentsString(c.Arguments)}})
				}
			}
			if msg.Content == nil && len(msg.ToolCalls) == 0 {
				continue
			}
			out = append(out, msg)
		case llm.RoleToolResult:
			for _, c := range m.Content {
				if c.Type == llm.ContentImage {
					images = append(images, imagePart(c))
				}
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: toolText(m)})
		}
	}
	flush()
	return out
}

// ErrorPrefix starts the text of an error result (a failed call, a denial): a tool message
// and a function_call_output carry no error flag, so the model reads it in the text.
const ErrorPrefix = "Error: "

// toolText is a tool result's text as a tool message or a function_call_output carries it:
// its text blocks joined by line breaks ("(see attached image)" when it holds only images,
// "(no output)" for an error without text), after ErrorPrefix when it is an error.
func toolText(m llm.Message) string {
	var texts []string
	for _, c := range m.Content {
		if c.Type == llm.ContentText {
			texts = append(texts, c.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if text == "" && len(m.Content) > 0 {
		text = "(see attached image)"
	}
	if m.IsError {
		if text == "" {
			text = "(no output)"
		}
		text = ErrorPrefix + text
	}
	return text
}

// userContent returns a user message's content: a string when it is all text, parts
// when it holds an image; false when there is nothing to send.
func userContent(cs []llm.Content) (any, bool) {
	hasImage := false
	var text strings.Builder
	for _, c := range cs {
		switch c.Type {
		case llm.ContentImage:
			hasImage = true
		case llm.ContentText:
			if text.Len() > 0 {
				text.WriteString("\n")
			}
			text.WriteString(c.Text)
		}
	}
	if !hasImage {
		return text.String(), text.Len() > 0
	}
	var parts []part
	for _, c := range cs {
		switch c.Type {
		case llm.ContentText:
			if c.Text != "" {
				parts = append(parts, part{Type: "text", Text: c.Text})
			}
		case llm.ContentImage:
			parts = append(parts, imagePart(c))
		}
	}
	return parts, true
}

func imagePart(c llm.Content) part {
	return part{Type: "image_url", ImageURL: &imageURL{URL: "data:" + c.MimeType + ";base64," + c.Data}}
}

// argumentsString is a tool call's arguments as the string the API wants: the JSON as it
// is, {} when there is none.
func argumentsString(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	return string(raw)
}

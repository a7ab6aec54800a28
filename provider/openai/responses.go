// This file writes an llm.Request as a streaming Responses API request body (a model entry's
// "api": "responses"): the system prompt as instructions, the history as input items, the
// reasoning items of earlier answers sent back as they came (store is false, so the server
// keeps nothing between requests).

package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

type responsesRequest struct {
	Model             string            `json:"model"`
	Instructions      string            `json:"instructions,omitempty"`
	Input             []json.RawMessage `json:"input"`
	Tools             []responsesTool   `json:"tools,omitempty"`
	ToolChoice        string            `json:"tool_choice,omitempty"`
	ParallelToolCalls bool              `json:"parallel_tool_calls,omitempty"`
	Reasoning         *reasoningEffort  `json:"reasoning,omitempty"`
	Include           []string          `json:"include,omitempty"`
	Store             bool              `json:"store"`
	Stream            bool              `json:"stream"`
	PromptCacheKey    string            `json:"prompt_cache_key,omitempty"`
	MaxOutputTokens   int               `json:"max_output_tokens,omitempty"`
}

type reasoningEffort struct {
	Effort string `json:"effort"`
}

// responsesTool is a function tool; strict is false, since the API's default (true) asks
// for schemas pid's tools do not follow (every property required, no additional ones).
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type inputMessage struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []inputPart `json:"content"`
}

type inputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	// Output is a string, or input_text and input_image parts when the result holds an
	// image.
	Output any `json:"output"`
}

// includeReasoning asks for each reasoning item's encrypted content, which is what lets a
// reasoning item go back with store false.
const includeReasoning = "reasoning.encrypted_content"

// responsesBody returns the Responses API body for req.
func (p *Provider) responsesBody(req *llm.Request) ([]byte, error) {
	rr := responsesRequest{
		Model:             p.opts.Model,
		Instructions:      req.SystemPrompt,
		Input:             responsesInput(req.Messages),
		Store:             false,
		Stream:            true,
		PromptCacheKey:    req.CacheKey,
		MaxOutputTokens:   p.opts.MaxTokens,
		ToolChoice:        "auto",
		ParallelToolCalls: true,
	}
	if rr.Input == nil {
		rr.Input = []json.RawMessage{}
	}
	if p.opts.ReasoningEffort != "" {
		rr.Reasoning = &reasoningEffort{Effort: p.opts.ReasoningEffort}
		rr.Include = []string{includeReasoning}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = emptySchema
		}
		rr.Tools = append(rr.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	if len(rr.Tools) == 0 {
		rr.ToolChoice, rr.ParallelToolCalls = "", false
	}
	return json.Marshal(rr)
}

// responsesInput writes the history (see wire.History for what is left out) as input items,
// in order:
//
//   - user: a message of input_text and input_image parts;
//   - assistant: per block, in the message's order, a reasoning item for a thinking block
//     that holds one (ReasoningItem; other providers' thinking is not sent), a message of
//     output_text parts for a run of text blocks (blank ones left out), a function_call for
//     a tool call;
//   - toolResult: a function_call_output whose output is the text (an error's text after
//     ErrorPrefix), or input_text and input_image parts when it holds an image.
func responsesInput(history []llm.Message) []json.RawMessage {
	var out []json.RawMessage
	add := func(v any) {
		if b, err := json.Marshal(v); err == nil {
			out = append(out, b)
		}
	}
	for _, m := range wire.History(history) {
		switch m.Role {
		case llm.RoleUser:
			var parts []inputPart
			for _, c := range m.Content {
				switch c.Type {
				case llm.ContentText:
					if c.Text != "" {
						parts = append(parts, inputPart{Type: "input_text", Text: c.Text})
					}
				case llm.ContentImage:
					parts = append(parts, inputPart{Type: "input_image", ImageURL: dataURL(c)})
				}
			}
			if len(parts) > 0 {
				add(inputMessage{Type: "message", Role: "user", Content: parts})
			}
		case llm.RoleAssistant:
			var texts []inputPart
			flush := func() {
				if len(texts) > 0 {
					add(inputMessage{Type: "message", Role: "assistant", Content: texts})
					texts = nil
				}
			}
			for _, c := range m.Content {
				switch c.Type {
				case llm.ContentText:
					if strings.TrimSpace(c.Text) != "" {
						texts = append(texts, inputPart{Type: "output_text", Text: c.Text})
					}
				case llm.ContentThinking:
					if item, ok := ReasoningItem(c); ok {
						flush()
						out = append(out, item)
					}
				case llm.ContentToolCall:
					flush()
					add(functionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: argumentsString(c.Arguments)})
				}
			}
			flush()
		case llm.RoleToolResult:
			add(functionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: resultOutput(m)})
		}
	}
	return out
}

// resultOutput is a tool result's output: its text (after ErrorPrefix for an error), or,
// when it holds an image, that text and the images as parts.
func resultOutput(m llm.Message) any {
	text := toolText(m)
	var images []inputPart
	for _, c := range m.Content {
		if c.Type == llm.ContentImage {
			images = append(images, inputPart{Type: "input_image", ImageURL: dataURL(c)})
		}
	}
	if len(images) == 0 {
		return text
	}
	return append([]inputPart{{Type: "input_text", Text: text}}, images...)
}

// ReasoningItem returns the Responses API reasoning item a thinking block holds, as JSON:
// its Signature, when it is one (a JSON object of type "reasoning", as the decoder stores
// it). Anthropic's signatures and thinking without one are no reasoning item.
func ReasoningItem(c llm.Content) (json.RawMessage, bool) {
	s := strings.TrimSpace(c.Signature)
	if c.Type != llm.ContentThinking || !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return nil, false
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(s), &head) != nil || head.Type != "reasoning" {
		return nil, false
	}
	return json.RawMessage(s), true
}

func dataURL(c llm.Content) string { return "data:" + c.MimeType + ";base64," + c.Data }

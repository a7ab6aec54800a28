// This file defines content blocks: the parts of a message (text, thinking, toolCall, image).

package llm

import (
	"encoding/json"
	"fmt"
)

// ContentType names the kind of a content block.
type ContentType string

const (
	ContentText     ContentType = "text"
	ContentThinking ContentType = "thinking"
	ContentToolCall ContentType = "toolCall"
	ContentImage    ContentType = "image"
)

// Content is one block of a message. Type decides which fields are meaningful:
// text: Text; thinking: Thinking, Signature, Redacted; toolCall: ID, Name, Arguments; image:
// Data (base64), MimeType.
//
// A thinking block's Signature is what its provider needs to accept the thinking back in a
// later request, opaque to pid: Anthropic's signature, or the JSON of an OpenAI Responses
// API reasoning item (an object, with its encrypted content); a Redacted block's thinking
// was withheld by the provider, Thinking is empty and Signature holds the withheld data.
type Content struct {
	Type      ContentType
	Text      string
	Thinking  string
	Signature string
	Redacted  bool
	ID        string
	Name      string
	Arguments json.RawMessage
	Data      string
	MimeType  string
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Thinking returns a thinking block.
func Thinking(s string) Content { return Content{Type: ContentThinking, Thinking: s} }

// NewToolCall returns a toolCall block. Nil arguments are written as {}.
func NewToolCall(id, name string, args json.RawMessage) Content {
	return Content{Type: ContentToolCall, ID: id, Name: name, Arguments: args}
}

// MarshalJSON writes only the fields of the block's type.
func (c Content) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil) }

// UnmarshalJSON reads any block type and rejects unknown ones with an error naming the type.
func (c *Content) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type      ContentType     `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Redacted  bool            `json:"redacted"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Data      string          `json:"data"`
		MimeType  string          `json:"mimeType"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	switch raw.Type {
	case ContentText, ContentThinking, ContentToolCall, ContentImage:
	default:
		return fmt.Errorf("llm: content block with unknown type %q", raw.Type)
	}
	*c = Content(raw)
	return nil
}

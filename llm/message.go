// Package llm holds the types every layer of pid shares: transcript messages, their content
// blocks, and the Provider interface a model sits behind. It imports nothing of pid's.
//
// The entry points are Message (one transcript entry, see NewUser, NewToolResult) and
// Provider (see provider.go); ScriptedProvider is the model used by tests and headless runs.
package llm

import (
	"encoding/json"
	"fmt"
	"time"
)

// Role says which kind of message a Message is.
type Role string

const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
)

// StopReason says why an assistant message ended.
type StopReason string

const (
	StopEnd     StopReason = "stop"    // the model finished its answer
	StopToolUse StopReason = "toolUse" // the model wants its tool calls run
	StopLength  StopReason = "length"  // the output-token limit cut the message off (R3)
	StopError   StopReason = "error"   // the provider failed; ErrorMessage says how
	StopAborted StopReason = "aborted" // the run was cancelled while the model streamed
)

// Usage is the token accounting a provider reports for one assistant message.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	Total      int `json:"totalTokens"`
}

// Message is one transcript entry. Role decides which fields are meaningful:
//
//   - user: Content (text and image blocks), Timestamp.
//   - assistant: Content (text, thinking and toolCall blocks), StopReason, Usage,
//     ErrorMessage, Timestamp.
//   - toolResult: ToolCallID, ToolName, Content, Details, IsError, AddedToolNames, Timestamp.
//
// Messages are values; once a message has been announced with a MessageEnd event nobody
// mutates it, so slices of messages may be shared between the loop and its observers.
type Message struct {
	Role    Role
	Content []Content

	StopReason   StopReason
	Usage        *Usage
	ErrorMessage string

	ToolCallID     string
	ToolName       string
	Details        any
	IsError        bool
	AddedToolNames []string

	// Timestamp is milliseconds since the Unix epoch.
	Timestamp int64
}

// Now returns the current time as a message timestamp.
func Now() int64 { return time.Now().UnixMilli() }

// NewUser returns a user message holding one text block.
func NewUser(text string) Message {
	return Message{Role: RoleUser, Content: []Content{Text(text)}, Timestamp: Now()}
}

// ToolCalls returns the toolCall blocks of an assistant message in source order (R1).
func (m *Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for i := range m.Content {
		if m.Content[i].Type == ContentToolCall {
			c := &m.Content[i]
			calls = append(calls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return calls
}

// Text returns the concatenated text blocks of the message.
func (m *Message) Text() string {
	var s string
	for _, c := range m.Content {
		if c.Type == ContentText {
			s += c.Text
		}
	}
	return s
}

// ToolCall is one call the model asked for: its id, the tool's name and the raw JSON
// arguments exactly as the model wrote them.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// MarshalJSON writes the shape of the message's role (see docs/protocol.md): only the
// fields of that role, content always an array, addedToolNames only when non-empty.
func (m Message) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil) }

// UnmarshalJSON reads any of the three shapes, so a saved transcript can be replayed.
// A user message whose content is a plain string is accepted as one text block.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role           Role            `json:"role"`
		Content        json.RawMessage `json:"content"`
		StopReason     StopReason      `json:"stopReason"`
		Usage          *Usage          `json:"usage"`
		ErrorMessage   string          `json:"errorMessage"`
		ToolCallID     string          `json:"toolCallId"`
		ToolName       string          `json:"toolName"`
		Details        any             `json:"details"`
		IsError        bool            `json:"isError"`
		AddedToolNames []string        `json:"addedToolNames"`
		Timestamp      int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	switch raw.Role {
	case RoleUser, RoleAssistant, RoleToolResult:
	default:
		return fmt.Errorf("llm: message with unknown role %q", raw.Role)
	}
	*m = Message{
		Role: raw.Role, StopReason: raw.StopReason, Usage: raw.Usage, ErrorMessage: raw.ErrorMessage,
		ToolCallID: raw.ToolCallID, ToolName: raw.ToolName, Details: raw.Details, IsError: raw.IsError,
		AddedToolNames: raw.AddedToolNames, Timestamp: raw.Timestamp,
	}
	if len(raw.Content) > 0 && raw.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(raw.Content, &s); err != nil {
			return err
		}
		m.Content = []Content{Text(s)}
		return nil
	}
	if len(raw.Content) > 0 && string(raw.Content) != "null" {
		return json.Unmarshal(raw.Content, &m.Content)
	}
	return nil
}

// This file writes messages and content blocks as JSON by hand, appending to a byte slice.
// It is the hot path of the daemon (every notification carries messages or content), where
// encoding/json's reflection and its re-compaction of MarshalJSON output cost more than the
// pipe write itself. MarshalJSON uses the same code, so there is one encoding.

package llm

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends m's JSON (the shape of its role, as MarshalJSON writes it) to b.
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	switch m.Role {
	case RoleUser:
		b = append(b, `{"role":"user","content":`...)
		b, err := AppendContentJSON(b, m.Content)
		if err != nil {
			return b, err
		}
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, m.Timestamp, 10)
		return append(b, '}'), nil
	case RoleAssistant:
		b = append(b, `{"role":"assistant","content":`...)
		b, err := AppendContentJSON(b, m.Content)
		if err != nil {
			return b, err
		}
		b = append(b, `,"stopReason":`...)
		b = AppendString(b, string(m.StopReason))
		if m.Usage != nil {
			u, err := json.Marshal(m.Usage)
			if err != nil {
				return b, err
			}
			b = append(b, `,"usage":`...)
			b = append(b, u...)
		}
		if m.ErrorMessage != "" {
			b = append(b, `,"errorMessage":`...)
			b = AppendString(b, m.ErrorMessage)
		}
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, m.Timestamp, 10)
		return append(b, '}'), nil
	case RoleToolResult:
		b = append(b, `{"role":"toolResult","toolCallId":`...)
		b = AppendString(b, m.ToolCallID)
		b = append(b, `,"toolName":`...)
		b = AppendString(b, m.ToolName)
		b = append(b, `,"content":`...)
		b, err := AppendContentJSON(b, m.Content)
		if err != nil {
			return b, err
		}
		if m.Details != nil {
			b = append(b, `,"details":`...)
			if b, err = AppendAny(b, m.Details); err != nil {
				return b, err
			}
		}
		b = append(b, `,"isError":`...)
		b = strconv.AppendBool(b, m.IsError)
		if len(m.AddedToolNames) > 0 {
			b = append(b, `,"addedToolNames":[`...)
			for i, n := range m.AddedToolNames {
				if i > 0 {
					b = append(b, ',')
				}
				b = AppendString(b, n)
			}
			b = append(b, ']')
		}
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, m.Timestamp, 10)
		return append(b, '}'), nil
	}
	return b, &json.UnsupportedValueError{Str: "message with unknown role " + strconv.Quote(string(m.Role))}
}

// AppendContentJSON appends a JSON array of content blocks (nil is written as []).
func AppendContentJSON(b []byte, cs []Content) ([]byte, error) {
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = cs[i].AppendJSON(b); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// AppendJSON appends the block's JSON: only the fields of its type.
func (c *Content) AppendJSON(b []byte) ([]byte, error) {
	switch c.Type {
	case ContentText:
		b = append(b, `{"type":"text","text":`...)
		b = AppendString(b, c.Text)
	case ContentThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = AppendString(b, c.Thinking)
		if c.Signature != "" {
			b = append(b, `,"signature":`...)
			b = AppendString(b, c.Signature)
		}
		if c.Redacted {
			b = append(b, `,"redacted":true`...)
		}
	case ContentToolCall:
		b = append(b, `{"type":"toolCall","id":`...)
		b = AppendString(b, c.ID)
		b = append(b, `,"name":`...)
		b = AppendString(b, c.Name)
		b = append(b, `,"arguments":`...)
		var err error
		if b, err = AppendRaw(b, c.Arguments); err != nil {
			return b, err
		}
	case ContentImage:
		b = append(b, `{"type":"image","data":`...)
		b = AppendString(b, c.Data)
		b = append(b, `,"mimeType":`...)
		b = AppendString(b, c.MimeType)
	default:
		return b, &json.UnsupportedValueError{Str: "content block with unknown type " + strconv.Quote(string(c.Type))}
	}
	return append(b, '}'), nil
}

// AppendRaw appends raw JSON, {} when empty. Raw JSON that is not valid is an error, so a
// bad value never reaches the wire.
func AppendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(b, "{}"...), nil
	}
	if !json.Valid(raw) {
		return b, &json.UnsupportedValueError{Str: "invalid raw JSON"}
	}
	return append(b, raw...), nil
}

// AppendAny appends v as JSON: raw JSON as it is, anything else through encoding/json.
func AppendAny(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case json.RawMessage:
		return AppendRaw(b, x)
	case string:
		return AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as with
// encoding/json; <, > and & are not escaped (the output is not embedded in HTML).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

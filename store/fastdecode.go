// This file reads message lines quickly. encoding/json, through llm.Message's and
// llm.Content's UnmarshalJSON, scans each byte of a message five or six times; loading a
// long session that way takes longer than the 200 ms the issue allows. This reader parses a
// line once (gjson) and builds the message directly, and gives up, leaving the line to
// encoding/json, at anything it is not sure to read exactly as encoding/json would: a key
// that differs from a known one only in case, a key given twice, a value of an unexpected
// type, invalid UTF-8, an unknown role or block type. FuzzFastDecode checks that the two
// agree.

package store

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pid-agent/pid/llm"
	"github.com/tidwall/gjson"
)

// fastEntry reads a message entry line (line is the text of the line, in a string that
// may hold more than it). ok is false when the line is not a message entry or not one this
// reader is sure of; the caller then reads it with encoding/json. With decode false, the
// message is left as its JSON text in msgRaw.
func fastEntry(line string, decode bool) (e Entry, msgRaw string, ok bool) {
	if !utf8.ValidString(line) || !gjson.Valid(line) {
		return Entry{}, "", false
	}
	root := gjson.Parse(line)
	if !root.IsObject() {
		return Entry{}, "", false
	}
	var seen uint
	var msg gjson.Result
	ok = true
	root.ForEach(func(k, v gjson.Result) bool {
		bit, known := envelopeKeys[k.Str]
		if !known {
			ok = !foldsToKnown(k.Str, envelopeKeys)
			return ok
		}
		if seen&bit != 0 {
			ok = false
			return false
		}
		seen |= bit
		switch k.Str {
		case "type":
			e.Kind, ok = str(v)
		case "id":
			e.ID, ok = str(v)
		case "parentId":
			e.ParentID, ok = str(v)
		case "timestamp":
			if v.Type == gjson.Null {
				break
			}
			ok = v.Type == gjson.String && e.Timestamp.UnmarshalJSON([]byte(v.Raw)) == nil
		case "message":
			msg = v
			ok = v.IsObject()
		default:
			// Another kind's field: encoding/json would decode it (and might fail).
			ok = false
		}
		return ok
	})
	if !ok || e.Kind != KindMessage || e.ID == "" || !msg.Exists() {
		return Entry{}, "", false
	}
	if !decode {
		return e, msg.Raw, true
	}
	e.Message, ok = fastMessage(msg)
	return e, "", ok
}

// Keys of the objects fastEntry reads, each with its bit for finding one given twice.
var (
	envelopeKeys = map[string]uint{"type": 1, "id": 2, "parentId": 4, "timestamp": 8, "message": 16, "compaction": 32, "model": 64}
	messageKeys  = map[string]uint{"role": 1, "content": 2, "stopReason": 4, "usage": 8, "errorMessage": 16,
		"toolCallId": 32, "toolName": 64, "details": 128, "isError": 256, "addedToolNames": 512, "timestamp": 1024}
	contentKeys = map[string]uint{"type": 1, "text": 2, "thinking": 4, "id": 8, "name": 16, "arguments": 32,
		"data": 64, "mimeType": 128, "signature": 256, "redacted": 512}
)

// foldsToKnown reports whether key equals one of keys but for case: encoding/json would
// take it for that key, so only encoding/json may read the line.
func foldsToKnown(key string, keys map[string]uint) bool {
	for k := range keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// str returns a string value ("" for null, as encoding/json leaves a string field) and
// whether v was one of those.
func str(v gjson.Result) (string, bool) {
	switch v.Type {
	case gjson.String:
		return v.Str, true
	case gjson.Null:
		return "", true
	}
	return "", false
}

// boolean returns a bool value (false for null, as encoding/json leaves a bool field) and
// whether v was one of those.
func boolean(v gjson.Result) (bool, bool) {
	switch v.Type {
	case gjson.True:
		return true, true
	case gjson.False, gjson.Null:
		return false, true
	}
	return false, false
}

// fastMessage builds a message from its JSON object, as llm.Message.UnmarshalJSON would,
// or returns ok false.
func fastMessage(obj gjson.Result) (*llm.Message, bool) {
	m := new(llm.Message)
	var seen uint
	ok := true
	obj.ForEach(func(k, v gjson.Result) bool {
		bit, known := messageKeys[k.Str]
		if !known {
			ok = !foldsToKnown(k.Str, messageKeys)
			return ok
		}
		if seen&bit != 0 {
			ok = false
			return false
		}
		seen |= bit
		var s string
		switch k.Str {
		case "role":
			s, ok = str(v)
			m.Role = llm.Role(s)
		case "content":
			m.Content, ok = fastContent(v)
		case "stopReason":
			s, ok = str(v)
			m.StopReason = llm.StopReason(s)
		case "errorMessage":
			m.ErrorMessage, ok = str(v)
		case "toolCallId":
			m.ToolCallID, ok = str(v)
		case "toolName":
			m.ToolName, ok = str(v)
		case "isError":
			m.IsError, ok = boolean(v)
		case "timestamp":
			switch v.Type {
			case gjson.Number:
				m.Timestamp, ok = parseInt(v.Raw)
			case gjson.Null:
			default:
				ok = false
			}
		case "details":
			// Small, rare, and of any shape: encoding/json reads it as it would.
			if v.Type != gjson.Null {
				ok = json.Unmarshal([]byte(v.Raw), &m.Details) == nil
			}
		case "usage":
			if v.Type != gjson.Null {
				m.Usage = new(llm.Usage)
				ok = v.IsObject() && json.Unmarshal([]byte(v.Raw), m.Usage) == nil
			}
		case "addedToolNames":
			if v.Type != gjson.Null {
				ok = v.IsArray() && json.Unmarshal([]byte(v.Raw), &m.AddedToolNames) == nil
			}
		}
		return ok
	})
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult:
	default:
		return nil, false
	}
	return m, ok
}

// parseInt reads an integer literal as encoding/json reads one into an int64: no fraction,
// no exponent, in range.
func parseInt(raw string) (int64, bool) {
	n, err := strconv.ParseInt(raw, 10, 64)
	return n, err == nil
}

// fastContent reads a message's content: a string (one text block), an array of blocks,
// or null (none).
func fastContent(v gjson.Result) ([]llm.Content, bool) {
	switch {
	case v.Type == gjson.String:
		return []llm.Content{llm.Text(v.Str)}, true
	case v.Type == gjson.Null:
		return nil, true
	case !v.IsArray():
		return nil, false
	}
	out := make([]llm.Content, 0, 2)
	ok := true
	v.ForEach(func(_, b gjson.Result) bool {
		var c llm.Content
		c, ok = fastBlock(b)
		out = append(out, c)
		return ok
	})
	return out, ok
}

// fastBlock reads one content block, as llm.Content.UnmarshalJSON would, or returns ok false.
func fastBlock(obj gjson.Result) (llm.Content, bool) {
	if !obj.IsObject() {
		return llm.Content{}, false
	}
	var c llm.Content
	var seen uint
	ok := true
	obj.ForEach(func(k, v gjson.Result) bool {
		bit, known := contentKeys[k.Str]
		if !known {
			ok = !foldsToKnown(k.Str, contentKeys)
			return ok
		}
		if seen&bit != 0 {
			ok = false
			return false
		}
		seen |= bit
		var s string
		switch k.Str {
		case "type":
			s, ok = str(v)
			c.Type = llm.ContentType(s)
		case "text":
			c.Text, ok = str(v)
		case "thinking":
			c.Thinking, ok = str(v)
		case "signature":
			c.Signature, ok = str(v)
		case "redacted":
			c.Redacted, ok = boolean(v)
		case "id":
			c.ID, ok = str(v)
		case "name":
			c.Name, ok = str(v)
		case "data":
			c.Data, ok = str(v)
		case "mimeType":
			c.MimeType, ok = str(v)
		case "arguments":
			// encoding/json keeps raw JSON as written, and gives null to it as "null".
			ok = v.Type != gjson.Null
			c.Arguments = json.RawMessage(v.Raw)
		}
		return ok
	})
	switch c.Type {
	case llm.ContentText, llm.ContentThinking, llm.ContentToolCall, llm.ContentImage:
	default:
		return llm.Content{}, false
	}
	return c, ok
}

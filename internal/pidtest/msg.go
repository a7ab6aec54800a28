// This file is one message the daemon wrote, and the error of an error response.

package pidtest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// Msg is one message the daemon wrote.
type Msg struct {
	// Seq is the message's place in the order read, from 0. Messages a Conn discards
	// still count.
	Seq int
	// Raw is the message as written (the body of a frame, or a line without its end).
	Raw []byte
}

// Get returns the value at a gjson path of the message.
func (m *Msg) Get(path string) gjson.Result { return gjson.GetBytes(m.Raw, path) }

// Method returns the message's method ("" for a response).
func (m *Msg) Method() string { return m.Get("method").String() }

// ID returns the message's id as compact raw JSON: "null" when it is null, "" when absent.
func (m *Msg) ID() string { return CompactJSON(m.Get("id").Raw) }

// HasID reports whether the message has an id member.
func (m *Msg) HasID() bool { return m.Get("id").Exists() }

// IsRequest reports whether the message is a request (a method and an id).
func (m *Msg) IsRequest() bool { return m.Get("method").Exists() && m.HasID() }

// IsNotification reports whether the message is a notification (a method, no id).
func (m *Msg) IsNotification() bool { return m.Get("method").Exists() && !m.HasID() }

// IsResponse reports whether the message is a response (no method; a result or an error).
func (m *Msg) IsResponse() bool {
	return !m.Get("method").Exists() && (m.Get("result").Exists() || m.Get("error").Exists())
}

func (m *Msg) String() string { return string(m.Raw) }

// CompactJSON returns s (raw JSON) without insignificant space; s itself when it is not
// JSON, "" for "".
func CompactJSON(s string) string {
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// Error is an error response to a request of the Conn's.
type Error struct {
	Method  string // the request's method
	Code    int64
	Message string
	Raw     string // the error member as written
}

func (e *Error) Error() string { return fmt.Sprintf("%s: error response %s", e.Method, e.Raw) }

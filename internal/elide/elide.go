// Package elide shortens the arguments of a tool call where pid shows them to the editor
// (notifications, the prompt's result, ACP's rawInput): a model can write megabytes of
// arguments, and each copy an editor gets of them would cost as much again. Arguments of
// at most MaxArgs bytes go as they are; longer ones go as an object that keeps the short
// top-level members (a path, a command) and says, in its "$elided" member, how long the
// arguments were and which members were left out. The model, the tool, the transcript and
// the approval requests always get the whole arguments. Quote shortens a JSON value that
// an error message quotes (quote.go).
package elide

import (
	"encoding/json"
	"strconv"
)

// MaxArgs is the most bytes of one call's arguments pid sends the editor in one message.
const MaxArgs = 64 << 10

// Bounds of the elided form: a top-level member of at most keepMember bytes is kept, up
// to keepTotal bytes of them; at most maxNamed left-out members are named.
const (
	keepMember = 1 << 10
	keepTotal  = 16 << 10
	maxNamed   = 20
)

// Key is the member of elided arguments that says what was left out:
// {"bytes": N, "omitted": [names...], "more": M}, "more" only when more members were left
// out than are named.
const Key = "$elided"

// Args returns raw when it is at most MaxArgs bytes, else the elided form (see the
// package comment). raw is a JSON object as the model wrote it; anything else (an array,
// invalid JSON) that is too long becomes {"$elided": {"bytes": N}}.
func Args(raw json.RawMessage) json.RawMessage { return over(raw, MaxArgs) }

// over is Args with the limit max.
func over(raw json.RawMessage, max int) json.RawMessage {
	if len(raw) <= max {
		return raw
	}
	out := []byte{'{'}
	var omitted []string
	left, kept := 0, 0
	ok := members(raw, func(key, val []byte) {
		if len(key)+len(val) <= keepMember && kept+len(key)+len(val) <= keepTotal {
			out = append(out, key...)
			out = append(out, ':')
			out = append(out, val...)
			out = append(out, ',')
			kept += len(key) + len(val)
			return
		}
		left++
		if len(omitted) < maxNamed {
			var name string
			if json.Unmarshal(key, &name) == nil {
				omitted = append(omitted, name)
			}
		}
	})
	if !ok {
		out, omitted, left = out[:1], nil, 0
	}
	out = append(out, `"`+Key+`":{"bytes":`...)
	out = strconv.AppendInt(out, int64(len(raw)), 10)
	if ok {
		names, _ := json.Marshal(omitted)
		if omitted == nil {
			names = []byte("[]")
		}
		out = append(out, `,"omitted":`...)
		out = append(out, names...)
		if left > len(omitted) {
			out = append(out, `,"more":`...)
			out = strconv.AppendInt(out, int64(left-len(omitted)), 10)
		}
	}
	return append(out, '}', '}')
}

// members calls f with the raw key (quoted) and raw value of each top-level member of the
// JSON object raw, in order, and reports whether raw is an object it could walk. It does
// not check the JSON beyond what finding the members needs (callers hold valid JSON).
func members(raw []byte, f func(key, val []byte)) bool {
	i := ws(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = ws(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false
		}
		kEnd := strEnd(raw, i)
		if kEnd < 0 {
			return false
		}
		key := raw[i:kEnd]
		i = ws(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		vStart := ws(raw, i+1)
		vEnd := valueEnd(raw, vStart)
		if vEnd < 0 {
			return false
		}
		f(key, raw[vStart:vEnd])
		i = ws(raw, vEnd)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = ws(raw, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// ws returns the index of the first byte from i on that is not JSON white space.
func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// strEnd returns the index just past the string that starts at b[i] ('"'), or -1.
func strEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index just past the value that starts at b[i], or -1: a string, an
// object or array (brackets counted outside strings), or a literal (up to the next
// delimiter).
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return strEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := strEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}

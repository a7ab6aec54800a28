// This file turns the JSON of tool-call arguments that is still arriving into valid JSON,
// so a partial message can show (and encode) the arguments streamed so far.

package wire

import (
	"encoding/json"
	"strings"
)

// CloseJSON returns a valid JSON document that keeps as much of the prefix s as it can:
// an open string value is closed, an incomplete key, literal or number is dropped with the
// comma or colon before it, and open objects and arrays are closed. It returns nil when
// nothing useful can be made of s (empty, or not starting with an object or array).
// The result is a new slice; s is not modified.
func CloseJSON(s []byte) []byte {
	var (
		stack    []byte // open containers, '{' or '['
		inString bool
		escape   bool
		isKey    bool // the open string is an object key
		// expectKey is true after '{' or a ',' inside an object, until the key starts.
		expectKey bool
		// safe is the longest prefix that ends after a complete value or an opening
		// bracket; safeStack is the stack at that point.
		safe      = -1
		safeStack []byte
		// strSafe is the last position inside the open string where it can be cut (not
		// inside an escape sequence).
		strSafe int
	)
	mark := func(end int) {
		safe = end
		safeStack = append(safeStack[:0], stack...)
	}
	start := 0
	for start < len(s) && isSpace(s[start]) {
		start++
	}
	if start == len(s) || (s[start] != '{' && s[start] != '[') {
		return nil
	}
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escape:
				escape = false
				if c == 'u' {
					if i+4 >= len(s) {
						// \uXXXX not complete: the string can only be cut before it.
						i = len(s)
						continue
					}
					i += 4
				}
				strSafe = i + 1
			case c == '\\':
				escape = true
			case c == '"':
				inString = false
				if isKey {
					isKey = false
				} else {
					mark(i + 1)
				}
			default:
				strSafe = i + 1
			}
			continue
		}
		switch c {
		case '{', '[':
			stack = append(stack, c)
			expectKey = c == '{'
			mark(i + 1)
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			mark(i + 1)
		case '"':
			inString = true
			isKey = expectKey
			expectKey = false
			strSafe = i + 1
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
		default:
			if isSpace(c) {
				continue
			}
			// A number or literal: complete only when something follows it.
			j := i
			for j < len(s) && !isSpace(s[j]) && !strings.ContainsRune(",:]}", rune(s[j])) {
				j++
			}
			if j < len(s) {
				mark(j)
			}
			i = j - 1
		}
	}
	var out []byte
	switch {
	case inString && !isKey:
		// Cut the open string value where it is whole and close it.
		out = append(out, s[:strSafe]...)
		out = append(out, '"')
		out = closeStack(out, stack)
	case safe >= 0:
		out = append(out, s[:safe]...)
		out = closeStack(out, safeStack)
	default:
		return nil
	}
	if json.Valid(out) {
		return out
	}
	// The cut left something the closers cannot fix (a dangling key, a comma): fall back
	// to the last safe point.
	if safe >= 0 {
		out = append(out[:0], s[:safe]...)
		out = closeStack(out, safeStack)
		if json.Valid(out) {
			return out
		}
	}
	return nil
}

// closeStack appends the closing brackets of the open containers, innermost first.
func closeStack(b, stack []byte) []byte {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			b = append(b, '}')
		} else {
			b = append(b, ']')
		}
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

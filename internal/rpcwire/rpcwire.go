// Package rpcwire reads the envelope of one incoming JSON-RPC message for both of pid's faces
// (package rpc's LSP-framed stream and package acp's lines). Scan checks in one pass, without
// recursion, that a message is one JSON value nested no deeper than MaxDepth, and finds the
// members of its top-level object (jsonrpc, id, method, params, result, error) as slices of
// the message, so that nothing is copied or decoded twice. IDKey gives the key under which a
// request id is matched, for any id JSON-RPC allows.
//
// Every message a client sends goes through Scan before anything else parses it: the other
// parsers pid uses (encoding/json, gjson) recurse per nesting level, and a frame of ten
// million `[` must not reach them.
package rpcwire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth is the deepest nesting (open arrays and objects) Scan accepts: encoding/json's own
// limit, so that whatever Scan accepts also decodes.
const MaxDepth = 10000

// ErrTooDeep is Scan's error for valid JSON nested deeper than MaxDepth. The Envelope is
// still filled in: the faces answer such a request with its own id.
var ErrTooDeep = fmt.Errorf("the message nests arrays and objects deeper than %d levels", MaxDepth)

// SyntaxError is Scan's error for a message that is not one JSON value.
type SyntaxError struct {
	Offset int    // the byte where reading failed
	What   string // what was wrong there
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.What, e.Offset) }

// Envelope is where the members of a message's top-level object are. Each is the raw JSON
// value, a slice of the scanned message (nil when the member is absent, "null" when it is
// null). When a member appears twice the last one counts, as with encoding/json.
type Envelope struct {
	// Top is the first byte of the message's value: '{' for an object, '[' for an array
	// (a batch), '"', 't', 'f', 'n', '-' or a digit for a scalar. The members below are
	// only found when Top is '{'.
	Top byte

	JSONRPC, ID, Method, Params, Result, Error []byte
}

// Scanner states.
const (
	stValue  = iota // a value starts at i
	stMember        // a member's key starts at i
	stAfter         // a value ended just before i
)

// Scan checks that msg is exactly one JSON value (surrounded by optional white space),
// nested at most MaxDepth deep, and returns the members of its top-level object. It never
// recurses and allocates nothing unless msg nests deeper than 256 levels (then one bit per
// level). On a *SyntaxError the Envelope is unusable; on ErrTooDeep it is complete.
//
// Scan is safe for concurrent use and never panics.
func Scan(msg []byte) (Envelope, error) {
	var env Envelope
	n := len(msg)
	i := skipSpace(msg, 0)
	if i == n {
		return env, &SyntaxError{i, "no JSON value"}
	}
	env.Top = msg[i]
	// Which of the open containers are objects: bit d for depth d+1.
	var small [4]uint64
	objects := small[:]
	depth := 0
	tooDeep := false
	var key []byte // the current top-level member's key, without its quotes
	keyEscaped := false
	valStart := 0
	st := stValue
	for {
		switch st {
		case stValue:
			if i >= n {
				return env, &SyntaxError{i, "unexpected end of the message (a value was expected)"}
			}
			switch c := msg[i]; {
			case c == '{' || c == '[':
				if depth == MaxDepth {
					tooDeep = true
				}
				w := depth >> 6
				if w == len(objects) {
					objects = append(objects, 0)
				}
				if c == '{' {
					objects[w] |= 1 << (depth & 63)
				} else {
					objects[w] &^= 1 << (depth & 63)
				}
				depth++
				i = skipSpace(msg, i+1)
				switch {
				case c == '{' && i < n && msg[i] == '}', c == '[' && i < n && msg[i] == ']':
					i++
					depth--
					st = stAfter
				case c == '{':
					st = stMember
				}
				continue
			default:
				end, err := scanScalar(msg, i)
				if err != nil {
					return env, err
				}
				i = end
			}
			st = stAfter
		case stMember:
			if i >= n || msg[i] != '"' {
				if i >= n {
					return env, &SyntaxError{i, "unexpected end of the message (a member name was expected)"}
				}
				return env, &SyntaxError{i, fmt.Sprintf("invalid character %s (a member name in quotes was expected)", quoteChar(msg[i]))}
			}
			end, escaped, err := scanString(msg, i)
			if err != nil {
				return env, err
			}
			if depth == 1 {
				key, keyEscaped = msg[i+1:end-1], escaped
			}
			i = skipSpace(msg, end)
			if i >= n || msg[i] != ':' {
				return env, &SyntaxError{i, "a colon after the member name was expected"}
			}
			i = skipSpace(msg, i+1)
			if depth == 1 {
				valStart = i
			}
			st = stValue
		case stAfter:
			if depth == 1 && env.Top == '{' {
				env.set(key, keyEscaped, msg[valStart:i])
			}
			i = skipSpace(msg, i)
			if depth == 0 {
				if i != n {
					return env, &SyntaxError{i, "data after the JSON value"}
				}
				if tooDeep {
					return env, ErrTooDeep
				}
				return env, nil
			}
			if i >= n {
				return env, &SyntaxError{i, "unexpected end of the message (an array or object is not closed)"}
			}
			d := depth - 1
			inObject := objects[d>>6]&(1<<(d&63)) != 0
			switch c := msg[i]; {
			case c == ',':
				i = skipSpace(msg, i+1)
				if inObject {
					st = stMember
				} else {
					st = stValue
				}
			case c == '}' && inObject, c == ']' && !inObject:
				i++
				depth--
			default:
				return env, &SyntaxError{i, fmt.Sprintf("invalid character %s (a comma or the end of the array or object was expected)", quoteChar(c))}
			}
		}
	}
}

// scanScalar scans the string, literal or number that starts at msg[i] and returns where it
// ends; a SyntaxError when it is none of them or is invalid.
func scanScalar(msg []byte, i int) (int, error) {
	switch c := msg[i]; {
	case c == '"':
		end, _, err := scanString(msg, i)
		return end, err
	case c == 't':
		if !hasLiteral(msg, i, "true") {
			return i, &SyntaxError{i, "invalid literal (true was expected)"}
		}
		return i + 4, nil
	case c == 'f':
		if !hasLiteral(msg, i, "false") {
			return i, &SyntaxError{i, "invalid literal (false was expected)"}
		}
		return i + 5, nil
	case c == 'n':
		if !hasLiteral(msg, i, "null") {
			return i, &SyntaxError{i, "invalid literal (null was expected)"}
		}
		return i + 4, nil
	case c == '-' || '0' <= c && c <= '9':
		end, ok := scanNumber(msg, i)
		if !ok {
			return end, &SyntaxError{end, "invalid number"}
		}
		return end, nil
	default:
		return i, &SyntaxError{i, fmt.Sprintf("invalid character %s (a value was expected)", quoteChar(c))}
	}
}

// set records one member of the top-level object.
func (e *Envelope) set(key []byte, escaped bool, val []byte) {
	if escaped {
		name, err := unquote(key)
		if err != nil {
			return
		}
		key = []byte(name)
	}
	switch string(key) { // not allocated: only compared
	case "jsonrpc":
		e.JSONRPC = val
	case "id":
		e.ID = val
	case "method":
		e.Method = val
	case "params":
		e.Params = val
	case "result":
		e.Result = val
	case "error":
		e.Error = val
	}
}

// unquote decodes the inside of a JSON string with escapes.
func unquote(inner []byte) (string, error) {
	q := make([]byte, 0, len(inner)+2)
	q = append(append(append(q, '"'), inner...), '"')
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString checks the string starting with the quote at b[i] and returns the index after
// its closing quote, and whether it holds escapes.
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	n := len(b)
	for j := i + 1; j < n; {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= n {
				return 0, false, &SyntaxError{j, "unexpected end of the message in a string escape"}
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if n-j < 6 || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
					return 0, false, &SyntaxError{j, `invalid \u escape in a string`}
				}
				j += 6
			default:
				return 0, false, &SyntaxError{j, "invalid escape in a string"}
			}
		case c < 0x20:
			return 0, false, &SyntaxError{j, "a control character in a string (it must be escaped)"}
		default:
			j++
		}
	}
	return 0, false, &SyntaxError{n, "unexpected end of the message in a string"}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber checks the number starting at b[i] (JSON's grammar: -?(0|[1-9][0-9]*)
// (\.[0-9]+)?([eE][+-]?[0-9]+)?) and returns the index after it; on failure, where it failed.
func scanNumber(b []byte, i int) (int, bool) {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i < n && b[i] == '0':
		i++
	case i < n && '1' <= b[i] && b[i] <= '9':
		for i < n && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < n && b[i] == '.' {
		i++
		if i >= n || !isDigit(b[i]) {
			return i, false
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n || !isDigit(b[i]) {
			return i, false
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("0x%02x", c)
	}
	return "'" + string(c) + "'"
}

// String decodes raw, which must be a JSON string (as Scan found it), and reports whether
// it was one.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			s, err := unquote(inner)
			return s, err == nil
		}
	}
	return string(inner), true
}

// IsNumber reports whether raw is exactly one JSON number.
func IsNumber(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	end, ok := scanNumber(raw, 0)
	return ok && end == len(raw)
}

// IDKey returns the key under which a request id is matched (a duplicate id, a cancel naming
// it, an answer to one of pid's requests), and reports whether raw is an id JSON-RPC allows
// for a request: a string or a number. Strings are keyed by their value, so that escapes
// spelled differently match; numbers by their value too, so that 100, 1e2 and 100.0 are one
// id, and -0 is 0. Surrounding white space is ignored. null, and anything else, is no id.
//
// The key is for maps only; answers carry the id exactly as the client wrote it.
func IDKey(raw []byte) (string, bool) {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		s, ok := String(raw)
		if !ok {
			return "", false
		}
		return "s" + s, true
	}
	if !IsNumber(raw) {
		return "", false
	}
	return "n" + canonicalNumber(raw), true
}

func trimSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

// canonicalNumber returns one spelling for every spelling of the value of the JSON number
// raw: its significant digits and a decimal exponent ("1e2" for 100, 1e2 and 100.00). A
// number whose exponent has more than 15 digits keeps its own spelling.
func canonicalNumber(raw []byte) string {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	i := 0
	for i < len(raw) && isDigit(raw[i]) {
		i++
	}
	digits := make([]byte, 0, len(raw))
	digits = append(digits, raw[:i]...)
	exp := int64(0)
	if i < len(raw) && raw[i] == '.' {
		j := i + 1
		for j < len(raw) && isDigit(raw[j]) {
			j++
		}
		digits = append(digits, raw[i+1:j]...)
		exp -= int64(j - i - 1)
		i = j
	}
	if i < len(raw) { // the exponent
		e := raw[i+1:]
		if len(e) > 16 {
			return "x" + string(raw) // absurd, and not worth an arbitrary-precision sum
		}
		v, err := strconv.ParseInt(string(e), 10, 64)
		if err != nil {
			return "x" + string(raw)
		}
		exp += v
	}
	k := 0
	for k < len(digits) && digits[k] == '0' {
		k++
	}
	digits = digits[k:]
	if len(digits) == 0 {
		return "0"
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	sb.Write(digits)
	sb.WriteByte('e')
	sb.WriteString(strconv.FormatInt(exp, 10))
	return sb.String()
}

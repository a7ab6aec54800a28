// This file turns the JSON of tool-call arguments that is still arriving into valid JSON,
// so a partial message can show (and encode) the arguments streamed so far. PartialJSON
// does it incrementally, piece by piece, at a cost per piece that does not grow with what
// arrived before; CloseJSON is the one-shot form.

package wire

// PartialJSON holds a JSON document that arrives in pieces and keeps, after each piece, a
// valid JSON document that keeps as much of the text so far as it can (see CloseJSON for
// the rules). It scans every byte once and keeps the scanner's state between pieces, so a
// piece costs O(len(piece)) to scan and Closed costs O(the bytes that became final since
// the last call + the closing suffix), never O(everything so far).
//
// The zero value is ready to use. A PartialJSON is not safe for concurrent use.
type PartialJSON struct {
	raw []byte // every byte written

	// view is the last closed document: raw[:viewN] followed by its closing suffix.
	view  []byte
	viewN int

	// work counts the bytes scanned and copied, so tests can check the cost is linear.
	work int

	// The scanner (CloseJSON's rules).
	pos       int  // bytes of raw scanned
	started   bool // the first byte that is not a space was '{' or '['
	dead      bool // nothing valid can be made of raw any more, whatever follows
	stack     []byte
	inString  bool
	escape    bool
	uLeft     int  // hex digits of a \u escape still to skip
	isKey     bool // the open string is an object key
	expectKey bool // after '{' or a ',' inside an object, until the key starts
	inAtom    bool // inside a number or literal (or something that claims to be one)
	// safe is the longest prefix that ends after a complete value or an opening bracket
	// (when hasSafe), and safeOK whether that prefix closes into valid JSON. strSafe is the
	// last place inside the open string where it can be cut (not inside an escape), and
	// strOK whether the text up to it is the start of valid JSON.
	hasSafe bool
	safe    int
	safeOK  bool
	strSafe int
	strOK   bool

	// The validator: whether raw so far can start a valid JSON document. It replaces the
	// json.Valid check of the closed text, which would cost O(everything so far).
	bad     bool // raw has a byte that no valid JSON document could have there
	v       vState
	depth   int    // open containers
	escFrom vState // the string state an escape returns to
	hex     int    // hex digits of a \u escape seen
	num     numState
	lit     string // the rest of the literal being matched (after its first letter)
}

// vState is where the validator is in the JSON grammar.
type vState uint8

const (
	vValue      vState = iota // a value must come
	vValueOrEnd               // after '[': a value or ']'
	vKeyOrEnd                 // after '{': a key or '}'
	vKey                      // after ',' in an object: a key
	vColon                    // after a key
	vAfterValue               // after a value inside a container: ',' or its closer
	vDone                     // after the top-level value
	vString                   // in a string value
	vKeyString                // in a key
	vEscape                   // after '\' in a string
	vHex                      // in the four hex digits of \u
	vNumber                   // in a number (num says where)
	vLiteral                  // in true, false or null (lit says what is left)
)

// maxDepth is the deepest nesting encoding/json accepts.
const maxDepth = 10000

// numState is where a number is in its grammar: -? (0|[1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
type numState uint8

const (
	nMinus numState = iota // after '-'
	nZero                  // after the leading 0
	nInt                   // in the integer digits
	nDot                   // after '.'
	nFrac                  // in the fraction digits
	nE                     // after 'e' or 'E'
	nESign                 // after the exponent's sign
	nExp                   // in the exponent digits
)

// complete reports whether a number may end in state n.
func (n numState) complete() bool { return n == nZero || n == nInt || n == nFrac || n == nExp }

// Write appends p to the document. It never fails.
func (d *PartialJSON) Write(p []byte) (int, error) {
	d.raw = append(d.raw, p...)
	d.scan()
	return len(p), nil
}

// WriteString appends s to the document. It never fails.
func (d *PartialJSON) WriteString(s string) (int, error) {
	d.raw = append(d.raw, s...)
	d.scan()
	return len(s), nil
}

// Raw returns every byte written so far. The caller must not modify it; it is valid until
// the next Write.
func (d *PartialJSON) Raw() []byte { return d.raw }

// Closed returns the valid JSON document made of the text so far, or nil when nothing
// useful can be made of it yet (or ever: a text that does not start with an object or
// array). The result is d's own buffer: it is valid until the next call of a method of d,
// and must not be modified.
func (d *PartialJSON) Closed() []byte {
	if d.dead || !d.started {
		return nil
	}
	var cut int
	quote := false
	switch {
	case d.inString && !d.isKey && d.strOK:
		cut, quote = d.strSafe, true
	case d.hasSafe && d.safeOK:
		cut = d.safe
	default:
		return nil
	}
	if cut < d.viewN {
		d.viewN = cut
	}
	d.work += cut - d.viewN
	d.view = append(d.view[:d.viewN], d.raw[d.viewN:cut]...)
	d.viewN = cut
	if quote {
		d.view = append(d.view, '"')
	}
	d.view = closeStack(d.view, d.stack)
	d.work += len(d.view) - cut
	return d.view
}

// scan takes the bytes of raw not scanned yet.
func (d *PartialJSON) scan() {
	s := d.raw
	for ; d.pos < len(s) && !d.dead; d.pos++ {
		i, c := d.pos, s[d.pos]
		d.work++
		if !d.started {
			if isSpace(c) {
				continue
			}
			if c != '{' && c != '[' {
				d.dead = true
				return
			}
			d.started = true
		}
		if d.inAtom && (isSpace(c) || c == ',' || c == ':' || c == ']' || c == '}') {
			// A number or literal is complete only when something follows it.
			d.inAtom = false
			d.hasSafe, d.safe, d.safeOK = true, i, !d.bad && d.atomComplete()
		}
		if !d.bad && !d.validate(c) {
			d.bad = true
		}
		d.step(i, c)
	}
}

// step is CloseJSON's scanner taking byte c at index i.
func (d *PartialJSON) step(i int, c byte) {
	if d.inString {
		switch {
		case d.uLeft > 0:
			// The four hex digits of \uXXXX: the string can be cut only after them.
			d.uLeft--
			if d.uLeft == 0 {
				d.setStrSafe(i + 1)
			}
		case d.escape:
			d.escape = false
			if c == 'u' {
				d.uLeft = 4
				return
			}
			d.setStrSafe(i + 1)
		case c == '\\':
			d.escape = true
		case c == '"':
			d.inString = false
			if d.isKey {
				d.isKey = false
			} else {
				d.mark(i + 1)
			}
		default:
			d.setStrSafe(i + 1)
		}
		return
	}
	if d.inAtom {
		return
	}
	switch c {
	case '{', '[':
		d.stack = append(d.stack, c)
		d.expectKey = c == '{'
		d.mark(i + 1)
	case '}', ']':
		if len(d.stack) == 0 {
			d.dead = true
			return
		}
		d.stack = d.stack[:len(d.stack)-1]
		d.expectKey = false
		d.mark(i + 1)
	case '"':
		d.inString = true
		d.isKey = d.expectKey
		d.expectKey = false
		d.setStrSafe(i + 1)
	case ',':
		d.expectKey = len(d.stack) > 0 && d.stack[len(d.stack)-1] == '{'
	case ':':
	default:
		if !isSpace(c) {
			d.inAtom = true
		}
	}
}

// mark records that raw[:end] ends after a complete value or an opening bracket.
func (d *PartialJSON) mark(end int) { d.hasSafe, d.safe, d.safeOK = true, end, !d.bad }

func (d *PartialJSON) setStrSafe(end int) { d.strSafe, d.strOK = end, !d.bad }

// atomComplete reports whether the validator is at the end of a complete number or
// literal.
func (d *PartialJSON) atomComplete() bool {
	switch d.v {
	case vNumber:
		return d.num.complete()
	case vLiteral:
		return d.lit == ""
	}
	return false
}

// validate takes byte c into the validator and reports whether the text is still the start
// of a valid JSON document. It is called from the first byte of the top-level value on.
func (d *PartialJSON) validate(c byte) bool {
	switch d.v {
	case vString, vKeyString, vEscape, vHex:
		return d.validateInString(c)
	case vNumber, vLiteral:
		return d.validateAtom(c)
	}
	if isSpace(c) {
		return true
	}
	return d.validateStructure(c)
}

// validateInString is validate inside a string: its characters, escapes and \u digits.
func (d *PartialJSON) validateInString(c byte) bool {
	switch d.v {
	case vString, vKeyString:
		switch {
		case c == '"':
			if d.v == vKeyString {
				d.v = vColon
			} else {
				d.valueDone()
			}
		case c == '\\':
			d.escFrom, d.v = d.v, vEscape
		case c < 0x20:
			return false
		}
		return true
	case vEscape:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			d.v = d.escFrom
		case 'u':
			d.v, d.hex = vHex, 0
		default:
			return false
		}
		return true
	case vHex:
		if !isHex(c) {
			return false
		}
		if d.hex++; d.hex == 4 {
			d.v = d.escFrom
		}
		return true
	}
	return true
}

// validateAtom is validate inside a number or a literal (true, false, null): c belongs to it,
// or ends it and is validated as what follows.
func (d *PartialJSON) validateAtom(c byte) bool {
	switch d.v {
	case vNumber:
		if d.numStep(c) {
			return true
		}
		if !d.num.complete() {
			return false
		}
		d.valueDone()
		return d.validate(c)
	case vLiteral:
		if d.lit != "" {
			if c != d.lit[0] {
				return false
			}
			d.lit = d.lit[1:]
			return true
		}
		d.valueDone()
		return d.validate(c)
	}
	return true
}

// validateStructure is validate between values: c opens a value, names a key, or is the
// punctuation the grammar expects next.
func (d *PartialJSON) validateStructure(c byte) bool {
	switch d.v {
	case vValue, vValueOrEnd:
		switch {
		case c == ']' && d.v == vValueOrEnd:
			d.depth--
			d.valueDone()
		case c == '{' || c == '[':
			// encoding/json refuses deeper documents, so the closed text would not be
			// valid (and the tool could not decode it) either.
			if d.depth++; d.depth > maxDepth {
				return false
			}
			d.v = vKeyOrEnd
			if c == '[' {
				d.v = vValueOrEnd
			}
		case c == '"':
			d.v = vString
		case c == '-':
			d.v, d.num = vNumber, nMinus
		case c == '0':
			d.v, d.num = vNumber, nZero
		case c >= '1' && c <= '9':
			d.v, d.num = vNumber, nInt
		case c == 't':
			d.v, d.lit = vLiteral, "rue"
		case c == 'f':
			d.v, d.lit = vLiteral, "alse"
		case c == 'n':
			d.v, d.lit = vLiteral, "ull"
		default:
			return false
		}
	case vKeyOrEnd, vKey:
		switch {
		case c == '"':
			d.v = vKeyString
		case c == '}' && d.v == vKeyOrEnd:
			d.depth--
			d.valueDone()
		default:
			return false
		}
	case vColon:
		if c != ':' {
			return false
		}
		d.v = vValue
	case vAfterValue:
		// The scanner's stack (of the bytes before c) agrees with the grammar while the
		// text is valid.
		if len(d.stack) == 0 {
			return false
		}
		top := d.stack[len(d.stack)-1]
		switch {
		case c == ',' && top == '{':
			d.v = vKey
		case c == ',':
			d.v = vValue
		case (c == '}' && top == '{') || (c == ']' && top == '['):
			d.depth--
			d.valueDone()
		default:
			return false
		}
	default: // vDone: only spaces may follow the top-level value
		return false
	}
	return true
}

// numStep takes c into the number and reports whether it belongs to it.
func (d *PartialJSON) numStep(c byte) bool {
	digit := c >= '0' && c <= '9'
	switch d.num {
	case nMinus:
		switch {
		case c == '0':
			d.num = nZero
		case digit:
			d.num = nInt
		default:
			return false
		}
	case nZero, nInt:
		switch {
		case digit && d.num == nInt:
		case c == '.':
			d.num = nDot
		case c == 'e' || c == 'E':
			d.num = nE
		default:
			return false
		}
	case nDot, nFrac:
		switch {
		case digit:
			d.num = nFrac
		case (c == 'e' || c == 'E') && d.num == nFrac:
			d.num = nE
		default:
			return false
		}
	case nE:
		switch {
		case c == '+' || c == '-':
			d.num = nESign
		case digit:
			d.num = nExp
		default:
			return false
		}
	case nESign, nExp:
		if !digit {
			return false
		}
		d.num = nExp
	}
	return true
}

// valueDone moves the validator past a complete value.
func (d *PartialJSON) valueDone() {
	if d.depth == 0 {
		d.v = vDone
		return
	}
	d.v = vAfterValue
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// CloseJSON returns a valid JSON document that keeps as much of the prefix s as it can:
// an open string value is closed, an incomplete key, literal or number is dropped with the
// comma or colon before it, and open objects and arrays are closed. It returns nil when
// nothing useful can be made of s (empty, or not starting with an object or array).
// The result is a new slice; s is not modified. It costs O(len(s)); to close a document
// that grows piece by piece, use PartialJSON, whose cost per piece does not grow.
func CloseJSON(s []byte) []byte {
	var d PartialJSON
	d.Write(s)
	return d.Closed()
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

// This file decodes tool arguments into the tree the schema validator wants, without a
// json.Decoder: the common case (ASCII keys and strings, no escapes) costs a fraction of
// the general path, which takes over for anything else.

package toolexec

import (
	"encoding/json"
	"errors"
	"strconv"
)

var errSlow = errors.New("slow path")

// maxDepth is the deepest nesting decodeArgs takes: encoding/json's limit, so the fast path
// never accepts what the general path refuses, and arguments nested without end cannot
// grow the goroutine's stack without bound.
const maxDepth = 10000

// decodeArgs decodes JSON into the any-tree jsonschema wants (numbers as json.Number)
// without a json.Decoder. It reports errSlow for anything it does not handle, and never
// returns a value for text that encoding/json would refuse.
func decodeArgs(b []byte) (any, error) {
	p := parser{b: b}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, errSlow
	}
	return v, nil
}

type parser struct {
	b     []byte
	i     int
	depth int // open objects and arrays
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, error) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, errSlow
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		if p.depth++; p.depth > maxDepth {
			return nil, errSlow
		}
		var v any
		var err error
		if c == '[' {
			v, err = p.array()
		} else {
			v, err = p.object()
		}
		p.depth--
		return v, err
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.b) {
			c := p.b[p.i]
			if c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9') {
				p.i++
				continue
			}
			break
		}
		lit := p.b[start:p.i]
		if v := smallNumber(lit); v != nil {
			return v, nil
		}
		n := json.Number(lit)
		if _, err := n.Float64(); err != nil || !json.Valid(lit) {
			return nil, errSlow
		}
		return n, nil
	case lit(p.b[p.i:], "true"):
		p.i += 4
		return true, nil
	case lit(p.b[p.i:], "false"):
		p.i += 5
		return false, nil
	case lit(p.b[p.i:], "null"):
		p.i += 4
		return nil, nil
	}
	return nil, errSlow
}

// object decodes the object that starts at p.i.
func (p *parser) object() (any, error) {
	p.i++
	m := make(map[string]any)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.ws()
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, errSlow
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.ws()
		if p.i >= len(p.b) {
			return nil, errSlow
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			return m, nil
		}
		return nil, errSlow
	}
}

// array decodes the array that starts at p.i.
func (p *parser) array() (any, error) {
	p.i++
	a := []any{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, errSlow
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == ']' {
			p.i++
			return a, nil
		}
		return nil, errSlow
	}
}

func lit(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

func (p *parser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", errSlow
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return string(p.b[start:j]), nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", errSlow
		}
	}
	return "", errSlow
}

// smallNumbers holds the numbers 0 to 255 as the json.Number values decodeArgs returns,
// already boxed: the common small arguments (counts, limits, line numbers) then cost no
// allocation.
var smallNumbers = func() (t [256]any) {
	for i := range t {
		t[i] = json.Number(strconv.Itoa(i))
	}
	return t
}()

// smallNumber returns lit's boxed value when lit is a plain integer from 0 to 255 written
// without leading zeros, else nil.
func smallNumber(lit []byte) any {
	if len(lit) == 0 || len(lit) > 3 || (lit[0] == '0' && len(lit) > 1) {
		return nil
	}
	n := 0
	for _, c := range lit {
		if c < '0' || c > '9' {
			return nil
		}
		n = n*10 + int(c-'0')
	}
	if n > 255 {
		return nil
	}
	return smallNumbers[n]
}

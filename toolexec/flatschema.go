// This file holds the fast check for the common tool schema (an object of typed properties,
// required names, enums and bounds, no $ref or combinators): it accepts valid arguments
// without the jsonschema library's allocations, and hands everything else to the library,
// which alone produces the error messages.

package toolexec

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// kind is a bit set of JSON types, as the "type" keyword names them.
type kind uint8

const (
	kindNull kind = 1 << iota
	kindBool
	kindObject
	kindArray
	kindString
	kindNumber  // any number
	kindInteger // a number written without fraction or exponent (see fastNode.accepts)
)

var kindNames = map[string]kind{
	"null": kindNull, "boolean": kindBool, "object": kindObject, "array": kindArray,
	"string": kindString, "number": kindNumber, "integer": kindInteger,
}

// fastNode is one schema of the subset the fast check understands. A zero field means the
// keyword is absent.
type fastNode struct {
	types    kind // 0: any type
	enum     []string
	hasEnum  bool
	props    map[string]*fastNode
	required []string
	closed   bool // additionalProperties: false
	items    *fastNode

	minLen, maxLen     int // -1: absent
	minItems, maxItems int // -1: absent
	min, max           bound
}

// bound is a numeric limit (minimum, exclusiveMinimum, maximum or exclusiveMaximum).
type bound struct {
	set       bool
	exclusive bool
	v         float64
	exact     bool // v is the literal's exact value
}

// annotations are the keywords that never change whether an instance is valid.
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// compileFast returns the fast check for a tool's parameters, or nil when the schema uses
// anything outside the subset (then every call is validated by the library). The schema
// must already have compiled with the library, which has checked its shape.
func compileFast(params json.RawMessage) *fastNode {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	if d.Decode(&doc) != nil {
		return nil
	}
	n := fastCompile(doc, 0)
	if n == nil || n.types != kindObject {
		return nil
	}
	return n
}

// fastCompile compiles one schema object of the subset, or returns nil.
func fastCompile(doc map[string]any, depth int) *fastNode {
	if depth > 8 {
		return nil
	}
	n := &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	for k, v := range doc {
		var ok bool
		switch k {
		case "type":
			n.types, ok = fastTypes(v)
		case "enum":
			n.enum, ok = stringList(v)
			n.hasEnum = true
		case "properties":
			var m map[string]any
			if m, ok = v.(map[string]any); ok {
				n.props = make(map[string]*fastNode, len(m))
				for name, sub := range m {
					sm, isObj := sub.(map[string]any)
					if !isObj {
						return nil
					}
					if n.props[name] = fastCompile(sm, depth+1); n.props[name] == nil {
						return nil
					}
				}
			}
		case "required":
			n.required, ok = stringList(v)
		case "additionalProperties":
			var b bool
			b, ok = v.(bool)
			n.closed = ok && !b
		case "items":
			var m map[string]any
			if m, ok = v.(map[string]any); ok {
				n.items = fastCompile(m, depth+1)
				ok = n.items != nil
			}
		case "minLength":
			n.minLen, ok = count(v)
		case "maxLength":
			n.maxLen, ok = count(v)
		case "minItems":
			n.minItems, ok = count(v)
		case "maxItems":
			n.maxItems, ok = count(v)
		case "minimum", "exclusiveMinimum":
			ok = !n.min.set
			if ok {
				n.min, ok = numBound(v, k == "exclusiveMinimum")
			}
		case "maximum", "exclusiveMaximum":
			ok = !n.max.set
			if ok {
				n.max, ok = numBound(v, k == "exclusiveMaximum")
			}
		default:
			ok = annotations[k]
		}
		if !ok {
			return nil
		}
	}
	return n
}

func fastTypes(v any) (kind, bool) {
	switch v := v.(type) {
	case string:
		k, ok := kindNames[v]
		return k, ok
	case []any:
		var ks kind
		for _, x := range v {
			s, ok := x.(string)
			if !ok || kindNames[s] == 0 {
				return 0, false
			}
			ks |= kindNames[s]
		}
		return ks, len(v) > 0
	}
	return 0, false
}

func stringList(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, x := range a {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil && i >= 0
}

func numBound(v any, exclusive bool) (bound, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return bound{}, false
	}
	f, exact, ok := number(n)
	return bound{set: true, exclusive: exclusive, v: f, exact: exact}, ok
}

// number parses a JSON number; exact reports whether f is its value exactly (an integer
// literal of at most 15 digits).
func number(n json.Number) (f float64, exact, ok bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false, false
	}
	return f, isInt(n) && len(n) <= 15, true
}

// isInt reports whether a JSON number literal has no fraction and no exponent.
func isInt(n json.Number) bool {
	s := string(n)
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// accepts reports whether v is certainly valid against n. false means "not known": the
// caller then asks the library, so accepts may be stricter than the schema but never
// laxer.
func (n *fastNode) accepts(v any) bool {
	switch v := v.(type) {
	case nil:
		return n.has(kindNull) && !n.hasEnum
	case bool:
		return n.has(kindBool) && !n.hasEnum
	case string:
		if !n.has(kindString) {
			return false
		}
		if n.hasEnum && !hasString(n.enum, v) {
			return false
		}
		if n.minLen >= 0 || n.maxLen >= 0 {
			l := utf8.RuneCountInString(v)
			if (n.minLen >= 0 && l < n.minLen) || (n.maxLen >= 0 && l > n.maxLen) {
				return false
			}
		}
		return true
	case json.Number:
		integer := isInt(v)
		if n.hasEnum || !(n.has(kindNumber) || (integer && n.types&kindInteger != 0)) {
			return false
		}
		if !n.min.set && !n.max.set {
			return true
		}
		f, exact, ok := number(v)
		return ok && n.min.below(f, exact) && n.max.above(f, exact)
	case map[string]any:
		if !n.has(kindObject) || n.hasEnum {
			return false
		}
		for _, name := range n.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		for k, x := range v {
			p := n.props[k]
			if p == nil {
				if n.closed {
					return false
				}
				continue
			}
			if !p.accepts(x) {
				return false
			}
		}
		return true
	case []any:
		if !n.has(kindArray) || n.hasEnum {
			return false
		}
		if (n.minItems >= 0 && len(v) < n.minItems) || (n.maxItems >= 0 && len(v) > n.maxItems) {
			return false
		}
		if n.items != nil {
			for _, x := range v {
				if !n.items.accepts(x) {
					return false
				}
			}
		}
		return true
	}
	return false
}

func (n *fastNode) has(k kind) bool { return n.types == 0 || n.types&k != 0 }

// below reports whether f certainly satisfies a lower bound b. When both values are exact
// they are compared as they are; otherwise only a strict inequality of the rounded values
// is trusted (rounding keeps order, so it implies the same of the exact values).
func (b bound) below(f float64, exact bool) bool {
	if !b.set {
		return true
	}
	if exact && b.exact && !b.exclusive {
		return f >= b.v
	}
	return f > b.v
}

// above reports whether f certainly satisfies an upper bound b.
func (b bound) above(f float64, exact bool) bool {
	if !b.set {
		return true
	}
	if exact && b.exact && !b.exclusive {
		return f <= b.v
	}
	return f < b.v
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

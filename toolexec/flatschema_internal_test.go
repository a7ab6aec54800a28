package toolexec

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Schemas of the subset, as the built-in tools and pi's benchmark write them.
var fastSchemas = []string{
	`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`,
	`{"type":"object"}`,
	`{"type":"object","properties":{"command":{"type":"string","minLength":1,"description":"d"},"timeout":{"type":"number","exclusiveMinimum":0}},"required":["command"],"additionalProperties":false}`,
	`{"type":"object","properties":{"pattern":{"type":"string","minLength":1},"ignoreCase":{"type":"boolean"},"limit":{"type":"integer","minimum":1,"maximum":1000}},"required":["pattern"],"additionalProperties":false}`,
	`{"type":"object","properties":{"path":{"type":"string"},"edits":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{"oldText":{"type":"string","minLength":1},"newText":{"type":"string","maxLength":4}},"required":["oldText","newText"],"additionalProperties":false}}},"required":["path","edits"]}`,
	`{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]},"n":{"type":["integer","null"],"exclusiveMaximum":10},"x":{"type":"number","maximum":2.5}},"additionalProperties":true}`,
}

// Schemas outside the subset get no fast check: every call goes to the library.
func TestFastCheckOnlyForTheSubset(t *testing.T) {
	for _, s := range fastSchemas {
		if compileFast(json.RawMessage(s)) == nil {
			t.Errorf("no fast check for %s", s)
		}
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
		`{"type":"object","properties":{"a":{"enum":[1,2]}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
		`{"type":"array"}`,
		`{"type":"object","properties":{"a":{"type":"integer","minimum":1,"exclusiveMinimum":0}}}`,
	} {
		if compileFast(json.RawMessage(s)) != nil {
			t.Errorf("fast check for %s, which it does not understand", s)
		}
	}
}

// R6: the fast check never accepts what the library refuses, and it accepts the ordinary
// valid arguments (else it would save nothing). Instances are drawn at random from values
// near each keyword's edges.
func TestFastCheckNeverLaxerThanTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range fastSchemas {
		sch, err := compileSchema("fastcheck", json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		var libOK, fastOK int
		for range 4000 {
			text := randomArgs(rng, 0)
			v, err := decodeArgs([]byte(text))
			if err != nil {
				if v, err = unmarshalSlow(text); err != nil {
					t.Fatalf("%s: %v", text, err)
				}
			}
			lib := sch.lib.Validate(v) == nil
			fast := sch.fast.accepts(v)
			if fast && !lib {
				t.Fatalf("schema %s: fast check accepts %s, the library refuses it", s, text)
			}
			if lib {
				libOK++
			}
			if fast {
				fastOK++
			}
		}
		// Only integers written with a fraction or exponent and numbers at exact float edges
		// may go to the library while valid.
		if libOK > 0 && fastOK*10 < libOK*8 {
			t.Errorf("schema %s: fast check accepted %d of the %d valid instances", s, fastOK, libOK)
		}
	}
}

// Arguments the model writes for pi's benchmark tool and the built-in ones pass the fast
// check; wrong ones go to the library, whose message names the field (R6).
func TestFastCheckCommonArguments(t *testing.T) {
	cases := []struct {
		schema int
		args   string
		fast   bool
		lib    bool
	}{
		{0, `{"i":3}`, true, true},
		{0, `{"i":-3.5e2}`, true, true},
		{0, `{"i":"3"}`, false, false},
		{0, `{}`, false, false},
		{2, `{"command":"ls -la","timeout":1.5}`, true, true},
		{2, `{"command":"","timeout":1}`, false, false},
		{2, `{"command":"x","timeout":0}`, false, false},
		{2, `{"command":"x","other":1}`, false, false},
		{3, `{"pattern":"x","limit":1000}`, true, true},
		{3, `{"pattern":"x","limit":1001}`, false, false},
		{3, `{"pattern":"x","limit":1}`, true, true},
		{3, `{"pattern":"x","limit":0}`, false, false},
		{3, `{"pattern":"x","limit":5.0}`, false, true}, // an integer written with a fraction: the library decides
		{4, `{"path":"a","edits":[{"oldText":"é","newText":"éééé"}]}`, true, true},
		{4, `{"path":"a","edits":[{"oldText":"a","newText":"ééééé"}]}`, false, false},
		{4, `{"path":"a","edits":[]}`, false, false},
		{5, `{"mode":"b","n":null,"x":2.4,"extra":[1]}`, true, true},
		{5, `{"x":2.5}`, false, true}, // at a bound that is not an integer: the library decides
		{5, `{"mode":"c"}`, false, false},
		{5, `{"n":10}`, false, false},
		{5, `{"n":9}`, true, true},
		{5, `{"x":2.50000000000000001}`, false, false}, // rounds to the bound: the library decides
	}
	for _, c := range cases {
		sch, err := compileSchema("fastcheck", json.RawMessage(fastSchemas[c.schema]))
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeArgs([]byte(c.args))
		if err != nil {
			v, err = unmarshalSlow(c.args)
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := sch.fast.accepts(v); got != c.fast {
			t.Errorf("schema %d, %s: fast check says %v, want %v", c.schema, c.args, got, c.fast)
		}
		if got := sch.lib.Validate(v) == nil; got != c.lib {
			t.Errorf("schema %d, %s: library says %v, want %v", c.schema, c.args, got, c.lib)
		}
	}
}

func unmarshalSlow(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	return v, d.Decode(&v)
}

var fieldNames = []string{"i", "command", "timeout", "pattern", "ignoreCase", "limit", "path", "edits", "oldText", "newText", "mode", "n", "x", "other"}

func randomArgs(rng *rand.Rand, depth int) string {
	var sb strings.Builder
	sb.WriteByte('{')
	n := rng.IntN(5)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%q:%s", fieldNames[rng.IntN(len(fieldNames))], randomValue(rng, depth))
	}
	sb.WriteByte('}')
	return sb.String()
}

func randomValue(rng *rand.Rand, depth int) string {
	switch k := rng.IntN(10); {
	case k == 0:
		return "null"
	case k == 1:
		return []string{"true", "false"}[rng.IntN(2)]
	case k <= 4:
		return []string{"0", "1", "-1", "3", "9", "10", "11", "1000", "1001", "2.5", "2.4999", "2.5001", "1.0", "1e2", "-0", "0.5", "123456789012345678901"}[rng.IntN(17)]
	case k <= 7:
		return []string{`""`, `"x"`, `"a"`, `"b"`, `"c"`, `"abcd"`, `"abcde"`, `"éé"`}[rng.IntN(8)]
	case k == 8 && depth < 2:
		var sb strings.Builder
		sb.WriteByte('[')
		for i := range rng.IntN(5) {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(randomArgs(rng, depth+1))
		}
		sb.WriteByte(']')
		return sb.String()
	case depth < 2:
		return randomArgs(rng, depth+1)
	}
	return "7"
}

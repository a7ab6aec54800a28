package toolexec

// Tests of the fast decoder of tool arguments against encoding/json (through jsonschema's
// decoder, the general path prepare falls back to): wherever the fast path returns a value,
// the text is valid JSON and the value is the one the general path gives.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkDecode fails the test if decodeArgs accepts b where encoding/json does not, or
// decodes it into another value than the general path does.
func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	got, err := decodeArgs(b)
	if err != nil {
		if !errors.Is(err, errSlow) {
			t.Fatalf("decodeArgs(%s) failed with %v, want errSlow (the general path decides)", short(b), err)
		}
		return
	}
	if !json.Valid(b) {
		t.Fatalf("decodeArgs(%s) accepted text encoding/json refuses", short(b))
	}
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decodeArgs(%s) accepted text the general path refuses: %v", short(b), err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArgs(%s) = %#v, the general path gives %#v", short(b), got, want)
	}
}

// short quotes b, cut to 100 bytes, for a failure message.
func short(b []byte) string {
	if len(b) > 100 {
		return fmt.Sprintf("%q… (%d bytes)", b[:100], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func TestDecodeArgsAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"path":"a.txt","n":12,"ok":true,"z":null,"f":-1.5e3,"a":[1,"x",{}]}`,
		` {"a" : [ 1 , 2 ] } `, `{"a":1,"a":2}`, `"s"`, `0`, `-0`, `01`, `1.`, `.5`, `1e400`,
		`-`, `+1`, `1-2`, `truefalse`, `[truefalse]`, `[true false]`, `{"a":1,}`, `[1,]`,
		`{"é":1}`, `{"a\"b":1}`, "{\"a\tb\":1}", `{"a":"\u00e9"}`, `[`, `{"a"`, `{"a":`, `nul`,
		`{"a":1}x`, `{"a":1} `, `[[[]]]`, `{1:2}`,
		// Small integers come from a table of boxed values.
		`[0,7,9,10,99,100,255,256,999,1000,007,00,-1,1.0,2e1]`, `255`, `256`, `{"i":3}`,
	} {
		checkDecode(t, []byte(s))
	}
}

// Nesting beyond encoding/json's limit is left to the general path (which refuses it), so
// the fast path neither accepts what encoding/json refuses nor grows the stack without
// bound on arguments nested without end. Before the limit, 10,001 nested arrays decoded.
func TestDecodeArgsDepthLimit(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1, 100 * maxDepth} {
		b := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		_, err := decodeArgs(b)
		if ok := err == nil; ok != (depth <= maxDepth) {
			t.Errorf("depth %d: decodeArgs error %v, want a value only up to depth %d", depth, err, maxDepth)
		}
		checkDecode(t, b)
	}
}

// FuzzDecodeArgs: decodeArgs never panics, and whenever it returns a value the text is
// valid JSON and the value is the general path's.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt","edits":[{"oldText":"a","newText":"b"}]}`, `[1,-2.5e3,true,null,"x"]`, `{"a":{"b":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
	})
}

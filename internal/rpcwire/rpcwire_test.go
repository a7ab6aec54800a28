// This file tests Scan against encoding/json (the same verdicts, the same top-level members)
// on chosen inputs and under fuzzing, its depth limit far beyond what a recursive parser
// survives, and IDKey's matching of ids.

package rpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// checkAgainstEncodingJSON fails t when Scan and encoding/json disagree about msg: whether it
// is valid, and (for an object) where its members are.
func checkAgainstEncodingJSON(t *testing.T, msg []byte) {
	t.Helper()
	env, err := Scan(msg)
	valid := json.Valid(msg)
	var se *SyntaxError
	switch {
	case err == nil && !valid:
		t.Fatalf("Scan accepted what encoding/json refuses: %q", msg)
	case err != nil && valid:
		t.Fatalf("Scan refused what encoding/json accepts: %v: %q", err, msg)
	case err != nil && !errors.As(err, &se) && !errors.Is(err, ErrTooDeep):
		t.Fatalf("Scan failed with %T %v, want *SyntaxError or ErrTooDeep", err, err)
	case errors.As(err, &se) && (se.Offset < 0 || se.Offset > len(msg)):
		t.Fatalf("SyntaxError offset %d outside the message of %d bytes", se.Offset, len(msg))
	}
	if err != nil {
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(msg, &members) != nil || members == nil {
		if env.Top == '{' {
			t.Fatalf("Top is '{' but encoding/json found no object: %q", msg)
		}
		return
	}
	if env.Top != '{' {
		t.Fatalf("Top is %q for an object: %q", env.Top, msg)
	}
	for name, got := range map[string][]byte{"jsonrpc": env.JSONRPC, "id": env.ID, "method": env.Method, "params": env.Params, "result": env.Result, "error": env.Error} {
		want, ok := members[name]
		if ok != (got != nil) || !bytes.Equal(got, want) {
			t.Fatalf("member %s: Scan found %q (present %v), encoding/json %q (present %v), in %q", name, got, got != nil, want, ok, msg)
		}
	}
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,2,{"b":null}]}}`,
		` {"id":"x","result":null} `,
		`{"id":-1.5e+10,"error":{"code":-32000,"message":"m"}}`,
		`{"\u0069d":7,"me\u0074hod":"x","params":[]}`, // escaped member names
		`{"id":1,"id":2}`,                             // the last one counts
		`{"params":{"id":5},"id":6}`,
		`{}`, `[]`, `[{}]`, `[[[]]]`, `"s"`, `0`, `-0`, `1.5`, `1e2`, `1E-2`, `true`, `false`, `null`,
		`{"a":"\"\\\/\b\f\n\r\t\u00e9"}`,
		"{\"a\":\"\xff\xfe bytes\"}", // invalid UTF-8 is encoding/json's business, not Scan's
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `NaN`, `tru`, `nul`, `truex`,
		`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", `{"a":1}}`, `{"a":1} x`, `[1]]`,
		`{"a":[1,{"b":2]}}`, `[{"a":1]`, `{"a":[}`,
	} {
		t.Run(msg, func(t *testing.T) { checkAgainstEncodingJSON(t, []byte(msg)) })
	}
}

func TestScanDepth(t *testing.T) {
	nest := func(depth int, open, close string) []byte {
		return []byte(strings.Repeat(open, depth) + strings.Repeat(close, depth))
	}
	// At the limit: accepted, as encoding/json accepts it.
	for _, msg := range [][]byte{nest(MaxDepth, "[", "]"), []byte(strings.Repeat(`{"a":`, MaxDepth-1) + "{}" + strings.Repeat("}", MaxDepth-1))} {
		if _, err := Scan(msg); err != nil || !json.Valid(msg) {
			t.Errorf("depth %d: Scan %v, json.Valid %v; want both to accept", MaxDepth, err, json.Valid(msg))
		}
	}
	// One beyond: ErrTooDeep, with the envelope still found.
	msg := []byte(`{"jsonrpc":"2.0","id":"deep","method":"m","params":` + string(nest(MaxDepth, "[", "]")) + `}`)
	env, err := Scan(msg)
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth %d: got %v, want ErrTooDeep", MaxDepth+1, err)
	}
	if string(env.ID) != `"deep"` || string(env.Method) != `"m"` || len(env.Params) != 2*MaxDepth {
		t.Errorf("envelope of a too deep message: id %s method %s, %d bytes of params", env.ID, env.Method, len(env.Params))
	}
	// Far beyond (the frame that crashed pid: a recursive parser needs about 1 GB of stack
	// for it), on a small stack: Scan must not recurse.
	huge := bytes.Repeat([]byte("["), 10_000_000)
	done := make(chan error, 1)
	go func() { _, err := Scan(huge); done <- err }()
	var se *SyntaxError
	if err := <-done; !errors.As(err, &se) || se.Offset != len(huge) {
		t.Errorf("10 M '[': got %v, want a SyntaxError at the end (the arrays are not closed)", err)
	}
	closed := append(bytes.Repeat([]byte("["), 5_000_000), bytes.Repeat([]byte("]"), 5_000_000)...)
	if _, err := Scan(closed); !errors.Is(err, ErrTooDeep) {
		t.Errorf("5 M closed arrays: got %v, want ErrTooDeep", err)
	}
	mismatched := append(bytes.Repeat([]byte("["), 300), bytes.Repeat([]byte("}"), 300)...)
	if _, err := Scan(mismatched); !errors.As(err, &se) {
		t.Errorf("[ closed by }: got %v, want a SyntaxError", err)
	}
}

func TestScanAllocations(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"decision":"allow","reason":"ok \"quoted\""}}`)
	if n := testing.AllocsPerRun(100, func() { Scan(msg) }); n != 0 {
		t.Errorf("Scan of a small answer allocates %v times, want 0", n)
	}
	deep := []byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Scan(deep)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4096 {
		t.Errorf("Scan of 5000 levels allocated %d bytes, want at most one bit per level", got)
	}
}

func TestString(t *testing.T) {
	for raw, want := range map[string]string{`"2.0"`: "2.0", `"2\u002e0"`: "2.0", `""`: "", `"a\"b"`: `a"b`} {
		if got, ok := String([]byte(raw)); !ok || got != want {
			t.Errorf("String(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{``, `"`, `2`, `null`, `"a`} {
		if _, ok := String([]byte(raw)); ok {
			t.Errorf("String(%s) reported a string", raw)
		}
	}
}

func TestIDKey(t *testing.T) {
	same := [][]string{
		{`100`, `1e2`, `1E+2`, `100.0`, `1000e-1`, ` 100 `, `0.001e5`},
		{`0`, `-0`, `0.0`, `0e7`, `-0.0e-3`},
		{`-1`, `-1.0`, `-10e-1`},
		{`1.5`, `15e-1`, `0.15E1`},
		{`18446744073709551616`, `1.8446744073709551616e19`},
		{`"a"`, `"\u0061"`},
	}
	keys := map[string]int{}
	for g, group := range same {
		for _, raw := range group {
			k, ok := IDKey([]byte(raw))
			if !ok {
				t.Errorf("IDKey(%s): not an id", raw)
				continue
			}
			if prev, seen := keys[k]; seen && prev != g {
				t.Errorf("IDKey(%s) = %q, the key of group %d too", raw, k, prev)
			}
			keys[k] = g
		}
		first, _ := IDKey([]byte(group[0]))
		for _, raw := range group[1:] {
			if k, _ := IDKey([]byte(raw)); k != first {
				t.Errorf("IDKey(%s) = %q, IDKey(%s) = %q: want one key", raw, k, group[0], first)
			}
		}
	}
	if str, _ := IDKey([]byte(`"1"`)); str == func() string { k, _ := IDKey([]byte(`1`)); return k }() {
		t.Errorf(`the string "1" and the number 1 share the key %q`, str)
	}
	for _, raw := range []string{`null`, `true`, `{}`, `[]`, `1.`, `01`, `"a`, ``, `+1`} {
		if k, ok := IDKey([]byte(raw)); ok {
			t.Errorf("IDKey(%s) = %q: want no id", raw, k)
		}
	}
}

// FuzzScan checks Scan against encoding/json on any input: the same verdict, the same
// members, no panic.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,"x",null,true,false,-1.5e3]}}`,
		`{"id":"a","result":{}}`, `[1,[2,[3]]]`, `{"\u0069d":1}`, `"\ud800"`, `{"a":1,"a":2}`, `  7  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkAgainstEncodingJSON(t, msg)
		if k, ok := IDKey(msg); ok {
			if _, err := Scan(msg); err != nil || (msg[skipSpace(msg, 0)] != '"' && !IsNumber(trimSpace(msg))) {
				t.Fatalf("IDKey accepted %q (key %q), which is no string or number", msg, k)
			}
		}
	})
}

func BenchmarkScanAnswer(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"decision":"allow","reason":"ok"}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		Scan(msg)
	}
}

// BenchmarkGJSONAnswer is what the native face did before Scan, for comparison.
func BenchmarkGJSONAnswer(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"decision":"allow","reason":"ok"}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		gjson.ValidBytes(msg)
		gjson.GetManyBytes(msg, "jsonrpc", "id", "method", "result", "error", "params")
	}
}

func BenchmarkScanLongString(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":3,"method":"session/steer","params":{"sessionId":"s1","text":"` + strings.Repeat("a", 1<<20) + `"}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		Scan(msg)
	}
}

package rpc

// Tests of the fast decoding of beforeToolCall answers: wherever it decodes, it gives what
// encoding/json gives; everything else is left to encoding/json.

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pid-agent/pid/internal/rpcwire"
)

func TestDecodeBeforeAnswerAgreesWithEncodingJSON(t *testing.T) {
	cases := []struct {
		raw  string
		fast bool // the fast path decodes it
	}{
		{`{"decision":"allow"}`, true},
		{` { "decision" : "deny" , "reason" : "not now" } `, true},
		{`{"reason":"r","decision":"allow"}`, true},
		{`{"decision":"allow","decision":"deny"}`, true},
		{`{}`, true},
		{`{"decision":"allowé"}`, true},
		{`{"decision":"allow\n"}`, false},
		{`{"decision":"\u0061llow"}`, false},
		{`{"Decision":"allow"}`, false}, // encoding/json matches keys without case
		{`{"decision":"allow","extra":1}`, false},
		{`{"decision":null}`, false},
		{`{"decision":1}`, false},
		{`null`, false},
		{`[]`, false},
		{"{\"decision\":\"\xff\"}", false},
	}
	for _, c := range cases {
		raw := []byte(c.raw)
		if _, err := rpcwire.Scan(raw); err != nil {
			t.Fatalf("%s: not a message Scan passes: %v", c.raw, err)
		}
		got, ok := decodeBeforeAnswer(raw)
		if ok != c.fast {
			t.Errorf("%s: fast path decodes it: %v, want %v", c.raw, ok, c.fast)
		}
		var want *beforeAnswer
		werr := json.Unmarshal(raw, &want)
		if ok && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: fast path gives %+v, encoding/json %+v (%v)", c.raw, got, want, werr)
		}
		// Through decodeAnswer, the outcome is encoding/json's in every case.
		var viaAnswer *beforeAnswer
		err := decodeAnswer(raw, &viaAnswer)
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(viaAnswer, want) {
			t.Errorf("%s: decodeAnswer gives %+v (%v), encoding/json %+v (%v)", c.raw, viaAnswer, err, want, werr)
		}
	}
}

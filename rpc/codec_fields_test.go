package rpc

// Every field of a message and of its blocks reaches the editor through the hand-written
// encoder (issue 33): internal/codectest fills each one, and fails for a field nobody listed.

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/codectest"
	"github.com/pid-agent/pid/llm"
)

func TestEncoderKeepsEveryField(t *testing.T) {
	codectest.CheckFieldsListed(t)
	full := codectest.Full()
	b, err := appendMessages(nil, full)
	if err != nil {
		t.Fatal(err)
	}
	var back []llm.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if d := cmp.Diff(full, back); d != "" {
		t.Errorf("messages lose fields through appendMessages (-sent +read):\n%s\nJSON: %s", d, b)
	}
	// A tool result's content and details, as toolEnd and afterToolCall carry them.
	r := full[2]
	b, err = appendResult(nil, event.Result{Content: r.Content, Details: r.Details})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []llm.Content
		Details any
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if d := cmp.Diff(event.Result{Content: r.Content, Details: r.Details}, event.Result{Content: res.Content, Details: res.Details}); d != "" {
		t.Errorf("a result loses fields through appendResult (-sent +read):\n%s", d)
	}
}

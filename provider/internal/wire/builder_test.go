package wire_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// seen records each sink call: the event and the partial message encoded at that moment.
type seen struct {
	steps    []string
	partials []string
	kept     []llm.Message // shallow copies, as the loop keeps them
}

func (s *seen) sink(partial *llm.Message, ev llm.StreamEvent) {
	s.steps = append(s.steps, fmt.Sprintf("%s %d %q", ev.Kind, ev.Index, ev.Delta))
	b, err := partial.AppendJSON(nil)
	if err != nil {
		panic(fmt.Sprintf("partial message does not encode at %v: %v", ev, err))
	}
	s.partials = append(s.partials, string(b))
	snap := *partial
	snap.Content = append([]llm.Content(nil), partial.Content...)
	s.kept = append(s.kept, snap)
}

func TestBuilderStreamsBlocks(t *testing.T) {
	var s seen
	b := wire.NewBuilder(s.sink)
	b.Start()
	txt := b.Open(llm.ContentText, "", "")
	b.Append(txt, "Hel")
	b.Append(txt, "")
	b.Append(txt, "lo")
	tc := b.Open(llm.ContentToolCall, "c1", "read")
	b.Append(tc, `{"path": "a`)
	b.Append(tc, `.txt"}`)
	b.Close(txt)
	b.Append(txt, "ignored after close")
	b.SetUsage(llm.Usage{Input: 1, Output: 2, Total: 3})
	msg := b.Done(llm.StopToolUse)

	want := []string{
		`start 0 ""`,
		`text_start 0 ""`,
		`text_delta 0 "Hel"`,
		`text_delta 0 "lo"`,
		`toolcall_start 1 ""`,
		`toolcall_delta 1 "{\"path\": \"a"`,
		`toolcall_delta 1 ".txt\"}"`,
		`text_end 0 ""`,
		`toolcall_end 1 ""`,
	}
	if d := cmp.Diff(want, s.steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if got := s.kept[5].Content[1].Arguments; string(got) != `{"path": "a"}` {
		t.Errorf("partial arguments after the first fragment = %s", got)
	}
	// What a sink kept is not changed by later steps.
	if got := s.kept[2].Content[0].Text; got != "Hel" {
		t.Errorf("a kept partial changed: text %q", got)
	}
	if got := s.kept[5].Content[1].Arguments; string(got) != `{"path": "a"}` {
		t.Errorf("a kept partial changed: arguments %s", got)
	}
	if msg.StopReason != llm.StopToolUse || msg.Text() != "Hello" || msg.Usage.Total != 3 {
		t.Errorf("message = %+v", msg)
	}
	if got := msg.ToolCalls(); len(got) != 1 || got[0].ID != "c1" || string(got[0].Arguments) != `{"path": "a.txt"}` {
		t.Errorf("tool calls = %+v", got)
	}
}

func TestBuilderInvalidArgumentsStayEncodable(t *testing.T) {
	var s seen
	b := wire.NewBuilder(s.sink)
	b.Start()
	tc := b.Open(llm.ContentToolCall, "c1", "edit")
	b.Append(tc, `{"path": `)
	b.Append(tc, `oops}`)
	msg := b.Done(llm.StopToolUse)
	args := msg.ToolCalls()[0].Arguments
	var str string
	if err := json.Unmarshal(args, &str); err != nil || str != `{"path": oops}` {
		t.Errorf("arguments = %s, want the text as a JSON string", args)
	}
	if _, err := msg.AppendJSON(nil); err != nil {
		t.Errorf("final message does not encode: %v", err)
	}
}

func TestBuilderFailKeepsPartial(t *testing.T) {
	var s seen
	b := wire.NewBuilder(s.sink)
	b.Start()
	txt := b.Open(llm.ContentText, "", "")
	b.Append(txt, "partial")
	tc := b.Open(llm.ContentToolCall, "c1", "read")
	tc2 := b.Open(llm.ContentToolCall, "c2", "read")
	b.Append(tc2, `{"pa`)
	n := len(s.steps)
	msg := b.Fail(llm.StopAborted, wire.Aborted)
	if len(s.steps) != n {
		t.Errorf("Fail reported steps: %v", s.steps[n:])
	}
	if msg.StopReason != llm.StopAborted || msg.ErrorMessage != wire.Aborted || msg.Text() != "partial" {
		t.Errorf("message = %+v", msg)
	}
	if a := msg.Content[tc].Arguments; string(a) != "{}" {
		t.Errorf("open call without arguments: %s, want {}", a)
	}
	if a := msg.Content[tc2].Arguments; string(a) != "{}" {
		t.Errorf("open call with a fragment: %s, want {} (the closed partial)", a)
	}
	if _, err := msg.AppendJSON(nil); err != nil {
		t.Errorf("failed message does not encode: %v", err)
	}
}

package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
)

type step struct {
	kind    llm.StreamKind
	index   int
	delta   string
	content []llm.Content
}

// record returns a sink that copies every step with the partial content at that moment.
func record(steps *[]step) llm.StreamSink {
	return func(p *llm.Message, ev llm.StreamEvent) {
		*steps = append(*steps, step{ev.Kind, ev.Index, ev.Delta, append([]llm.Content{}, p.Content...)})
	}
}

// The scripted provider streams start, then per block its start (with the block blank),
// one delta (with the block whole) and its end; the returned message is the whole turn.
func TestScriptStreams(t *testing.T) {
	args := json.RawMessage(`{"path":"a.go"}`)
	p := llm.NewScript(llm.Turn{Content: []llm.Content{llm.Thinking("hmm"), llm.Text("hi"), llm.NewToolCall("c1", "read", args)}})
	var steps []step
	msg := p.Stream(context.Background(), &llm.Request{}, record(&steps))

	blankThink, blankText, blankCall := llm.Thinking(""), llm.Text(""), llm.NewToolCall("c1", "read", nil)
	think, txt, call := llm.Thinking("hmm"), llm.Text("hi"), llm.NewToolCall("c1", "read", args)
	want := []step{
		{llm.StreamStart, 0, "", []llm.Content{}},
		{llm.StreamThinkingStart, 0, "", []llm.Content{blankThink}},
		{llm.StreamThinkingDelta, 0, "hmm", []llm.Content{think}},
		{llm.StreamThinkingEnd, 0, "", []llm.Content{think}},
		{llm.StreamTextStart, 1, "", []llm.Content{think, blankText}},
		{llm.StreamTextDelta, 1, "hi", []llm.Content{think, txt}},
		{llm.StreamTextEnd, 1, "", []llm.Content{think, txt}},
		{llm.StreamToolCallStart, 2, "", []llm.Content{think, txt, blankCall}},
		{llm.StreamToolCallDelta, 2, `{"path":"a.go"}`, []llm.Content{think, txt, call}},
		{llm.StreamToolCallEnd, 2, "", []llm.Content{think, txt, call}},
	}
	if d := cmp.Diff(want, steps, cmp.AllowUnexported(step{})); d != "" {
		t.Errorf("stream (-want +got):\n%s", d)
	}
	if msg.Role != llm.RoleAssistant || msg.StopReason != llm.StopToolUse || msg.Timestamp == 0 {
		t.Errorf("message = %+v", msg)
	}
	if d := cmp.Diff([]llm.Content{think, txt, call}, msg.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
}

// An empty StopReason is toolUse when the turn has a tool call and stop otherwise; a given
// one (with its error message) is kept.
func TestScriptStopReasons(t *testing.T) {
	p := llm.NewScript(
		llm.Turn{Content: []llm.Content{llm.Text("plain")}},
		llm.Turn{Content: []llm.Content{llm.NewToolCall("c", "x", nil)}},
		llm.Turn{Content: []llm.Content{llm.NewToolCall("c", "x", nil)}, StopReason: llm.StopLength},
		llm.Turn{StopReason: llm.StopError, ErrorMessage: "overloaded"},
	)
	for i, want := range []llm.StopReason{llm.StopEnd, llm.StopToolUse, llm.StopLength, llm.StopError} {
		m := p.Stream(context.Background(), &llm.Request{}, nil)
		if m.StopReason != want {
			t.Errorf("turn %d: StopReason %q, want %q", i, m.StopReason, want)
		}
		if m.Content == nil {
			t.Errorf("turn %d: nil content", i)
		}
	}
	if p.Calls() != 4 {
		t.Errorf("Calls() = %d", p.Calls())
	}
}

// DoneOnly and a nil sink both deliver the message whole, with no streaming step.
func TestScriptNoStreaming(t *testing.T) {
	p := llm.NewScript(llm.Turn{Content: []llm.Content{llm.Text("x")}})
	p.DoneOnly = true
	var steps []step
	m := p.Stream(context.Background(), &llm.Request{}, record(&steps))
	if len(steps) != 0 || m.Text() != "x" {
		t.Errorf("DoneOnly: %d steps, text %q", len(steps), m.Text())
	}
}

// A cancelled context answers "aborted" at once; cancelled mid-stream, the partial message
// comes back aborted.
func TestScriptCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := llm.NewScript(llm.Turn{Content: []llm.Content{llm.Text("x")}})
	if m := p.Stream(ctx, &llm.Request{}, nil); m.StopReason != llm.StopAborted || m.ErrorMessage == "" || m.Role != llm.RoleAssistant {
		t.Errorf("cancelled: %+v", m)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	p = llm.NewScript(llm.Turn{Content: []llm.Content{llm.Text("first"), llm.Text("second")}})
	m := p.Stream(ctx, &llm.Request{}, func(_ *llm.Message, ev llm.StreamEvent) {
		if ev.Kind == llm.StreamTextEnd {
			cancel()
		}
	})
	if m.StopReason != llm.StopAborted {
		t.Fatalf("StopReason %q, want aborted", m.StopReason)
	}
	if d := cmp.Diff([]llm.Content{llm.Text("first"), llm.Text("")}, m.Content); d != "" {
		t.Errorf("partial content (-want +got):\n%s", d)
	}
}

// Running out of turns is an error message that says which call and how long the script
// was, however many calls go past its end.
func TestScriptNoTurnLeft(t *testing.T) {
	p := llm.NewScript(llm.Turn{Content: []llm.Content{llm.Text("only")}}, llm.Turn{Content: []llm.Content{llm.Text("two")}})
	for i := 0; i < 2; i++ {
		p.Stream(context.Background(), &llm.Request{}, nil)
	}
	for call := 3; call <= 4; call++ {
		m := p.Stream(context.Background(), &llm.Request{}, nil)
		want := fmt.Sprintf("scripted model: no turn left for model call %d (the script has 2 turns)", call)
		if m.StopReason != llm.StopError || m.ErrorMessage != want {
			t.Errorf("call %d: %q %q, want error %q", call, m.StopReason, m.ErrorMessage, want)
		}
	}
}

// Stream may be called from several goroutines; each call gets a distinct turn.
func TestScriptConcurrent(t *testing.T) {
	const n = 20
	p := &llm.ScriptedProvider{Next: func(i int) (llm.Turn, bool) {
		return llm.Turn{Content: []llm.Content{llm.Text(fmt.Sprint(i))}}, i < n
	}}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			m := p.Stream(context.Background(), &llm.Request{}, func(*llm.Message, llm.StreamEvent) {})
			mu.Lock()
			seen[m.Text()] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != n || p.Calls() != n {
		t.Errorf("%d distinct turns, %d calls; want %d", len(seen), p.Calls(), n)
	}
}

// A turn's usage, written with the field names, reaches the message with its total
// computed; a given total is kept; each message gets its own copy; a turn without usage
// gives a message without it.
func TestScriptUsage(t *testing.T) {
	var turns []llm.Turn
	err := json.Unmarshal([]byte(`[
		{"content":[{"type":"text","text":"a"}],"usage":{"input":100,"output":20,"cacheRead":5,"cacheWrite":7}},
		{"content":[{"type":"text","text":"b"}],"usage":{"input":1,"output":2,"totalTokens":50}},
		{"content":[{"type":"text","text":"c"}]}
	]`), &turns)
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScript(turns...)
	want := []*llm.Usage{
		{Input: 100, Output: 20, CacheRead: 5, CacheWrite: 7, Total: 132},
		{Input: 1, Output: 2, Total: 50},
		nil,
	}
	for i, w := range want {
		m := p.Stream(context.Background(), &llm.Request{}, func(*llm.Message, llm.StreamEvent) {})
		if d := cmp.Diff(w, m.Usage); d != "" {
			t.Errorf("turn %d usage (-want +got):\n%s", i, d)
		}
		if m.Usage != nil && m.Usage == turns[i].Usage {
			t.Errorf("turn %d: the message shares the turn's Usage pointer", i)
		}
	}
	if turns[0].Usage.Total != 0 {
		t.Errorf("the turn itself was changed: %+v", turns[0].Usage)
	}
}

// NewScriptFrom(k) plays turns[k] first, then on; running out names the call as the
// whole script counts it and the script's real length, also when k is past the end.
func TestScriptFrom(t *testing.T) {
	turns := []llm.Turn{
		{Content: []llm.Content{llm.Text("t0")}},
		{Content: []llm.Content{llm.Text("t1")}},
		{Content: []llm.Content{llm.Text("t2")}},
	}
	p := llm.NewScriptFrom(1, turns...)
	for _, want := range []string{"t1", "t2"} {
		if m := p.Stream(context.Background(), &llm.Request{}, nil); m.Text() != want || m.StopReason != llm.StopEnd {
			t.Fatalf("got %q (%s), want %q", m.Text(), m.StopReason, want)
		}
	}
	m := p.Stream(context.Background(), &llm.Request{}, nil)
	if want := "scripted model: no turn left for model call 4 (the script has 3 turns)"; m.StopReason != llm.StopError || m.ErrorMessage != want {
		t.Errorf("after the end: %q %q, want %q", m.StopReason, m.ErrorMessage, want)
	}
	if p.Calls() != 3 {
		t.Errorf("Calls() = %d, want 3 (skipped turns are not calls)", p.Calls())
	}

	past := llm.NewScriptFrom(5, turns...)
	for call := 6; call <= 7; call++ {
		m := past.Stream(context.Background(), &llm.Request{}, nil)
		want := fmt.Sprintf("scripted model: no turn left for model call %d (the script has 3 turns)", call)
		if m.ErrorMessage != want {
			t.Errorf("k past the end: %q, want %q", m.ErrorMessage, want)
		}
	}

	if m := llm.NewScriptFrom(-2, turns...).Stream(context.Background(), &llm.Request{}, nil); m.Text() != "t0" {
		t.Errorf("negative k: got %q, want t0", m.Text())
	}
}

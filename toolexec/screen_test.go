package toolexec_test

// Tests of Screen, the person's PreToolUse hooks' stage: the calls of a parallel batch are
// screened concurrently, after every ToolStart and before beforeToolCall; a screen may block
// a call, replace its arguments (validated again; an invalid replacement is an error result
// naming the screen) and pass a verdict to beforeToolCall.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestScreenRunsConcurrentlyBeforeBeforeToolCall(t *testing.T) {
	entered := make(chan string, 3)
	release := make(chan struct{})
	var rec recorder
	var verdicts []string
	cfg := &toolexec.Config{Emit: rec.sink,
		Screen: func(ctx context.Context, in toolexec.ScreenInput) (*toolexec.Screening, error) {
			entered <- in.Call.ID
			<-release // every call's screen is held here at once: they run concurrently
			switch in.Call.ID {
			case "block":
				return &toolexec.Screening{Block: &toolexec.Block{Reason: "hook says no"}}, nil
			case "swap":
				return &toolexec.Screening{Args: json.RawMessage(`{"path":"swapped"}`), Verdict: "allow", Source: "the hook X"}, nil
			case "bad":
				return &toolexec.Screening{Args: json.RawMessage(`{"nope":1}`), Source: "the hook Y"}, nil
			}
			return nil, nil
		},
		Before: func(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, error) {
			verdicts = append(verdicts, in.Call.ID+"="+in.Screened+":"+string(in.Prepared)+":"+in.ReplacedBy)
			return nil, nil
		},
	}
	b := toolexec.Batch{Tools: active(t, echoTool("echo")), Calls: []llm.ToolCall{
		tc("block", "echo", `{"path":"a"}`), tc("swap", "echo", `{"path":"b"}`), tc("bad", "echo", `{"path":"c"}`), tc("plain", "echo", `{"path":"d"}`)}}
	done := runAsync(context.Background(), cfg, b)
	for range 4 {
		<-entered
	}
	close(release)
	out := <-done
	got := map[string]string{}
	for _, m := range out.Messages {
		got[m.ToolCallID] = m.Text()
	}
	if got["block"] != "hook says no" || got["swap"] != "echo swapped" || got["plain"] != "echo d" ||
		!strings.HasPrefix(got["bad"], "the hook Y replaced the arguments of this echo call with invalid ones:") {
		t.Errorf("results: %v", got)
	}
	want := []string{`swap=allow:{"path":"swapped"}:the hook X`, `plain=:{"path":"d"}:`}
	if strings.Join(verdicts, " ") != strings.Join(want, " ") {
		t.Errorf("beforeToolCall saw %v, want %v (only the screened calls, in source order, with the verdict, the replaced arguments and who replaced them)", verdicts, want)
	}
	// Every ToolStart comes before any call's end.
	log := rec.Only("start", "end")
	if len(log) != 8 {
		t.Fatalf("events: %v", log)
	}
	for i, e := range log[:4] {
		if !strings.HasPrefix(e, "start:") {
			t.Errorf("event %d is %s: all four ToolStarts come first: %v", i, e, log)
		}
	}
}

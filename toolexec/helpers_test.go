package toolexec_test

// Shared test helpers: an event recorder, gates the tests open in the order they choose, and
// small constructors. The rules of docs/pipeline-rules.md are tested in the other
// *_test.go files of this package; grep for `// R<n>` or `// C<n>`.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder keeps every event of a batch as a compact string ("start:a", "run:a" for
// ToolExecutionStart, "update:a", "end:a", "msgstart:a", "msgend:a", "warn:a") plus markers the test's tools and hooks add
// ("before:a", "exec:a", ...), in the order they happened. The Sink is never called
// concurrently (event.go), but the test goroutine reads the log while a batch runs, hence
// the lock.
type recorder struct {
	mu     sync.Mutex
	log    []string
	events []event.Event
}

func (r *recorder) sink(ev event.Event) {
	var s string
	switch e := ev.(type) {
	case event.ToolStart:
		s = "start:" + e.ToolCallID
	case event.ToolExecutionStart:
		s = "run:" + e.ToolCallID
	case event.ToolResults:
		s = "results"
		for _, m := range e.Messages {
			s += ":" + m.ToolCallID
		}
	case event.ToolUpdate:
		s = "update:" + e.ToolCallID
	case event.ToolEnd:
		s = "end:" + e.ToolCallID
	case event.MessageStart:
		s = "msgstart:" + e.Message.ToolCallID
	case event.MessageEnd:
		s = "msgend:" + e.Message.ToolCallID
	case event.Warning:
		s = "warn:" + e.ToolCallID
	default:
		s = fmt.Sprintf("other:%T", ev)
	}
	r.mu.Lock()
	r.log = append(r.log, s)
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// mark adds a marker of the test's own to the log.
func (r *recorder) mark(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

// Log returns a copy of the log so far.
func (r *recorder) Log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// Only returns the log entries whose kind (the part before ':') is one of kinds.
func (r *recorder) Only(kinds ...string) []string {
	var out []string
	for _, s := range r.Log() {
		k, _, _ := strings.Cut(s, ":")
		if slices.Contains(kinds, k) {
			out = append(out, s)
		}
	}
	return out
}

// Events returns a copy of the raw events.
func (r *recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// warnings returns the messages of the Warning events about call id.
func (r *recorder) warnings(id string) []string {
	var out []string
	for _, ev := range r.Events() {
		if w, ok := ev.(event.Warning); ok && w.ToolCallID == id {
			out = append(out, w.Message)
		}
	}
	return out
}

// toolEnd returns the ToolEnd event of call id.
func (r *recorder) toolEnd(t *testing.T, id string) event.ToolEnd {
	t.Helper()
	for _, ev := range r.Events() {
		if e, ok := ev.(event.ToolEnd); ok && e.ToolCallID == id {
			return e
		}
	}
	t.Fatalf("no ToolEnd for %s", id)
	return event.ToolEnd{}
}

// gate is a point where a tool or hook stops until the test releases it.
type gate struct {
	entered chan struct{} // closed when the holder reaches the gate
	release chan struct{} // closed by the test
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

// wait marks the gate entered and blocks until it is released or ctx is done.
func (g *gate) wait(ctx context.Context) error {
	close(g.entered)
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold marks the gate entered and blocks until it is released, ignoring cancellation.
func (g *gate) hold() {
	close(g.entered)
	<-g.release
}

func (g *gate) open() { close(g.release) }

func (g *gate) hasEntered() bool {
	select {
	case <-g.entered:
		return true
	default:
		return false
	}
}

// tc returns a tool call.
func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// active builds a toolbox of tools and activates all of them.
func active(t testing.TB, tools ...toolexec.Tool) *toolexec.ActiveSet {
	t.Helper()
	box, err := toolexec.NewToolbox(tools...)
	if err != nil {
		t.Fatal(err)
	}
	set, unknown := box.Activate(box.Names()...)
	if len(unknown) > 0 {
		t.Fatalf("unknown tools %v", unknown)
	}
	return set
}

// pathSchema is a schema with one required string "path".
const pathSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`

// pathOf decodes the "path" argument of a call.
func pathOf(c toolexec.Call) string {
	var a struct{ Path string }
	_ = c.Decode(&a)
	return a.Path
}

// echoTool returns a tool whose result is "NAME PATH".
func echoTool(name string) toolexec.Tool {
	return toolexec.Tool{
		Name:       name,
		Parameters: json.RawMessage(pathSchema),
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			return toolexec.TextResult(name + " " + pathOf(c)), nil
		},
	}
}

// gatedTool returns a tool that, for a call whose ID has a gate in gates, waits at that gate
// (returning ctx.Err() if cancelled first), and then returns "NAME ID". exec, when not nil,
// is called first with the call ID.
func gatedTool(name string, gates map[string]*gate, exec func(id string)) toolexec.Tool {
	return toolexec.Tool{
		Name:       name,
		Parameters: json.RawMessage(pathSchema),
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			if exec != nil {
				exec(c.ID)
			}
			if g := gates[c.ID]; g != nil {
				if err := g.wait(ctx); err != nil {
					return toolexec.Result{}, err
				}
			}
			return toolexec.TextResult(name + " " + c.ID), nil
		},
	}
}

// msgSummary is a tool-result message reduced to what the tests compare.
type msgSummary struct {
	ID, Name string
	IsError  bool
	Text     string
}

func summarize(ms []llm.Message) []msgSummary {
	out := make([]msgSummary, len(ms))
	for i := range ms {
		out[i] = msgSummary{ID: ms[i].ToolCallID, Name: ms[i].ToolName, IsError: ms[i].IsError, Text: ms[i].Text()}
	}
	return out
}

// ids returns the tool-call ids of tool-result messages.
func ids(ms []llm.Message) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].ToolCallID
	}
	return out
}

// diff fails the test with a cmp.Diff when got != want.
func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// checkLifecycle asserts R17's invariant on a log: each call of ids has exactly one start,
// one end, one msgstart and one msgend, in that order, and its updates lie between its start
// and its end; and the tool-result messages come in the order of ids.
func checkLifecycle(t *testing.T, log []string, callIDs ...string) {
	t.Helper()
	pos := func(s string) []int {
		var out []int
		for i, x := range log {
			if x == s {
				out = append(out, i)
			}
		}
		return out
	}
	prevMsg := -1
	for _, id := range callIDs {
		var at [4]int
		for k, kind := range []string{"start", "end", "msgstart", "msgend"} {
			p := pos(kind + ":" + id)
			if len(p) != 1 {
				t.Errorf("call %s: %d %s events, want 1 (log %v)", id, len(p), kind, log)
				return
			}
			at[k] = p[0]
		}
		if !(at[0] < at[1] && at[1] < at[2] && at[2] < at[3]) {
			t.Errorf("call %s: start/end/msgstart/msgend out of order at %v (log %v)", id, at, log)
		}
		for _, u := range pos("update:" + id) {
			if u < at[0] || u > at[1] {
				t.Errorf("call %s: update at %d outside start %d .. end %d", id, u, at[0], at[1])
			}
		}
		if at[2] < prevMsg {
			t.Errorf("call %s: tool-result message out of source order (log %v)", id, log)
		}
		prevMsg = at[2]
	}
}

// runAsync starts Run on its own goroutine; the returned channel yields its Outcome.
func runAsync(ctx context.Context, cfg *toolexec.Config, b toolexec.Batch) <-chan toolexec.Outcome {
	ch := make(chan toolexec.Outcome, 1)
	go func() { ch <- toolexec.Run(ctx, cfg, b) }()
	return ch
}

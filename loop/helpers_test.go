package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/toolexec"
)

// TestMain fails the package when any test leaves a goroutine behind (R17: every goroutine
// a run starts has finished when Run returns).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is an event.Sink that keeps every event, and its compact line made during the
// call (a MessageStart's or MessageUpdate's partial message may only be read then). It locks
// although the pipeline serializes its calls, because the test goroutine reads it while a
// run may be going on.
type recorder struct {
	mu    sync.Mutex
	evs   []event.Event
	lines []string
}

func (r *recorder) sink(e event.Event) {
	line := compact(e)
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.lines = append(r.lines, line)
	r.mu.Unlock()
}

func (r *recorder) events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// compact returns one short line per event, for exact sequence comparisons.
func (r *recorder) compact() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// warnings returns the messages of the Warning events.
func (r *recorder) warnings() []string {
	var out []string
	for _, e := range r.events() {
		if w, ok := e.(event.Warning); ok {
			out = append(out, w.Message)
		}
	}
	return out
}

// msgTag names a message: its role, then the tool-call id of a tool result, the first text
// of a user message, or the stop reason of an assistant message.
func msgTag(m llm.Message) string {
	switch m.Role {
	case llm.RoleToolResult:
		return "toolResult " + m.ToolCallID
	case llm.RoleUser:
		return "user " + m.Text()
	case llm.RoleAssistant:
		return "assistant " + string(m.StopReason)
	}
	return string(m.Role)
}

func compact(e event.Event) string {
	switch e := e.(type) {
	case event.AgentStart:
		return "AgentStart"
	case event.AgentEnd:
		return fmt.Sprintf("AgentEnd %d", len(e.Messages))
	case event.TurnStart:
		return "TurnStart"
	case event.TurnEnd:
		ids := []string{}
		for _, m := range e.ToolResults {
			ids = append(ids, m.ToolCallID)
		}
		return fmt.Sprintf("TurnEnd %s [%s]", msgTag(e.Message), strings.Join(ids, " "))
	case event.MessageStart:
		if e.Message.Role == llm.RoleAssistant {
			return "MessageStart assistant" // streaming: the stop reason is not known yet
		}
		return "MessageStart " + msgTag(*e.Message)
	case event.MessageUpdate:
		return "MessageUpdate " + string(e.Delta.Kind)
	case event.MessageEnd:
		return "MessageEnd " + msgTag(*e.Message)
	case event.ToolStart:
		return "ToolStart " + e.ToolCallID
	case event.ToolExecutionStart:
		return "ToolExecutionStart " + e.ToolCallID
	case event.ToolUpdate:
		return "ToolUpdate " + e.ToolCallID
	case event.ToolEnd:
		if e.IsError {
			return "ToolEnd " + e.ToolCallID + " error"
		}
		return "ToolEnd " + e.ToolCallID
	case event.ToolResults:
		ids := []string{}
		for _, m := range e.Messages {
			ids = append(ids, m.ToolCallID)
		}
		return fmt.Sprintf("ToolResults [%s]", strings.Join(ids, " "))
	case event.Warning:
		return "Warning"
	}
	return fmt.Sprintf("unknown %T", e)
}

// updates is the MessageUpdate lines the scripted provider streams for blocks of kinds.
func updates(kinds ...string) []string {
	var out []string
	for _, k := range kinds {
		out = append(out, "MessageUpdate "+k+"_start", "MessageUpdate "+k+"_delta", "MessageUpdate "+k+"_end")
	}
	return out
}

// seq flattens strings and string slices into one sequence.
func seq(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		default:
			panic(fmt.Sprintf("seq: %T", p))
		}
	}
	return out
}

// tc is a toolCall content block.
func tc(id, name, args string) llm.Content {
	return llm.NewToolCall(id, name, json.RawMessage(args))
}

// text returns a scripted turn holding one text block.
func text(s string) llm.Turn { return llm.Turn{Content: []llm.Content{llm.Text(s)}} }

// calls returns a scripted turn holding the given tool calls.
func calls(blocks ...llm.Content) llm.Turn { return llm.Turn{Content: blocks} }

func user(s string) llm.Message { return llm.NewUser(s) }

// echo is a tool that answers "echo: ARGS"; n counts its executions.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func echoTool(name string, n *counter) toolexec.Tool {
	return toolexec.Tool{
		Name:        name,
		Description: "echoes its arguments",
		Execute: func(_ context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			if n != nil {
				n.inc()
			}
			return toolexec.TextResult("echo: " + string(c.Args)), nil
		},
	}
}

// resultTool is a tool that returns res.
func resultTool(name string, res toolexec.Result) toolexec.Tool {
	return toolexec.Tool{
		Name: name,
		Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
			return res, nil
		},
	}
}

// gate is a tool that reports it started, then waits until released or cancelled. A
// cancelled wait returns ctx.Err(), as a well-behaved tool does.
type gate struct {
	started chan string // receives the call id once Execute runs
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan string, 16), release: make(chan struct{})} }

func (g *gate) tool(name string) toolexec.Tool {
	return toolexec.Tool{
		Name: name,
		Execute: func(ctx context.Context, c toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			g.started <- c.ID
			select {
			case <-g.release:
				return toolexec.TextResult("released " + c.ID), nil
			case <-ctx.Done():
				return toolexec.Result{}, ctx.Err()
			}
		},
	}
}

func box(t *testing.T, tools ...toolexec.Tool) *toolexec.Toolbox {
	t.Helper()
	tb, err := toolexec.NewToolbox(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func activate(t *testing.T, tb *toolexec.Toolbox, names ...string) *toolexec.ActiveSet {
	t.Helper()
	set, unknown := tb.Activate(names...)
	if len(unknown) > 0 {
		t.Fatalf("unknown tools %q", unknown)
	}
	return set
}

// recordingProvider wraps a provider and records, per call, the names of the tools and a
// copy of the messages it was given.
type recordingProvider struct {
	inner llm.Provider

	mu    sync.Mutex
	tools [][]string
	msgs  [][]llm.Message
}

func (p *recordingProvider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	names := []string{}
	for _, s := range req.Tools {
		names = append(names, s.Name)
	}
	p.mu.Lock()
	p.tools = append(p.tools, names)
	p.msgs = append(p.msgs, slices.Clone(req.Messages))
	p.mu.Unlock()
	return p.inner.Stream(ctx, req, sink)
}

func (p *recordingProvider) toolNames() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools)
}

func (p *recordingProvider) requests() [][]llm.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.msgs)
}

// tags returns msgTag of each message.
func tags(msgs []llm.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, msgTag(m))
	}
	return out
}

// resultTexts maps each tool-result message's call id to its text.
func resultTexts(msgs []llm.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult {
			out[m.ToolCallID] = m.Text()
		}
	}
	return out
}

// countEvents counts the ToolStart, ToolEnd and tool-result MessageEnd events per call id.
func countEvents(evs []event.Event) map[string][3]int {
	out := map[string][3]int{}
	for _, e := range evs {
		switch e := e.(type) {
		case event.ToolStart:
			c := out[e.ToolCallID]
			c[0]++
			out[e.ToolCallID] = c
		case event.ToolEnd:
			c := out[e.ToolCallID]
			c[1]++
			out[e.ToolCallID] = c
		case event.MessageEnd:
			if e.Message.Role == llm.RoleToolResult {
				c := out[e.Message.ToolCallID]
				c[2]++
				out[e.Message.ToolCallID] = c
			}
		}
	}
	return out
}

// runResult runs the loop on its own goroutine and returns a channel with its result.
func runAsync(ctx context.Context, cfg *loop.Config, history, prompts []llm.Message) <-chan loop.Result {
	done := make(chan loop.Result, 1)
	go func() { done <- loop.Run(ctx, cfg, history, prompts) }()
	return done
}

type promptResult struct {
	res loop.Result
	err error
}

func promptAsync(ctx context.Context, a *loop.Agent, text string, emit event.Sink) <-chan promptResult {
	done := make(chan promptResult, 1)
	go func() {
		res, err := a.Prompt(ctx, text, emit)
		done <- promptResult{res, err}
	}()
	return done
}

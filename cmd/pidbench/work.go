// This file holds the workloads: the tools, the scripted model, the event observer and one
// measured run of the loop. Everything here mirrors shared/bench/pi/bench.mjs (runOnce).

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/toolexec"
)

// spec is one workload in one mode, as sent to a child process.
type spec struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"` // noop, update10 or sleep20
	T       int    `json:"T"`
	K       int    `json:"K"`
	Mode    string `json:"mode"` // parallel or sequential
	Hooks   bool   `json:"hooks,omitempty"`
	LLM     string `json:"llm"`     // min (done-only) or full (streaming steps)
	Convert string `json:"convert"` // filter (role filter) or identity
	Warmup  int    `json:"warmup"`
	Reps    int    `json:"reps"`
}

// The tool parameters: pi's Type.Object({ i: Type.Number() }).
var params = json.RawMessage(`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`)

// ok is the result every tool returns: pi's { content: [{type:"text", text:"ok"}], details: {} }.
func ok() toolexec.Result {
	return toolexec.Result{Content: []llm.Content{llm.Text("ok")}, Details: struct{}{}}
}

// progress is the details of a W3 update: pi's { j }.
type progress struct {
	J int `json:"j"`
}

var sleepFor = 20 * time.Millisecond

func makeTool(name string) (toolexec.Tool, error) {
	t := toolexec.Tool{Name: name, Parameters: params}
	switch name {
	case "noop":
		t.Description = "no-op"
		t.Execute = func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
			return ok(), nil
		}
	case "update10":
		t.Description = "10 progress updates"
		t.Execute = func(_ context.Context, _ toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			for j := 0; j < 10; j++ {
				onUpdate(event.Result{Content: []llm.Content{llm.Text("p" + strconv.Itoa(j))}, Details: &progress{J: j}})
			}
			return ok(), nil
		}
	case "sleep20":
		t.Description = "sleep 20ms"
		t.Execute = func(ctx context.Context, _ toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			tm := time.NewTimer(sleepFor)
			defer tm.Stop()
			select {
			case <-tm.C:
				return ok(), nil
			case <-ctx.Done():
				return toolexec.Result{}, ctx.Err()
			}
		}
	default:
		return t, fmt.Errorf("unknown tool %q", name)
	}
	return t, nil
}

// script is the model: call n < T asks for K calls of tool, call T answers "done".
func script(tool string, T, K int) func(n int) (llm.Turn, bool) {
	return func(n int) (llm.Turn, bool) {
		if n > T {
			return llm.Turn{}, false
		}
		if n == T {
			return llm.Turn{Content: []llm.Content{llm.Text("done")}}, true
		}
		content := make([]llm.Content, K)
		prefix := "call_" + strconv.Itoa(n) + "_"
		for k := range content {
			args := make([]byte, 0, 16)
			args = append(args, `{"i":`...)
			args = strconv.AppendInt(args, int64(k), 10)
			args = append(args, '}')
			content[k] = llm.NewToolCall(prefix+strconv.Itoa(k), tool, args)
		}
		return llm.Turn{Content: content, StopReason: llm.StopToolUse}, true
	}
}

// roleFilter is pi's convertToLlm = filter(role in user/assistant/toolResult), applied by
// pid once per message.
func roleFilter(m *llm.Message) (llm.Message, bool) {
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult:
		return *m, true
	}
	return llm.Message{}, false
}

// Event kinds, named as pi names them, for the counts.
const (
	evAgentStart = iota
	evTurnStart
	evMessageStart
	evMessageUpdate
	evMessageEnd
	evToolStart
	evToolUpdate
	evToolEnd
	evTurnEnd
	evAgentEnd
	evWarning
	evKinds
)

var evNames = [evKinds]string{
	"agent_start", "turn_start", "message_start", "message_update", "message_end",
	"tool_execution_start", "tool_execution_update", "tool_execution_end", "turn_end", "agent_end", "warning",
}

// outcome is one measured run.
type outcome struct {
	wall          time.Duration
	events        int
	counts        [evKinds]int
	llmCalls      int
	toolCalls     int
	turnDurations []time.Duration
	peakRSS       uint64 // bytes, sampled at every TurnEnd when asked
	messages      []llm.Message
	// execStarts counts ToolExecutionStart, which pi has no counterpart of: it is kept out
	// of events and counts so that those stay comparable with pi's.
	execStarts int
}

func (o *outcome) countMap() map[string]int {
	m := make(map[string]int)
	for i, n := range o.counts {
		if n > 0 {
			m[evNames[i]] = n
		}
	}
	return m
}

// runOnce runs one workload once and checks its counts the way pi does.
func runOnce(s spec, sampleRSS bool) (*outcome, error) {
	tool, err := makeTool(s.Tool)
	if err != nil {
		return nil, err
	}
	box, err := toolexec.NewToolbox(tool)
	if err != nil {
		return nil, err
	}
	active, _ := box.Activate(tool.Name)
	prov := &llm.ScriptedProvider{DoneOnly: s.LLM != "full", Next: script(tool.Name, s.T, s.K)}

	o := &outcome{turnDurations: make([]time.Duration, 0, s.T)}
	var turnStart time.Time
	emit := func(e event.Event) {
		if _, ok := e.(event.ToolExecutionStart); ok {
			o.execStarts++
			return
		}
		o.events++
		switch e := e.(type) {
		case event.AgentStart:
			o.counts[evAgentStart]++
		case event.TurnStart:
			o.counts[evTurnStart]++
			turnStart = time.Now()
		case event.MessageStart:
			o.counts[evMessageStart]++
		case event.MessageUpdate:
			o.counts[evMessageUpdate]++
		case event.MessageEnd:
			o.counts[evMessageEnd]++
		case event.ToolStart:
			o.counts[evToolStart]++
		case event.ToolUpdate:
			o.counts[evToolUpdate]++
		case event.ToolEnd:
			o.counts[evToolEnd]++
		case event.TurnEnd:
			o.counts[evTurnEnd]++
			if len(e.ToolResults) > 0 {
				o.turnDurations = append(o.turnDurations, time.Since(turnStart))
			}
			if sampleRSS {
				if r := currentRSS(); r > o.peakRSS {
					o.peakRSS = r
				}
			}
		case event.AgentEnd:
			o.counts[evAgentEnd]++
		case event.Warning:
			o.counts[evWarning]++
		}
	}
	cfg := &loop.Config{
		Provider:     prov,
		SystemPrompt: "bench",
		Tools:        active,
		Emit:         emit,
	}
	if s.Mode == "sequential" {
		cfg.ToolExecution = toolexec.Sequential
	} else {
		cfg.ToolExecution = toolexec.Parallel
	}
	if s.Convert != "identity" {
		cfg.ConvertToLlm = roleFilter
	}
	if s.Hooks {
		cfg.Before = func(context.Context, toolexec.BeforeInput) (*toolexec.Block, error) { return nil, nil }
		cfg.After = func(context.Context, toolexec.AfterInput) (*toolexec.Override, error) { return nil, nil }
	}
	prompt := llm.NewUser("go")

	t0 := time.Now()
	res := loop.Run(context.Background(), cfg, nil, []llm.Message{prompt})
	o.wall = time.Since(t0)

	o.llmCalls = prov.Calls()
	o.toolCalls = s.T * s.K
	o.messages = res.Messages
	if got := o.counts[evToolEnd]; got != o.toolCalls {
		return nil, fmt.Errorf("%s %s: expected %d tool_execution_end, got %d", s.ID, s.Mode, o.toolCalls, got)
	}
	if o.execStarts != o.toolCalls {
		return nil, fmt.Errorf("%s %s: expected %d ToolExecutionStart (every call runs), got %d", s.ID, s.Mode, o.toolCalls, o.execStarts)
	}
	if want := 1 + s.T*(1+s.K) + 1; len(res.Messages) != want {
		return nil, fmt.Errorf("%s %s: unexpected message count %d (want %d)", s.ID, s.Mode, len(res.Messages), want)
	}
	if res.StopReason != llm.StopEnd || o.llmCalls != s.T+1 {
		return nil, fmt.Errorf("%s %s: run ended with stopReason %q after %d model calls (want %q after %d)", s.ID, s.Mode, res.StopReason, o.llmCalls, llm.StopEnd, s.T+1)
	}
	for i := range res.Messages {
		if m := &res.Messages[i]; m.Role == llm.RoleToolResult && m.IsError {
			return nil, fmt.Errorf("%s %s: tool call %s failed: %s", s.ID, s.Mode, m.ToolCallID, m.Text())
		}
	}
	return o, nil
}

// medianDur is the median of a run's turn durations, in milliseconds.
func medianDur(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	ms := make([]float64, len(d))
	for i, x := range d {
		ms[i] = float64(x) / float64(time.Millisecond)
	}
	return median(ms)
}

// perfRun is one measured run as a perf child reports it (pi's runs[] entries).
type perfRun struct {
	WallMs       float64        `json:"wallMs"`
	Events       int            `json:"events"`
	Counts       map[string]int `json:"counts"`
	LLMCalls     int            `json:"llmCalls"`
	ToolCalls    int            `json:"toolCalls"`
	TurnMedianMs float64        `json:"turnMedianMs"`
}

// childPerf runs warmup unmeasured runs, then reps measured ones, GC before each.
func childPerf(s spec) ([]perfRun, error) {
	var runs []perfRun
	for i := 0; i < s.Warmup+s.Reps; i++ {
		runtime.GC()
		o, err := runOnce(s, false)
		if err != nil {
			return nil, err
		}
		if i >= s.Warmup {
			runs = append(runs, perfRun{
				WallMs: ms(o.wall), Events: o.events, Counts: o.countMap(), LLMCalls: o.llmCalls,
				ToolCalls: o.toolCalls, TurnMedianMs: medianDur(o.turnDurations),
			})
		}
	}
	return runs, nil
}

// memRun is one W5 child's report (pi's childMem).
type memRun struct {
	WallMs                float64 `json:"wallMs"`
	Events                int     `json:"events"`
	BaseRssMB             float64 `json:"baseRssMB"`
	PeakRssSampledMB      float64 `json:"peakRssSampledMB"`
	MaxRssMB              float64 `json:"maxRssMB"`
	HeapBeforeMB          float64 `json:"heapBeforeMB"`
	HeapAfterRunMB        float64 `json:"heapAfterRunMB"`
	HeapRetainedAfterGcMB float64 `json:"heapRetainedAfterGcMB"`
	SysMB                 float64 `json:"goSysMB"` // memory the Go runtime obtained from the OS
	NumGC                 uint32  `json:"numGC"`   // GC cycles during the measured run
	MessagesRetained      int     `json:"messagesRetained"`
}

// childMem is one W5 rep in a fresh process: a T=20 warm-up, GC, baseline, measured run.
func childMem(s spec) (*memRun, error) {
	warm := s
	warm.T = 20
	if _, err := runOnce(warm, false); err != nil {
		return nil, err
	}
	runtime.GC()
	baseRSS := currentRSS()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	baseHeap, gc0 := m.HeapAlloc, m.NumGC
	o, err := runOnce(s, true)
	if err != nil {
		return nil, err
	}
	runtime.ReadMemStats(&m)
	afterHeap, gc1 := m.HeapAlloc, m.NumGC
	runtime.GC()
	runtime.ReadMemStats(&m)
	retained := m.HeapAlloc // o.messages is still referenced
	r := &memRun{
		WallMs: ms(o.wall), Events: o.events,
		BaseRssMB: mb(baseRSS), PeakRssSampledMB: mb(o.peakRSS), MaxRssMB: mb(maxRSS()),
		HeapBeforeMB: mb(baseHeap), HeapAfterRunMB: mb(afterHeap), HeapRetainedAfterGcMB: mb(retained),
		SysMB: mb(m.Sys), NumGC: gc1 - gc0, MessagesRetained: len(o.messages),
	}
	runtime.KeepAlive(o)
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b uint64) float64        { return float64(b) / (1 << 20) }

// summary is pi's {median, min, max, n}.
type summary struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

func median(a []float64) float64 {
	if len(a) == 0 {
		return 0
	}
	s := append([]float64(nil), a...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func summarize(a []float64) summary {
	if len(a) == 0 {
		return summary{}
	}
	s := summary{Median: median(a), Min: a[0], Max: a[0], N: len(a)}
	for _, x := range a {
		s.Min = min(s.Min, x)
		s.Max = max(s.Max, x)
	}
	return s
}

// Package scripted builds scripted tools: tools whose behaviour is a list of steps given in a
// session's settings (sleep, report progress, return, fail, panic, wait for another call's
// end), so that every rule of the pipeline can be driven from outside, by the fixtures and
// the editors' tests, with no model and no real tool.
//
// The entry point is Build.
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// Tool is a tool whose behaviour is a list of steps, as a session's "scriptedTools" give it.
type Tool struct {
	Name             string          `json:"name"`
	Description      string          `json:"description,omitempty"`
	Parameters       json.RawMessage `json:"parameters,omitempty"`
	ExecutionMode    string          `json:"executionMode,omitempty"`
	RequiresApproval bool            `json:"requiresApproval,omitempty"`
	Active           *bool           `json:"active,omitempty"`
	// Resource, if set, is a gjson path into the arguments whose value names the resource
	// the call touches (C3), e.g. "path".
	Resource string `json:"resource,omitempty"`
	Steps    []Step `json:"steps"`
}

// Step is one step of a scripted tool; exactly one field is set.
type Step struct {
	SleepMs    *int          `json:"sleepMs,omitempty"`
	Update     *event.Result `json:"update,omitempty"`
	Result     *Value        `json:"result,omitempty"`
	Error      *string       `json:"error,omitempty"`
	Panic      *string       `json:"panic,omitempty"`
	WaitForEnd *string       `json:"waitForEnd,omitempty"` // waits until that call's toolEnd was sent
}

// Value is a scripted tool's result.
type Value struct {
	Content        []llm.Content `json:"content"`
	Details        any           `json:"details,omitempty"`
	Terminate      bool          `json:"terminate,omitempty"`
	AddedToolNames []string      `json:"addedToolNames,omitempty"`
}

// Built is what Build made of the definitions.
type Built struct {
	Tools []toolexec.Tool
	// Initial are the names of the tools active from the start.
	Initial []string
	// Asks holds every tool's name, with whether its calls need approval by default.
	Asks map[string]bool
}

// Build turns definitions into tools whose waitForEnd steps wait on gates. An error names
// the definition at fault (no name, a step with not exactly one field).
func Build(defs []Tool, gates *Gates) (Built, error) {
	out := Built{Tools: make([]toolexec.Tool, 0, len(defs)), Asks: map[string]bool{}}
	for i, d := range defs {
		if d.Name == "" {
			return Built{}, fmt.Errorf("scriptedTools[%d] has no name", i)
		}
		for j, st := range d.Steps {
			if n := st.count(); n != 1 {
				return Built{}, fmt.Errorf("scriptedTools[%d] (%s) step %d must have exactly one of sleepMs, update, result, error, panic, waitForEnd (it has %d)", i, d.Name, j, n)
			}
		}
		desc := d.Description
		if desc == "" {
			desc = "Scripted tool " + d.Name
		}
		t := toolexec.Tool{
			Name: d.Name, Description: desc, Parameters: d.Parameters,
			ExecutionMode: toolexec.Mode(d.ExecutionMode),
			Execute:       run(d.Steps, gates),
		}
		if d.Resource != "" {
			path := d.Resource
			t.Resources = func(c toolexec.Call) []string {
				if v := gjson.GetBytes(c.Args, path); v.Exists() {
					return []string{v.String()}
				}
				return nil
			}
		}
		out.Tools = append(out.Tools, t)
		out.Asks[d.Name] = d.RequiresApproval
		if d.Active == nil || *d.Active {
			out.Initial = append(out.Initial, d.Name)
		}
	}
	return out, nil
}

func (st *Step) count() int {
	n := 0
	for _, set := range []bool{st.SleepMs != nil, st.Update != nil, st.Result != nil, st.Error != nil, st.Panic != nil, st.WaitForEnd != nil} {
		if set {
			n++
		}
	}
	return n
}

// run is a scripted tool's Execute: its steps, in order.
func run(steps []Step, gates *Gates) func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
	return func(ctx context.Context, _ toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
		for _, st := range steps {
			switch {
			case st.SleepMs != nil:
				t := time.NewTimer(time.Duration(*st.SleepMs) * time.Millisecond)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return toolexec.Result{}, ctx.Err()
				}
			case st.WaitForEnd != nil:
				if err := gates.Wait(ctx, *st.WaitForEnd); err != nil {
					return toolexec.Result{}, err
				}
			case st.Update != nil:
				r := *st.Update
				if r.Content == nil {
					r.Content = []llm.Content{}
				}
				onUpdate(r)
			case st.Result != nil:
				r := st.Result
				content := r.Content
				if content == nil {
					content = []llm.Content{}
				}
				return toolexec.Result{Content: content, Details: r.Details, Terminate: r.Terminate, AddedToolNames: r.AddedToolNames}, nil
			case st.Error != nil:
				return toolexec.Result{}, errors.New(*st.Error)
			case st.Panic != nil:
				panic(*st.Panic)
			}
		}
		return toolexec.Result{Content: []llm.Content{}}, nil
	}
}

// Gates lets scripted tools wait for another call's toolEnd (the waitForEnd step), so
// fixtures can fix completion order without timing. Gates live while a run (a prompt or a
// batch) is in progress: when the last run ends they are dropped, so a long session does not
// keep one per call it ever made. Its methods are safe for concurrent use.
type Gates struct {
	// mu guards m and runs.
	mu   sync.Mutex
	m    map[string]chan struct{}
	runs int // runs in progress
}

// NewGates returns gates with no run in progress.
func NewGates() *Gates { return &Gates{m: map[string]chan struct{}{}} }

// Enter marks a run as started; Leave, as ended. The caller pairs them.
func (g *Gates) Enter() {
	g.mu.Lock()
	g.runs++
	g.mu.Unlock()
}

// Leave marks a run as ended: after the last one, the gates are dropped.
func (g *Gates) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.runs--; g.runs == 0 {
		clear(g.m)
	}
}

// Len returns how many gates are kept.
func (g *Gates) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

func (g *Gates) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.m[id]
	if c == nil {
		c = make(chan struct{})
		g.m[id] = c
	}
	return c
}

// Ended opens the gate of the call id: its toolEnd was sent.
func (g *Gates) Ended(id string) {
	c := g.ch(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// Wait returns when toolEnd of id was sent or ctx ends.
func (g *Gates) Wait(ctx context.Context, id string) error {
	select {
	case <-g.ch(id):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

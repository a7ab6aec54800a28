// This file builds scripted tools: tools whose behaviour is a list of steps given in the
// session's settings, so that every rule of the pipeline can be driven from outside.

package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func nonNilResult(r event.Result) event.Result {
	if r.Content == nil {
		r.Content = []llm.Content{}
	}
	return r
}

// scriptedTools turns definitions into tools, and returns the names active from the start.
func (s *Session) scriptedTools(defs []ScriptedTool) ([]toolexec.Tool, []string, error) {
	tools := make([]toolexec.Tool, 0, len(defs))
	var initial []string
	for i, d := range defs {
		if d.Name == "" {
			return nil, nil, invalid("scriptedTools[%d] has no name", i)
		}
		for j, st := range d.Steps {
			if n := st.count(); n != 1 {
				return nil, nil, invalid("scriptedTools[%d] (%s) step %d must have exactly one of sleepMs, update, result, error, panic, waitForEnd (it has %d)", i, d.Name, j, n)
			}
		}
		desc := d.Description
		if desc == "" {
			desc = "Scripted tool " + d.Name
		}
		t := toolexec.Tool{
			Name: d.Name, Description: desc, Parameters: d.Parameters,
			ExecutionMode: toolexec.Mode(d.ExecutionMode),
			Execute:       s.runSteps(d.Steps),
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
		tools = append(tools, t)
		s.asks[d.Name] = d.RequiresApproval
		if d.Active == nil || *d.Active {
			initial = append(initial, d.Name)
		}
	}
	return tools, initial, nil
}

func (st *ScriptStep) count() int {
	n := 0
	for _, set := range []bool{st.SleepMs != nil, st.Update != nil, st.Result != nil, st.Error != nil, st.Panic != nil, st.WaitForEnd != nil} {
		if set {
			n++
		}
	}
	return n
}

func (s *Session) runSteps(steps []ScriptStep) func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
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
				if err := s.gates.wait(ctx, *st.WaitForEnd); err != nil {
					return toolexec.Result{}, err
				}
			case st.Update != nil:
				onUpdate(nonNilResult(*st.Update))
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

// endGates lets scripted tools wait for another call's toolEnd (the waitForEnd step), so
// fixtures can fix completion order without timing. Gates live while a run (a prompt or a
// batch) is in progress: when the last run ends they are dropped, so a long session does not
// keep one per call it ever made.
type endGates struct {
	// mu guards m and runs.
	mu   sync.Mutex
	m    map[string]chan struct{}
	runs int // runs in progress
}

// enter marks a run as started; leave, as ended. The caller pairs them.
func (g *endGates) enter() {
	g.mu.Lock()
	g.runs++
	g.mu.Unlock()
}

func (g *endGates) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.runs--; g.runs == 0 {
		clear(g.m)
	}
}

func newEndGates() *endGates { return &endGates{m: map[string]chan struct{}{}} }

func (g *endGates) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.m[id]
	if c == nil {
		c = make(chan struct{})
		g.m[id] = c
	}
	return c
}

func (g *endGates) ended(id string) {
	c := g.ch(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// wait returns when toolEnd of id was sent or ctx ends.
func (g *endGates) wait(ctx context.Context, id string) error {
	select {
	case <-g.ch(id):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// This file builds scripted tools: tools whose behaviour is a list of steps given in
// session/new, so that every rule of the pipeline can be driven from outside.

package rpc

import (
	"context"
	"errors"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func resultOf(content []llm.Content, details any) event.Result {
	return event.Result{Content: content, Details: details}
}

// scriptedTools turns definitions into tools, and returns the names active from the start.
func (ss *session) scriptedTools(defs []scriptedDef) ([]toolexec.Tool, []string, error) {
	tools := make([]toolexec.Tool, 0, len(defs))
	var initial []string
	for i, d := range defs {
		if d.Name == "" {
			return nil, nil, invalidParams("scriptedTools[%d] has no name", i)
		}
		for j, st := range d.Steps {
			if n := st.count(); n != 1 {
				return nil, nil, invalidParams("scriptedTools[%d] (%s) step %d must have exactly one of sleepMs, update, result, error, panic, waitForEnd (it has %d)", i, d.Name, j, n)
			}
		}
		desc := d.Description
		if desc == "" {
			desc = "Scripted tool " + d.Name
		}
		t := toolexec.Tool{
			Name: d.Name, Description: desc, Parameters: d.Parameters,
			ExecutionMode: toolexec.Mode(d.ExecutionMode),
			Execute:       ss.runSteps(d.Steps),
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
		ss.asks[d.Name] = d.RequiresApproval
		if d.Active == nil || *d.Active {
			initial = append(initial, d.Name)
		}
	}
	return tools, initial, nil
}

func (st *scriptStep) count() int {
	n := 0
	for _, set := range []bool{st.SleepMs != nil, st.Update != nil, st.Result != nil, st.Error != nil, st.Panic != nil, st.WaitForEnd != nil} {
		if set {
			n++
		}
	}
	return n
}

func (ss *session) runSteps(steps []scriptStep) func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
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
				if err := ss.gates.wait(ctx, *st.WaitForEnd); err != nil {
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

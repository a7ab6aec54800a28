package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ptr[T any](v T) *T { return &v }

// Definitions become tools: the active ones listed, the approval each needs, the resource a
// call names; a definition without a name, or a step without exactly one field, is refused.
func TestBuild(t *testing.T) {
	b, err := Build([]Tool{
		{Name: "a", RequiresApproval: true, Resource: "path", Steps: []Step{{Result: &Value{}}}},
		{Name: "b", Active: ptr(false)},
	}, NewGates())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tools) != 2 || strings.Join(b.Initial, ",") != "a" || !b.Asks["a"] || b.Asks["b"] || b.Tools[1].Description != "Scripted tool b" {
		t.Errorf("built %+v", b)
	}
	if r := b.Tools[0].Resources(toolexec.Call{Args: json.RawMessage(`{"path":"x.go"}`)}); len(r) != 1 || r[0] != "x.go" {
		t.Errorf("resources %v", r)
	}
	if _, err := Build([]Tool{{}}, NewGates()); err == nil || err.Error() != "scriptedTools[0] has no name" {
		t.Errorf("no name: %v", err)
	}
	if _, err := Build([]Tool{{Name: "x", Steps: []Step{{Error: ptr("e"), Panic: ptr("p")}}}}, NewGates()); err == nil || !strings.Contains(err.Error(), "(it has 2)") {
		t.Errorf("two fields: %v", err)
	}
}

// The steps run in order: progress, a wait for another call's end (its gate), then the
// result; an error step fails the call; the gates go once no run is in progress.
func TestSteps(t *testing.T) {
	g := NewGates()
	b, err := Build([]Tool{
		{Name: "w", Steps: []Step{{Update: &event.Result{}}, {WaitForEnd: ptr("other")}, {Result: &Value{Content: []llm.Content{llm.Text("done")}, Terminate: true}}}},
		{Name: "f", Steps: []Step{{Error: ptr("it failed")}}},
	}, g)
	if err != nil {
		t.Fatal(err)
	}
	g.Enter()
	var updates []event.Result
	done := make(chan toolexec.Result)
	go func() {
		r, _ := b.Tools[0].Execute(context.Background(), toolexec.Call{}, func(r event.Result) { updates = append(updates, r) })
		done <- r
	}()
	g.Ended("other")
	r := <-done
	if len(updates) != 1 || updates[0].Content == nil || len(r.Content) != 1 || r.Content[0].Text != "done" || !r.Terminate {
		t.Errorf("updates %+v, result %+v", updates, r)
	}
	if _, err := b.Tools[1].Execute(context.Background(), toolexec.Call{}, nil); err == nil || err.Error() != "it failed" {
		t.Errorf("error step: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx, "never"); err != context.Canceled {
		t.Errorf("a wait after its context ended: %v", err)
	}
	if g.Len() == 0 {
		t.Fatal("no gate kept while a run is in progress")
	}
	g.Leave()
	if n := g.Len(); n != 0 {
		t.Errorf("%d gates kept after the run ended", n)
	}
}

package session

// The gates of waitForEnd steps are dropped when no run is in progress, so a long session
// keeps none per call it made (the soak benchmark found them growing without end).

import (
	"errors"

	"context"
	"fmt"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

type quietFace struct{}

func (quietFace) Emit(*Session, event.Event) {}
func (quietFace) Ask(context.Context, *Session, Approval) (Answer, error) {
	return Answer{Decision: "deny"}, nil
}
func (quietFace) Warn(*Session, string) {}
func (quietFace) Elicit(context.Context, *Session, Elicitation) (ElicitAnswer, error) {
	return ElicitAnswer{}, errors.New("no editor")
}

func TestEndGatesDroppedAfterRuns(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	s, err := h.New(Config{Cwd: t.TempDir(), ScriptedTools: []ScriptedTool{
		{Name: "first", Steps: []ScriptStep{{Result: &ScriptedValue{}}}},
		{Name: "second", Steps: []ScriptStep{{WaitForEnd: ptr("a0")}, {Result: &ScriptedValue{}}}},
	}}, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		calls := []llm.ToolCall{{ID: fmt.Sprintf("a%d", i), Name: "first"}, {ID: fmt.Sprintf("b%d", i), Name: "second"}}
		calls[1].Arguments = []byte(`{}`)
		calls[0].Arguments = []byte(`{}`)
		if i > 0 { // only the first batch has a0 to wait for
			calls = calls[:1]
		}
		if out, _ := s.Execute(context.Background(), calls, ""); len(out.Messages) != len(calls) {
			t.Fatalf("batch %d: %d results", i, len(out.Messages))
		}
	}
	if n := s.gates.Len(); n != 0 {
		t.Errorf("%d gates kept after 50 runs ended, want 0", n)
	}
}

func ptr[T any](v T) *T { return &v }

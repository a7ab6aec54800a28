package hooks

// Tests of Runner's verdicts that need no hook process: PreCompact on a manual and an
// automatic compaction, and how many times in a row Stop hooks may keep a run going.

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

func TestPreCompact(t *testing.T) {
	set, err := Parse(json.RawMessage(`{"PreCompact": [{"hooks": [{"type": "command", "command": "one"}, {"type": "command", "command": "two"}]}]}`), "user")
	if err != nil {
		t.Fatal(err)
	}
	for _, manual := range []bool{false, true} {
		var ran, triggers, audited []string
		r := Runner{
			Hooks: func() *Set { return set },
			Input: func(event string) Input { return Input{HookEventName: event} },
			Run: func(_ context.Context, h Hook, in Input, _ string) Result {
				ran, triggers = append(ran, h.Command), append(triggers, in.Trigger)
				return Result{Hook: h, ExitCode: 2, Stderr: []byte("not now\n")}
			},
			Audit: func(h Hook, _, _, decision, reason string) {
				audited = append(audited, h.Command+" "+decision+" "+reason)
			},
		}
		why := r.PreCompact(t.Context(), manual)
		want, trigger := `the PreCompact hook "one" blocked it: not now`, "auto"
		if manual {
			want, trigger = "", "manual"
		}
		if why != want {
			t.Errorf("manual %v: %q, want %q", manual, why, want)
		}
		if !slices.Equal(ran, []string{"one"}) || !slices.Equal(triggers, []string{trigger}) || !slices.Equal(audited, []string{"one block not now"}) {
			t.Errorf("manual %v: ran %q with triggers %q, audited %q: want the first hook alone, its block audited", manual, ran, triggers, audited)
		}
	}
}

// The Stop hooks keep one prompt's run going at most MaxStopBlocks times in a row; the second
// and later runs are told a Stop hook is active; a hook that lets the run end counts nothing.
func TestKeepGoing(t *testing.T) {
	set, err := Parse(json.RawMessage(`{"Stop": [{"hooks": [{"type": "command", "command": "more"}]}]}`), "user")
	if err != nil {
		t.Fatal(err)
	}
	block := true
	var active []bool
	r := Runner{
		Hooks: func() *Set { return set },
		Input: func(event string) Input { return Input{HookEventName: event} },
		Run: func(_ context.Context, h Hook, in Input, _ string) Result {
			active = append(active, in.StopHookActive)
			if !block {
				return Result{Hook: h}
			}
			return Result{Hook: h, ExitCode: 2, Stderr: []byte("the tests fail")}
		},
		Audit: func(Hook, string, string, string, string) {},
	}
	blocks := 0
	for i := range MaxStopBlocks {
		if got := r.KeepGoing(t.Context(), &blocks); got != "the tests fail" || blocks != i+1 {
			t.Fatalf("block %d: %q, count %d", i+1, got, blocks)
		}
	}
	if got := r.KeepGoing(t.Context(), &blocks); got != "" || blocks != MaxStopBlocks || len(active) != MaxStopBlocks {
		t.Errorf("past MaxStopBlocks: %q, count %d, hooks run %d times; want the run to end without a hook", got, blocks, len(active))
	}
	if want := []bool{false, true, true, true, true}; !slices.Equal(active, want) {
		t.Errorf("stop_hook_active %v, want %v", active, want)
	}
	block, blocks = false, 1
	if got := r.KeepGoing(t.Context(), &blocks); got != "" || blocks != 1 {
		t.Errorf("a hook that lets the run end: %q, count %d", got, blocks)
	}
}

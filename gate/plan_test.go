// Tests of the decision on exit_plan_mode: refused outside plan mode, and the person's answer.

package gate

import (
	"errors"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
)

func TestExitPlanRefused(t *testing.T) {
	if b, _, refused := exitPlanRefused(prompt.ModePlan); refused || b != nil {
		t.Errorf("ExitPlanRefused(plan) = %+v, %v; want the plan put to the person", b, refused)
	}
	b, d, refused := exitPlanRefused(prompt.ModeAuto)
	want := "exit_plan_mode works only in plan mode, and the mode is auto: there is no plan to approve. Go on with the task; no call is needed to leave plan mode."
	if !refused || b == nil || b.Reason != want || d != (Decided{"deny", "mode auto"}) {
		t.Errorf("ExitPlanRefused(auto) = %+v, %+v, %v", b, d, refused)
	}
}

func TestPlanAnswered(t *testing.T) {
	cases := []struct {
		decision, mode, reason string
		block                  string
		d                      Decided
		next                   string
	}{
		{"allow", "", "", "", Decided{"allow", "user"}, prompt.ModeDefault},
		{"allowAlways", prompt.ModeAuto, "", "", Decided{"allow", "user"}, prompt.ModeAuto},
		{"allow", prompt.ModeAcceptEdits, "", "", Decided{"allow", "user"}, prompt.ModeAcceptEdits},
		{"allow", prompt.ModeBypass, "", "", Decided{"allow", "user"}, prompt.ModeDefault}, // never bypass from a plan's answer
		{"allow", prompt.ModePlan, "", "", Decided{"allow", "user"}, prompt.ModeDefault},
		{"deny", "", "", "The user did not approve the plan. Keep planning.", Decided{"deny", "user"}, ""},
		{"denyAlways", prompt.ModeAuto, "too broad.", "The user did not approve the plan: too broad. Keep planning.", Decided{"deny", "user"}, ""},
		{"maybe", "", "", "The user did not approve the plan. Keep planning.", Decided{"deny", "user"}, ""},
	}
	for _, tc := range cases {
		b, d, next := planAnswered(tc.decision, tc.mode, tc.reason)
		block := ""
		if b != nil {
			block = b.Reason
		}
		if block != tc.block || d != tc.d || next != tc.next {
			t.Errorf("PlanAnswered(%q, %q, %q) = %q, %+v, %q; want %q, %+v, %q", tc.decision, tc.mode, tc.reason, block, d, next, tc.block, tc.d, tc.next)
		}
	}
	if b, d := planUnanswered(errors.New("eof"), true); b.Reason != "Operation aborted" || d != (Decided{"aborted", "cancelled while waiting for the user"}) {
		t.Errorf("PlanUnanswered(cancelled) = %+v, %+v", b, d)
	}
	if b, d := planUnanswered(errors.New("eof"), false); b.Reason != "The plan was not put to the user: the editor did not answer (eof). Keep planning." || d != (Decided{"deny", "no answer from the editor"}) {
		t.Errorf("PlanUnanswered = %+v, %+v", b, d)
	}
}

// ExitPlan puts the plan to the person only in plan mode, with the plan's text, and reads
// their answer or its absence.
func TestExitPlan(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "exit_plan_mode", Arguments: []byte(`{"plan":"1. read\n2. write"}`)}
	var asked []Question
	answer := func(a Answer, err error) func(Question) (Answer, error) {
		return func(q Question) (Answer, error) { asked = append(asked, q); return a, err }
	}
	notCancelled := func() bool { return false }

	b, d, next := ExitPlan(prompt.ModeDefault, call, answer(Answer{Decision: "allow"}, nil), notCancelled)
	if b == nil || d != (Decided{"deny", "mode default"}) || next != "" || len(asked) != 0 {
		t.Errorf("outside plan mode: %+v, %+v, %q, asked %d times", b, d, next, len(asked))
	}
	b, d, next = ExitPlan(prompt.ModePlan, call, answer(Answer{Decision: "allow", Mode: prompt.ModeAuto}, nil), notCancelled)
	if b != nil || d != (Decided{"allow", "user"}) || next != prompt.ModeAuto {
		t.Errorf("an approved plan: %+v, %+v, %q", b, d, next)
	}
	if len(asked) != 1 || asked[0].Plan == nil || asked[0].Plan.Text != "1. read\n2. write" || asked[0].Call.ID != "c1" || asked[0].Always != nil {
		t.Errorf("the question was %+v", asked)
	}
	b, d, next = ExitPlan(prompt.ModePlan, call, answer(Answer{Decision: "deny", Reason: "smaller."}, nil), notCancelled)
	if b == nil || b.Reason != "The user did not approve the plan: smaller. Keep planning." || d != (Decided{"deny", "user"}) || next != "" {
		t.Errorf("a denied plan: %+v, %+v, %q", b, d, next)
	}
	b, d, _ = ExitPlan(prompt.ModePlan, call, answer(Answer{}, errors.New("gone")), func() bool { return true })
	if b == nil || b.Reason != "Operation aborted" || d.Decision != "aborted" {
		t.Errorf("a cancelled question: %+v, %+v", b, d)
	}
}

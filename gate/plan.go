// This file holds the decision on exit_plan_mode, the call that puts the model's plan to the
// person: refused outside plan mode, and the reading of the person's answer.

package gate

import (
	"fmt"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
)

// ExitPlan decides exit_plan_mode's call in mode: refused outside plan mode; in plan mode its
// plan is put to the person through ask (an error: no answer; cancelled reports whether the
// call's context ended) and their answer read (PlanAnswered). It returns the refusal (nil
// when the plan is approved), what was decided, and the mode the session switches to ("" to
// stay).
func ExitPlan(mode string, call llm.ToolCall, ask func(Question) (Answer, error), cancelled func() bool) (*toolexec.Block, Decided, string) {
	if b, d, refused := exitPlanRefused(mode); refused {
		return b, d, ""
	}
	a, err := ask(Question{Call: call, Plan: &Plan{Text: modes.PlanText(call.Arguments)}})
	if err != nil {
		b, d := planUnanswered(err, cancelled())
		return b, d, ""
	}
	return planAnswered(a.Decision, a.Mode, a.Reason)
}

// exitPlanRefused returns the refusal of exit_plan_mode in mode, and true, when mode is not
// plan mode (there is no plan to approve); nil and false in plan mode, where the plan is put
// to the person.
func exitPlanRefused(mode string) (*toolexec.Block, Decided, bool) {
	if mode == prompt.ModePlan {
		return nil, Decided{}, false
	}
	return &toolexec.Block{Reason: fmt.Sprintf("%s works only in plan mode, and the mode is %s: there is no plan to approve. Go on with the task; no call is needed to leave plan mode.", modes.ExitPlanName, mode)}, Decided{"deny", "mode " + mode}, true
}

// planUnanswered returns the refusal of exit_plan_mode when the plan's question got no
// answer: err is the face's error, cancelled whether the call's context ended.
func planUnanswered(err error, cancelled bool) (*toolexec.Block, Decided) {
	if cancelled {
		return &toolexec.Block{Reason: "Operation aborted"}, Decided{"aborted", "cancelled while waiting for the user"}
	}
	return &toolexec.Block{Reason: fmt.Sprintf("The plan was not put to the user: the editor did not answer (%v). Keep planning.", err)}, Decided{"deny", "no answer from the editor"}
}

// planAnswered reads the person's answer to a plan: decision as Answered's, mode the mode an
// allowing answer names, reason the reason of a denial. It returns the refusal (nil when the
// plan is approved: the model goes on), what was decided, and the mode the session switches
// to ("" when it stays in plan mode): acceptEdits or auto when the answer names one, else
// default.
func planAnswered(decision, mode, reason string) (*toolexec.Block, Decided, string) {
	switch decision {
	case "allow", "allowAlways":
		next := prompt.ModeDefault
		if mode == prompt.ModeAcceptEdits || mode == prompt.ModeAuto {
			next = mode
		}
		return nil, Decided{"allow", "user"}, next
	}
	text := "The user did not approve the plan. Keep planning."
	if reason != "" {
		text = "The user did not approve the plan: " + reason + " Keep planning."
	}
	return &toolexec.Block{Reason: text}, Decided{"deny", "user"}, ""
}

// This file holds the question put to the person about a call (Question) and their answer
// (Answer), what an "always" answer covers (Scope, ScopeOf), and the keeping of such an
// answer exactly as it was shown (Remember).

package gate

import (
	"fmt"

	"github.com/pid-agent/pid/escalate"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
)

// Question is the question put to the person about one call.
type Question struct {
	Call llm.ToolCall
	// Always is what an "always" answer would cover, to show before the choice; nil when no
	// scope as narrow as this call can be given (an "always" answer then counts as once).
	Always *Scope
	// Annotations are an MCP tool's hints (readOnlyHint, destructiveHint...) as its server
	// sent them, shown to the person; never trusted to skip the question. nil otherwise.
	Annotations map[string]any
	// Escalation is set when the call is bash asking to run outside the sandbox; the person
	// reads its justification.
	Escalation *escalate.Request
	// Plan is set when the call puts the model's plan to the person to leave plan mode
	// (exit_plan_mode): Plan.Text is the plan, and the answer's Mode the mode to go on in.
	Plan *Plan
}

// Plan is the plan a Question puts to the person.
type Plan struct {
	// Text is the plan, in markdown.
	Text string
}

// Scope is the scope of an "always" answer, in the shape of beforeToolCall's params.always.
type Scope struct {
	Tool string `json:"tool"`
	// Pattern limits the answer to calls whose argument matches it ("" covers every call).
	Pattern string `json:"pattern,omitempty"`
	// Description says it for a person: "bash commands starting with `npm test` in this
	// folder".
	Description string `json:"description"`
	// path is the gjson path Pattern looks at ("" for the tool's default argument).
	path string
}

// Answer is a person's answer to a Question. Decision is "allow", "allowAlways", "deny" or
// "denyAlways"; anything else denies. Mode, for an answer allowing a plan (Question.Plan),
// names the mode to switch to ("acceptEdits" or "auto"; otherwise "default").
type Answer struct {
	Decision string
	Reason   string
	Mode     string
}

// ScopeOf returns what an "always" answer to call would cover, or nil when no scope as
// narrow as the call can be given (a bash command with a substitution, say). A built-in
// tool's call (builtin) is scoped to its argument (a command's first words, a file's path,
// cwd being the session's working folder); another tool's to the whole tool, which the
// description says.
func ScopeOf(call llm.ToolCall, builtin bool, cwd string) *Scope {
	if !builtin {
		return &Scope{Tool: call.Name, Description: fmt.Sprintf("every call of the tool %s in this workspace", call.Name)}
	}
	sc, ok := permissions.SuggestScope(permissions.Call{Tool: call.Name, Args: call.Arguments, Cwd: cwd})
	if !ok {
		return nil
	}
	return &Scope{Tool: sc.Tool, Pattern: sc.Pattern, Description: sc.Description, path: sc.Path}
}

// Remember keeps an "always" answer d exactly as q.Always scoped it (what the person was
// shown), for the workspace folder root: in store (nil for none), so that it survives a
// restart and can be listed and revoked, else in memory (the session's). It is never kept
// wider: with no scope, or a scope neither can keep, the answer counted for this call only.
// It returns what the face is to be told, in order (none when the store kept it).
func Remember(q Question, d permissions.Decision, root string, store, memory *permissions.Store) []string {
	sc := q.Always
	if sc == nil {
		return []string{fmt.Sprintf("the answer for %s applied to this call only: no \"always\" scope as narrow as the call could be given", q.Call.ID)}
	}
	var warn []string
	if store != nil {
		_, err := store.Remember(root, sc.Tool, sc.path, sc.Pattern, d)
		if err == nil {
			return nil
		}
		warn = append(warn, fmt.Sprintf("could not store the answer for %s (%s), kept for this session only: %v", q.Call.ID, sc.Description, err))
	}
	if _, err := memory.Remember(root, sc.Tool, sc.path, sc.Pattern, d); err != nil {
		warn = append(warn, fmt.Sprintf("the answer for %s applied to this call only: %v", q.Call.ID, err))
	}
	return warn
}

// Package gate decides whether a tool call runs, is refused, or is put to the person, from
// what the session knows of it: the permissions' verdict, the mode, a PreToolUse hook's
// answer, a request to leave the sandbox and the answers remembered for such requests
// (docs/permissions.md's table, in its order). It holds no state and asks no one: the
// session gathers a Call, puts a Question to the person when Decide says so, reads the
// Answer with Answered or Unanswered, and keeps an "always" answer with Remember exactly as
// narrow as its Scope was shown. The entry point is Decide.
//
// This file holds Decide and the reading of the person's answers.
package gate

import (
	"fmt"
	"strings"

	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
)

// Decided is what was decided about a call and who decided it, for the audit log.
type Decided struct {
	Decision string // "allow", "deny" or "aborted"
	By       string // "user" (the editor's answer), "remembered", or the policy's source
}

// Call is what Decide needs to know of a tool call, as it will run (with the arguments a
// PreToolUse hook put in the model's place, when one did).
type Call struct {
	// Name is the tool's name.
	Name string
	// Verdict is the permissions' verdict on the call (the session's, with remembered answers).
	Verdict permissions.Verdict
	// Mode is the session's mode (prompt.Mode*).
	Mode string
	// Screened is a PreToolUse hook's answer: "allow", "ask", or "" for none.
	Screened string
	// Escalates is set when the call asks to run outside the sandbox (a built-in bash call
	// with "unsandboxed": true).
	Escalates bool
	// HookEscalates is set when a PreToolUse hook took the command out of the sandbox where
	// the model had left it in: the person is asked whatever anything else says.
	HookEscalates bool
	// ChangesFiles is set for a built-in write or edit.
	ChangesFiles bool
	// Bash is set for a built-in bash call.
	Bash bool
	// MCPMayChange is set for an MCP tool its server does not mark read-only: plan mode
	// refuses it.
	MCPMayChange bool
	// EditInside reports whether a write or edit stays inside the workspace, out of its
	// protected paths (acceptEdits and auto let those run). Called at most once, only for
	// a call that ChangesFiles.
	EditInside func() bool
	// BashSandboxed reports whether a bash call would run contained by the kernel (auto and
	// plan let those run). Called at most once, only for a Bash call that does not Escalate.
	BashSandboxed func() bool
	// RememberedEscalation returns the session's "always" answer to this escalation, if
	// any. Called at most once, only for a call that Escalates (not by a hook).
	RememberedEscalation func() (permissions.Decision, bool)
}

// Decide returns what becomes of c: refused (a Block and why), run (a nil Block), or, when
// ask is true, put to the person (the session asks, then calls Answered or Unanswered).
func Decide(c Call) (b *toolexec.Block, d Decided, ask bool) {
	v := c.Verdict
	by := v.Source
	if v.Part != "" {
		by += " (" + v.Part + ")"
	}
	// The order of docs/permissions.md's table: a deny, plan mode's refusal to change
	// files, an allow, the mode's own allowances, then the question.
	switch {
	case v.Decision == permissions.Deny && v.Source == "remembered":
		return &toolexec.Block{Reason: fmt.Sprintf("The user chose to always deny %s here.", c.Name)}, Decided{"deny", by}, false
	case v.Decision == permissions.Deny:
		return &toolexec.Block{Reason: fmt.Sprintf("Tool %s is denied by the permissions (%s).", c.Name, v.Source)}, Decided{"deny", by}, false
	case c.Mode == prompt.ModePlan && c.ChangesFiles:
		return modes.PlanBlock(c.Name), Decided{"deny", "mode plan"}, false
	case c.Mode == prompt.ModePlan && c.MCPMayChange:
		return modes.PlanBlockMCP(c.Name), Decided{"deny", "mode plan (an MCP tool not marked read-only)"}, false
	case c.Screened == "allow" && !c.Escalates:
		// A PreToolUse hook allowed it: no question, but never over a deny or plan mode.
		return nil, Decided{"allow", "PreToolUse hook"}, false
	case c.Screened == "ask" && c.Mode != prompt.ModeBypass:
		// A PreToolUse hook wants the person asked, whatever the rules and the mode allow.
	case v.Decision == permissions.Allow && !c.Escalates:
		return nil, Decided{"allow", by}, false
	}
	if !c.HookEscalates && c.Screened != "ask" {
		if mby, ok := modeAllows(c); ok {
			return nil, Decided{"allow", mby}, false
		}
	}
	if c.Escalates && !c.HookEscalates {
		if d, ok := c.RememberedEscalation(); ok {
			if d == permissions.Allow {
				return nil, Decided{"allow", "remembered (outside the sandbox)"}, false
			}
			return &toolexec.Block{Reason: "The user chose to always deny running this command outside the sandbox here."}, Decided{"deny", "remembered (outside the sandbox)"}, false
		}
	}
	return nil, Decided{}, true
}

// modeAllows returns who lets a call that would ask run without asking in its mode, and
// whether the mode does: an "ask" rule asks in every mode but bypassPermissions; acceptEdits
// and auto let writes and edits inside the workspace (not its protected paths) run; auto and
// plan let sandboxed bash run (never an escalation).
func modeAllows(c Call) (string, bool) {
	by := "mode " + c.Mode
	switch {
	case c.Mode == prompt.ModeBypass:
		return by, true
	case modes.ExplicitAsk(c.Verdict):
		return "", false
	case (c.Mode == prompt.ModeAcceptEdits || c.Mode == prompt.ModeAuto) && c.ChangesFiles:
		return by, c.EditInside()
	case (c.Mode == prompt.ModeAuto || c.Mode == prompt.ModePlan) && c.Bash && !c.Escalates:
		return by + " (sandboxed)", c.BashSandboxed()
	}
	return "", false
}

// Offer returns the "always" scope a question about c offers: none for a hook's escalation
// (no remembered answer ever answers it, so "always" would mean once), escalation's for a
// call that escalates (exactly its command, for the session), else scope's (the call's).
func Offer(c Call, scope, escalation func() *Scope) *Scope {
	switch {
	case c.HookEscalates:
		return nil
	case c.Escalates:
		return escalation()
	}
	return scope()
}

// Put puts q, a question Decide asked for, to the person through ask, and reads the answer:
// no answer refuses the call (Unanswered; cancelled reports whether the call's context ended,
// and warn is told of any other failure), an answer is read by Answered. It returns the
// refusal (nil when the call runs), what was decided, and the decision an "always" answer
// asks the session to remember ("" for none).
func Put(q Question, ask func(Question) (Answer, error), cancelled func() bool, warn func(string)) (*toolexec.Block, Decided, permissions.Decision) {
	a, err := ask(q)
	if err != nil {
		stopped := cancelled()
		if !stopped {
			warn(fmt.Sprintf("approval request for %s failed: %v", q.Call.ID, err))
		}
		b, d := unanswered(q.Call.Name, err, stopped)
		return b, d, ""
	}
	return Answered(q.Call.Name, a.Decision, a.Reason)
}

// unanswered returns the refusal of the call of tool name when the question to the person
// got no answer: err is the face's error, cancelled whether the call's context ended (the
// prompt was cancelled). An err with a Reason() method gives its own reason.
func unanswered(name string, err error, cancelled bool) (*toolexec.Block, Decided) {
	if cancelled {
		return &toolexec.Block{Reason: "Operation aborted"}, Decided{"aborted", "cancelled while waiting for the user"}
	}
	reason := fmt.Sprintf("the editor did not answer the approval request (%v).", err)
	if r, ok := err.(interface{ Reason() string }); ok {
		reason = r.Reason()
	}
	return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: %s", name, reason)}, Decided{"deny", "no answer from the editor"}
}

// Answered reads the person's answer to the call of tool name: decision is "allow",
// "allowAlways", "deny" or "denyAlways" (anything else denies), reason the person's reason
// for a denial. It returns the refusal (nil when the call runs), what was decided, and the
// decision an "always" answer asks the session to remember ("" for none).
func Answered(name, decision, reason string) (*toolexec.Block, Decided, permissions.Decision) {
	switch decision {
	case "allowAlways":
		return nil, Decided{"allow", "user"}, permissions.Allow
	case "allow":
		return nil, Decided{"allow", "user"}, ""
	case "deny", "denyAlways":
		// The daemon frames the person's reason, whichever face asked: the model reads a
		// denial, never a bare reason that could pass for the tool's output.
		text := fmt.Sprintf("The user denied this call of %s.", name)
		if r := strings.TrimSpace(reason); r != "" {
			text = fmt.Sprintf("The user denied this call of %s: %s", name, r)
		}
		var remember permissions.Decision
		if decision == "denyAlways" {
			remember = permissions.Deny
		}
		return &toolexec.Block{Reason: text}, Decided{"deny", "user"}, remember
	}
	return &toolexec.Block{Reason: fmt.Sprintf("Tool %s was not run: the editor answered the approval request with an unknown decision %q.", name, decision)}, Decided{"deny", "user (unknown answer)"}, ""
}

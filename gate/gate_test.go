// Tests of Decide (the table of docs/permissions.md, row by row, and what it asks of the
// session only when it needs it) and of the reading of the person's answers.

package gate

import (
	"errors"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
)

// never is an input callback a case must not reach.
func never[T any](t *testing.T, name string, v T) func() T {
	return func() T { t.Helper(); t.Errorf("%s was called", name); return v }
}

func TestDecide(t *testing.T) {
	ask := permissions.Verdict{Decision: permissions.Ask, Source: "built-in"}
	askRule := permissions.Verdict{Decision: permissions.Ask, Source: "project"}
	allow := permissions.Verdict{Decision: permissions.Allow, Source: "user", Part: "rule 2"}
	deny := permissions.Verdict{Decision: permissions.Deny, Source: "project"}
	remembered := permissions.Verdict{Decision: permissions.Deny, Source: "remembered"}
	yes := func() bool { return true }
	no := func() bool { return false }
	recallAllow := func() (permissions.Decision, bool) { return permissions.Allow, true }
	recallDeny := func() (permissions.Decision, bool) { return permissions.Deny, true }
	recallNone := func() (permissions.Decision, bool) { return "", false }
	neverRecall := func() (permissions.Decision, bool) {
		t.Errorf("RememberedEscalation was called")
		return permissions.Allow, true
	}
	type want struct {
		reason string // "" when the call is not refused
		d      Decided
		ask    bool
	}
	cases := []struct {
		name string
		c    Call
		want want
	}{
		{"a remembered deny", Call{Name: "write", Verdict: remembered, Mode: prompt.ModeBypass, Screened: "allow"},
			want{"The user chose to always deny write here.", Decided{"deny", "remembered"}, false}},
		{"a deny rule, over bypass and a hook's allow", Call{Name: "bash", Verdict: deny, Mode: prompt.ModeBypass, Screened: "allow"},
			want{"Tool bash is denied by the permissions (project).", Decided{"deny", "project"}, false}},
		{"plan mode refuses a write an allow rule allows", Call{Name: "write", Verdict: allow, Mode: prompt.ModePlan, ChangesFiles: true},
			want{"You are in plan mode: write cannot change files now. Read and explore, then call exit_plan_mode with your plan; once the user approves it, you can make the changes.", Decided{"deny", "mode plan"}, false}},
		{"plan mode refuses an MCP tool not read-only", Call{Name: "mcp__x__y", Verdict: allow, Mode: prompt.ModePlan, MCPMayChange: true, Screened: "allow"},
			want{"You are in plan mode: mcp__x__y is an MCP tool its server does not mark read-only (readOnlyHint), so it cannot run now. Use read-only tools to explore, then call exit_plan_mode with your plan; once the user approves it, you can use it.", Decided{"deny", "mode plan (an MCP tool not marked read-only)"}, false}},
		{"a hook's allow over the question", Call{Name: "write", Verdict: ask, Mode: prompt.ModeDefault, Screened: "allow"},
			want{"", Decided{"allow", "PreToolUse hook"}, false}},
		{"a hook's allow does not take a command out of the sandbox", Call{Name: "bash", Verdict: allow, Mode: prompt.ModeDefault, Screened: "allow", Escalates: true, Bash: true, RememberedEscalation: recallNone},
			want{"", Decided{}, true}},
		{"a hook's ask over an allow rule", Call{Name: "read", Verdict: allow, Mode: prompt.ModeAuto, Screened: "ask", ChangesFiles: true, EditInside: never(t, "EditInside", true)},
			want{"", Decided{}, true}},
		{"a hook's ask is not heard in bypass", Call{Name: "read", Verdict: allow, Mode: prompt.ModeBypass, Screened: "ask"},
			want{"", Decided{"allow", "user (rule 2)"}, false}},
		{"an allow rule, with its part", Call{Name: "read", Verdict: allow, Mode: prompt.ModeDefault},
			want{"", Decided{"allow", "user (rule 2)"}, false}},
		{"an allow rule does not allow an escalation", Call{Name: "bash", Verdict: allow, Mode: prompt.ModeDefault, Escalates: true, Bash: true, RememberedEscalation: recallNone},
			want{"", Decided{}, true}},
		{"bypass allows what would ask", Call{Name: "bash", Verdict: askRule, Mode: prompt.ModeBypass, Escalates: true, Bash: true},
			want{"", Decided{"allow", "mode bypassPermissions"}, false}},
		{"default mode asks", Call{Name: "write", Verdict: ask, Mode: prompt.ModeDefault, ChangesFiles: true, EditInside: never(t, "EditInside", true)},
			want{"", Decided{}, true}},
		{"acceptEdits lets an edit inside run", Call{Name: "edit", Verdict: ask, Mode: prompt.ModeAcceptEdits, ChangesFiles: true, EditInside: yes},
			want{"", Decided{"allow", "mode acceptEdits"}, false}},
		{"acceptEdits asks for an edit outside", Call{Name: "edit", Verdict: ask, Mode: prompt.ModeAcceptEdits, ChangesFiles: true, EditInside: no},
			want{"", Decided{}, true}},
		{"an ask rule asks in acceptEdits", Call{Name: "edit", Verdict: askRule, Mode: prompt.ModeAcceptEdits, ChangesFiles: true, EditInside: never(t, "EditInside", true)},
			want{"", Decided{}, true}},
		{"acceptEdits asks for bash", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeAcceptEdits, Bash: true, BashSandboxed: never(t, "BashSandboxed", true)},
			want{"", Decided{}, true}},
		{"auto lets sandboxed bash run", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeAuto, Bash: true, BashSandboxed: yes},
			want{"", Decided{"allow", "mode auto (sandboxed)"}, false}},
		{"plan lets sandboxed bash run", Call{Name: "bash", Verdict: ask, Mode: prompt.ModePlan, Bash: true, BashSandboxed: yes},
			want{"", Decided{"allow", "mode plan (sandboxed)"}, false}},
		{"auto asks for bash the kernel cannot contain", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeAuto, Bash: true, BashSandboxed: no},
			want{"", Decided{}, true}},
		{"auto asks for an escalation", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeAuto, Bash: true, Escalates: true, BashSandboxed: never(t, "BashSandboxed", true), RememberedEscalation: recallNone},
			want{"", Decided{}, true}},
		{"a remembered allow of the escalation", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeDefault, Bash: true, Escalates: true, RememberedEscalation: recallAllow},
			want{"", Decided{"allow", "remembered (outside the sandbox)"}, false}},
		{"a remembered deny of the escalation", Call{Name: "bash", Verdict: allow, Mode: prompt.ModeDefault, Bash: true, Escalates: true, RememberedEscalation: recallDeny},
			want{"The user chose to always deny running this command outside the sandbox here.", Decided{"deny", "remembered (outside the sandbox)"}, false}},
		{"a hook's escalation asks in bypass and over a remembered allow", Call{Name: "bash", Verdict: ask, Mode: prompt.ModeBypass, Bash: true, Escalates: true, HookEscalates: true, RememberedEscalation: neverRecall},
			want{"", Decided{}, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, d, ask := Decide(tc.c)
			reason := ""
			if b != nil {
				reason = b.Reason
			}
			if b == nil && tc.want.reason != "" {
				reason = "(not refused)"
			}
			if got := (want{reason, d, ask}); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// reasoned is a face's error that says itself what the model reads.
type reasoned struct{}

func (reasoned) Error() string  { return "raw" }
func (reasoned) Reason() string { return "the client closed the question." }

func TestUnanswered(t *testing.T) {
	cases := []struct {
		err       error
		cancelled bool
		reason    string
		d         Decided
	}{
		{errors.New("broken pipe"), true, "Operation aborted", Decided{"aborted", "cancelled while waiting for the user"}},
		{errors.New("broken pipe"), false, "Tool write was not run: the editor did not answer the approval request (broken pipe).", Decided{"deny", "no answer from the editor"}},
		{reasoned{}, false, "Tool write was not run: the client closed the question.", Decided{"deny", "no answer from the editor"}},
	}
	for _, tc := range cases {
		b, d := unanswered("write", tc.err, tc.cancelled)
		if b == nil || b.Reason != tc.reason || d != tc.d {
			t.Errorf("Unanswered(%v, %v) = %+v, %+v; want %q, %+v", tc.err, tc.cancelled, b, d, tc.reason, tc.d)
		}
	}
}

func TestAnswered(t *testing.T) {
	cases := []struct {
		decision, reason string
		block            string // "" when the call runs
		d                Decided
		remember         permissions.Decision
	}{
		{"allow", "", "", Decided{"allow", "user"}, ""},
		{"allowAlways", "", "", Decided{"allow", "user"}, permissions.Allow},
		{"deny", "  ", "The user denied this call of bash.", Decided{"deny", "user"}, ""},
		{"deny", " not now\n", "The user denied this call of bash: not now", Decided{"deny", "user"}, ""},
		{"denyAlways", "never", "The user denied this call of bash: never", Decided{"deny", "user"}, permissions.Deny},
		{"Allow", "", `Tool bash was not run: the editor answered the approval request with an unknown decision "Allow".`, Decided{"deny", "user (unknown answer)"}, ""},
	}
	for _, tc := range cases {
		b, d, remember := Answered("bash", tc.decision, tc.reason)
		block := ""
		if b != nil {
			block = b.Reason
			if block == "" {
				block = "(empty)"
			}
		}
		if block != tc.block || d != tc.d || remember != tc.remember {
			t.Errorf("Answered(%q, %q) = %q, %+v, %q; want %q, %+v, %q", tc.decision, tc.reason, block, d, remember, tc.block, tc.d, tc.remember)
		}
	}
}

// Put asks once with the question as given, reads the answer, and tells the face of a failed
// question unless the call was cancelled.
func TestPut(t *testing.T) {
	q := Question{Call: llm.ToolCall{ID: "c7", Name: "write"}, Always: &Scope{Tool: "write", Pattern: "a.txt"}}
	var warned []string
	warn := func(w string) { warned = append(warned, w) }
	no := func() bool { return false }
	var got []Question
	ask := func(a Answer, err error) func(Question) (Answer, error) {
		return func(q Question) (Answer, error) { got = append(got, q); return a, err }
	}
	b, d, remember := Put(q, ask(Answer{Decision: "allowAlways"}, nil), no, warn)
	if b != nil || d != (Decided{"allow", "user"}) || remember != permissions.Allow || len(got) != 1 || got[0].Call.ID != "c7" || got[0].Always != q.Always {
		t.Errorf("allowAlways: %+v, %+v, %q; asked %+v", b, d, remember, got)
	}
	b, d, remember = Put(q, ask(Answer{Decision: "deny", Reason: "no"}, nil), no, warn)
	if b == nil || b.Reason != "The user denied this call of write: no" || remember != "" {
		t.Errorf("deny: %+v, %+v, %q", b, d, remember)
	}
	b, d, _ = Put(q, ask(Answer{}, errors.New("eof")), no, warn)
	if b == nil || b.Reason != "Tool write was not run: the editor did not answer the approval request (eof)." || d != (Decided{"deny", "no answer from the editor"}) {
		t.Errorf("no answer: %+v, %+v", b, d)
	}
	if len(warned) != 1 || warned[0] != "approval request for c7 failed: eof" {
		t.Errorf("warned %q", warned)
	}
	b, d, _ = Put(q, ask(Answer{}, errors.New("eof")), func() bool { return true }, warn)
	if b == nil || d.Decision != "aborted" || len(warned) != 1 {
		t.Errorf("cancelled: %+v, %+v, warned %q", b, d, warned)
	}
}

// A question offers the call's scope, an escalation's own for an escalation, and none for a
// hook's escalation.
func TestOffer(t *testing.T) {
	callScope, escScope := &Scope{Tool: "bash", Pattern: "npm test"}, &Scope{Tool: "bash", Pattern: "npm test --unsafe"}
	scope := func() *Scope { return callScope }
	esc := func() *Scope { return escScope }
	if got := Offer(Call{Name: "bash"}, scope, esc); got != callScope {
		t.Errorf("a sandboxed call offers %+v", got)
	}
	if got := Offer(Call{Name: "bash", Escalates: true}, scope, esc); got != escScope {
		t.Errorf("an escalation offers %+v", got)
	}
	if got := Offer(Call{Name: "bash", Escalates: true, HookEscalates: true}, scope, esc); got != nil {
		t.Errorf("a hook's escalation offers %+v", got)
	}
}

// This file holds what a session keeps for its audit log between a call's decision and its
// line: the decisions of calls that will run (Decisions), and the entry of a call that will
// not (Refused).

package audit

import (
	"sync"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/redact"
)

// Decisions holds, per call id, what was decided about a call that will run and who decided
// it, until the audit hook reads it (Take: Options.Decision) or the call ends (Forget). The
// zero value is empty and ready; it is safe for concurrent use.
type Decisions struct {
	m sync.Map // call id -> decided
}

// decided is one call's decision and who made it.
type decided struct{ decision, by string }

// Note keeps what was decided about call id, and by whom.
func (d *Decisions) Note(id, decision, by string) { d.m.Store(id, decided{decision, by}) }

// Take returns (and forgets) what was decided about call id; ok is false when nothing was.
func (d *Decisions) Take(id string) (decision, by string, ok bool) {
	v, ok := d.m.LoadAndDelete(id)
	if !ok {
		return "", "", false
	}
	e := v.(decided)
	return e.decision, e.by, true
}

// Forget drops what was decided about call id (the call ended without the hook reading it).
func (d *Decisions) Forget(id string) { d.m.Delete(id) }

// Refused returns the entry of call, which will not run, in session: decision is "deny" or
// "aborted", by who decided; its arguments and by are sanitized as the hook's are (r, when
// set, redacts them).
func Refused(session string, call llm.ToolCall, decision, by string, r *redact.Redactor) Entry {
	return Entry{
		Session: session, Tool: call.Name, ToolCallID: call.ID,
		Args:    SanitizeArgs(call.Arguments, r),
		IsError: true, Decision: decision, DecidedBy: SanitizeText(by, r),
	}
}

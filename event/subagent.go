// This file holds the events of a subagent: a task call's child session starting and
// ending. They are emitted with the child session (its run has not started, or has ended),
// and name the parent session, whose notifications they are.

package event

type (
	// SubagentStart: the task call ToolCallID of session ParentSessionID started the child
	// session ChildSessionID.
	SubagentStart struct {
		ParentSessionID, ToolCallID, ChildSessionID string
		Description, Agent                          string
		// Worktree is the git worktree the child works in ("" for none).
		Worktree string
	}
	// SubagentEnd: the child session ended with StopReason ("stop", "error", "aborted", or
	// "maxTurns" when it ran out of turns).
	SubagentEnd struct {
		ParentSessionID, ToolCallID, ChildSessionID string
		StopReason                                  string
	}
)

func (SubagentStart) isEvent() {}
func (SubagentEnd) isEvent()   {}

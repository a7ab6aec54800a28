// This file tells the model the session's mode without touching the system prompt or the
// tool list, so that a mode change keeps the provider's prompt cache: the first user message
// or tool result after the mode changed carries, in what the model sees of it, a note saying
// what the mode is now and means. Which messages carry one is the session layer's to say.

package prompt

import "github.com/pid-agent/pid/llm"

// The modes' ids, as ACP clients know them (package session offers them).
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeAuto        = "auto"
	ModeBypass      = "bypassPermissions"
)

// ModeText returns what mode means for the model: a sentence or two, the same bytes each
// time. Pure.
func ModeText(mode string) string {
	switch mode {
	case ModePlan:
		return "write and edit are refused, and bash runs in a read-only sandbox. Explore and read, then call exit_plan_mode with your plan: the person approves it (and you can make the changes) or says what to change."
	case ModeAcceptEdits:
		return "writes and edits inside the workspace run without asking; bash commands ask the person first."
	case ModeAuto:
		return "writes and edits inside the workspace, and bash commands in the sandbox, run without asking. A command that needs more than the sandbox gives may be called again with unsandboxed: true and a justification: the person is asked."
	case ModeBypass:
		return "nothing asks the person first: take care with commands that delete or overwrite things."
	}
	return "write, edit and bash ask the person before they run, unless a rule or an earlier answer allows them."
}

// ModeNote returns the note that tells the model the mode is now mode. Pure.
func ModeNote(mode string) string {
	return "<system-reminder>The mode is now " + mode + ": " + ModeText(mode) + "</system-reminder>"
}

// WithNote returns m with the note of mode before its content; m is not modified.
func WithNote(m llm.Message, mode string) llm.Message {
	content := make([]llm.Content, 0, len(m.Content)+1)
	m.Content = append(append(content, llm.Text(ModeNote(mode))), m.Content...)
	return m
}

// TakesNote reports whether a message of this role can carry a mode note.
func TakesNote(r llm.Role) bool { return r == llm.RoleUser || r == llm.RoleToolResult }

// AppendNoted appends msgs to dst, msgs[i] being transcript message first+i: each one notes
// names (by that index) with the note of its mode (WithNote), the others as they are. msgs
// is not modified.
func AppendNoted(dst, msgs []llm.Message, first int, notes map[int]string) []llm.Message {
	for i, m := range msgs {
		if mode, ok := notes[first+i]; ok {
			m = WithNote(m, mode)
		}
		dst = append(dst, m)
	}
	return dst
}

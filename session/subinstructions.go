// This file gives the model the instruction files of folders the system prompt does not hold
// (package prompt finds and marks them): the first time a read, edit or write of a file under
// such a folder ends, they are added to that call's result. It is the first step of the
// session's afterToolCall chain, so that the editor's hook, the redaction of secrets, the
// person's PostToolUse hooks and the audit log see the result as the model gets it. What the
// model has seen is what the tool results it still sees list: a loaded session finds them in
// its transcript, and after a compaction only those the kept messages list count.

package session

import (
	"context"
	"encoding/json"

	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// withSubInstructions returns the session's afterToolCall chain with the step that adds
// subfolders' instruction files first.
func (s *Session) withSubInstructions(after toolexec.AfterHook) toolexec.AfterHook {
	return toolexec.ChainAfter(s.subInstructions, after)
}

// subInstructions is the afterToolCall step: see the file's comment.
//
// Contract: as toolexec.AfterHook; it reads at most a few small files, never fails (a file
// it cannot read is not given), and returns nil when it adds nothing.
func (s *Session) subInstructions(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
	switch in.Call.Name {
	case tools.NameRead, tools.NameEdit, tools.NameWrite:
	default:
		return nil, nil
	}
	if !s.builtin[in.Call.Name] || in.Assistant == nil {
		// A batch with no model (tools/execute) is in no transcript: the model would not
		// see the file, which would count as given.
		return nil, nil
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(in.Call.Arguments, &a) != nil || a.Path == "" {
		return nil, nil
	}
	files := s.subInstr.For(a.Path, s.ws.Cwd(), s.root(), s.ws.Roots(), s.host.instructionsTrusted)
	if len(files) == 0 {
		return nil, nil
	}
	content, details := prompt.WithFiles(in.Result.Content, in.Result.Details, files, s.ws.Cwd(), s.host.markerNonce())
	return &toolexec.Override{Content: content, Details: details}, nil
}

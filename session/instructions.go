// This file gives the model the person's and the repository's instruction files (package
// prompt reads them and makes the system prompt's section): the user's own, then AGENTS.md
// (else CLAUDE.md) in each folder from the session's workspace folder down to its working
// folder, which count only once the folder is trusted. Before each model call the files are
// looked at again (a stat each), and read again when they changed, or after a compaction;
// the section is the same bytes while none changes, so the provider's prompt cache holds.
// The marker code the lines around each file carry is the host's (markerNonce).

package session

import (
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
)

// InstructionsMax is the most of an instruction file the model gets (prompt.InstructionsMax).
const InstructionsMax = prompt.InstructionsMax

// InstructionFile describes one instruction file the model gets (session/new's and
// session/load's instructions).
type InstructionFile = prompt.File

// Instructions returns the instruction files the model gets at the session's next call, as
// of the last time they were read (read now when they never were).
//
// Contract: safe for concurrent use; it may read the files (a few stats and reads).
func (s *Session) Instructions() []InstructionFile {
	if files, read := s.instr.Files(); read {
		return files
	}
	s.instr.Refresh(s.instructionsPlace(), -1, s.instructionLost)
	files, _ := s.instr.Files()
	return files
}

// instructionsPlace is where the session's instruction files are.
func (s *Session) instructionsPlace() prompt.Place {
	root := s.root()
	trusted := s.host.instructionsTrusted(root)
	if c := s.sub.child; c != nil && c.worktree != nil {
		// A child in its worktree reads the worktree's copy of the files: trusted as its
		// parent's folder is.
		trusted = s.host.instructionsTrusted(c.parent.root())
	}
	return prompt.Place{Root: root, Cwd: s.ws.Cwd(), Trusted: trusted, Nonce: s.host.markerNonce()}
}

// instructionLost logs an instruction file that could not be read (gone or swapped since its
// stat: it is left out).
func (s *Session) instructionLost(path string, err error) {
	s.host.log.Debug("instruction file not read", "path", path, "err", err)
}

// requestFor returns the request of a model call with the session's instruction files added
// to the system prompt the loop made (pid's own prompt, or systemPrompt, and
// appendSystemPrompt): the files are looked at again, those that changed are read again, and
// all of them are after a compaction. req is not modified.
//
// Contract: called on the loop's goroutine before each model call (and again for a call
// made again after a compaction).
func (s *Session) requestFor(req *llm.Request) *llm.Request {
	last, compactions := s.lastCompaction()
	instr, compacted := s.instr.Refresh(s.instructionsPlace(), compactions, s.instructionLost)
	if t := s.compacting.lastTranscript; compacted && last.FirstKept <= len(t) {
		// The results that gave subfolders' files may be summarized away: they are
		// given again.
		s.subInstr.Reset(t[last.FirstKept:])
	}
	// The skills in use, read again at each call: the same bytes while none changes.
	skillsBlock := s.skillsBlock()
	if instr == "" && skillsBlock == "" {
		return req
	}
	out := *req
	// The section starts with a blank line: the prompt's own last newline would make two.
	out.SystemPrompt = strings.TrimRight(out.SystemPrompt, "\n") + instr
	if skillsBlock != "" {
		out.SystemPrompt = strings.TrimRight(out.SystemPrompt, "\n") + "\n\n" + skillsBlock + "\n"
	}
	return &out
}

// instructionsTrusted reports whether the instruction files of the workspace folder root
// may be given to the model: the folder is trusted (trust.json, this daemon's grant, or the
// user settings' trustedFolders). A folder that is not one of the editor's workspace
// folders is not trusted for that alone.
func (h *Host) instructionsTrusted(root string) bool {
	if h.loader == nil {
		return h.trustedRoot(root)
	}
	return h.loader.TrustedFolder(root)
}

// ignoredInstructions lists, for the trust question, the instruction files of the
// session's workspace folder that are left out because it is not trusted ("instructions:
// AGENTS.md", relative to the folder); nil when it is trusted.
func (s *Session) ignoredInstructions() []string {
	root := s.root()
	if s.host.instructionsTrusted(root) {
		return nil
	}
	var out []string
	for _, rel := range prompt.WorkspaceFiles(root, s.ws.Cwd()) {
		out = append(out, "instructions: "+rel)
	}
	return out
}

// markerNonce returns the host's marker code (prompt.MarkerCode), read from (or first
// written to) the state folder at the first call; a folder that cannot be used gives a code
// of this daemon's only, which is logged.
//
// Contract: safe for concurrent use.
func (h *Host) markerNonce() string {
	h.marker.once.Do(func() {
		code, err := prompt.MarkerCode()
		if err != nil {
			h.log.Warn("the marker code of instruction files is this daemon's own (a loaded session's prompt will differ)", "err", err)
			code = prompt.NewMarkerCode()
		}
		h.marker.code = code
	})
	return h.marker.code
}

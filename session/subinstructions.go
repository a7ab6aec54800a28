// This file gives the model the instruction files of folders the system prompt does not
// hold (a subfolder of the working folder, or a folder beside it in the workspace): the
// first time a read, edit or write of a file under such a folder ends, the AGENTS.md (else
// CLAUDE.md) of each folder between the workspace folder and the file that the model has
// not seen yet is added to that call's result, under "Instructions for FOLDER/ (from
// FOLDER/AGENTS.md):", between the session's marker lines (instructions.go), cut at
// InstructionsMax, and listed in the result's details.instructions. It is the first step of
// the session's afterToolCall chain, so that the editor's hook, the redaction of secrets,
// the person's PostToolUse hooks and the audit log see the result as the model gets it.
//
// Only a trusted workspace folder's files are given, read as instructions.go reads them.
// What the model has seen is what the tool results it still sees list: a loaded session
// finds them in its transcript, and after a compaction only those the kept messages list
// count, so a file whose result was summarized away is given again.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// subInstructionsState is which folders' instruction files the model has been given in
// tool results. Touched by the batches' goroutines (the after hook, concurrently for the
// calls of a parallel batch) and by the loop's (after a compaction).
type subInstructionsState struct {
	// mu guards given.
	mu sync.Mutex
	// given holds the absolute path of each instruction file given so far.
	given map[string]bool
}

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
	files := s.folderFilesFor(a.Path)
	if len(files) == 0 {
		return nil, nil
	}
	nonce := s.host.markerNonce()
	cwd := s.ws.Cwd()
	content := append([]llm.Content(nil), in.Result.Content...)
	listed := make([]InstructionFile, 0, len(files))
	var b strings.Builder
	for _, f := range files {
		dir := relTo(cwd, filepath.Dir(f.Path))
		from := relTo(cwd, f.Path)
		fmt.Fprintf(&b, "\n\nInstructions for %s/ (from %s):\n%s", dir, from, markedText(nonce, from, f))
		listed = append(listed, f.InstructionFile)
	}
	content = append(content, llm.Text(strings.TrimPrefix(b.String(), "\n\n")))
	return &toolexec.Override{Content: content, Details: withInstructions(in.Result.Details, listed)}, nil
}

// folderFilesFor returns the instruction files, not given yet, of the folders above the file
// at path that the system prompt does not hold, read now, from the top down; it notes them
// as given.
func (s *Session) folderFilesFor(path string) []instructionText {
	cwd := s.ws.Cwd()
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	root := ""
	for _, r := range s.ws.Roots() {
		if within(path, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" || !s.host.instructionsTrusted(root) {
		return nil
	}
	// The folders the system prompt holds: the session's workspace folder down to cwd.
	held := map[string]bool{}
	if root == s.root() {
		for _, d := range foldersDown(root, cwd) {
			held[d] = true
		}
	}
	var dirs []string
	for _, d := range foldersDown(root, filepath.Dir(path)) {
		if !held[d] {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	var out []instructionText
	for _, d := range dirs {
		c, ok := folderInstructions(r, root, d)
		if !ok || !s.claimSubInstructions(c.path) {
			continue
		}
		f, err := readInstructions(c)
		if err != nil {
			s.releaseSubInstructions(c.path)
			continue
		}
		out = append(out, f)
	}
	return out
}

// claimSubInstructions reports whether the file at path is still to be given, and notes it
// as given.
func (s *Session) claimSubInstructions(path string) bool {
	s.subInstr.mu.Lock()
	defer s.subInstr.mu.Unlock()
	if s.subInstr.given[path] {
		return false
	}
	if s.subInstr.given == nil {
		s.subInstr.given = map[string]bool{}
	}
	s.subInstr.given[path] = true
	return true
}

// releaseSubInstructions forgets that the file at path was given (it could not be read).
func (s *Session) releaseSubInstructions(path string) {
	s.subInstr.mu.Lock()
	defer s.subInstr.mu.Unlock()
	delete(s.subInstr.given, path)
}

// seenSubInstructions sets the files given to those listed by the tool results of msgs
// (what the model sees: a loaded transcript, the messages a compaction kept).
func (s *Session) seenSubInstructions(msgs []llm.Message) {
	given := map[string]bool{}
	for i := range msgs {
		if msgs[i].Role != llm.RoleToolResult {
			continue
		}
		for _, p := range instructionsListed(msgs[i].Details) {
			given[p] = true
		}
	}
	s.subInstr.mu.Lock()
	s.subInstr.given = given
	s.subInstr.mu.Unlock()
}

// keptFrom returns the index of the first transcript message the model sees after the
// compactions comps (0 for none).
func keptFrom(comps []compactionRecord) int {
	if n := len(comps); n > 0 {
		return comps[n-1].firstKept
	}
	return 0
}

// instructionsListed returns the paths a result's details.instructions lists: the details
// as subInstructions made them, or as a loaded file gives them back (decoded JSON).
func instructionsListed(details any) []string {
	d, ok := details.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	switch list := d["instructions"].(type) {
	case []InstructionFile:
		for _, f := range list {
			out = append(out, f.Path)
		}
	case []any:
		for _, f := range list {
			if m, ok := f.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// withInstructions returns a result's details with instructions listed: an object's members
// and "instructions" (details that are not an object, which no built-in tool has, are
// replaced).
func withInstructions(details any, listed []InstructionFile) map[string]any {
	out := map[string]any{}
	if details != nil {
		if raw, err := json.Marshal(details); err == nil {
			_ = json.Unmarshal(raw, &out)
			if out == nil {
				out = map[string]any{}
			}
		}
	}
	out["instructions"] = listed
	return out
}

// relTo returns path relative to dir, with slashes ("." for dir itself); path itself when
// it cannot be made relative.
func relTo(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// This file hands out the settings' "lsp" object (the language servers pid may start) and
// "subagents" object (how many task children run at once, and their turns).

package settings

import "encoding/json"

// LSP returns the "lsp" objects that apply to a folder: the user settings', and the one of
// the workspace root holding the folder when that root is trusted (an untrusted root's is
// ignored: its servers would be processes the repository chose). Either may be nil; the
// session layer merges them, the workspace's over the user's.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) LSP(folder string) (user, workspace json.RawMessage) {
	s := l.cur.Load()
	if root, ok := s.rootOf(folder); ok {
		return s.userLSP, s.rootLSP[root]
	}
	return s.userLSP, nil
}

// Subagents returns the "subagents" objects that apply to a folder: the user settings', and
// the one of the workspace root holding the folder when that root is trusted (an untrusted
// root's is ignored, and listed in Ignored). Either may be nil; the session layer reads
// them, the workspace's keys over the user's.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Subagents(folder string) (user, workspace json.RawMessage) {
	s := l.cur.Load()
	if root, ok := s.rootOf(folder); ok {
		return s.userSubagents, s.rootSubagents[root]
	}
	return s.userSubagents, nil
}

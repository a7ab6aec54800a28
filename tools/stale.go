// This file holds the file tools' side of the stale-edit guard (workspace.StaleGuard): the
// Check of edit and write that refuses an unread file before approval is asked, and the
// read tool's Resources that let a read earlier in the same batch count.

package tools

import (
	"encoding/json"

	"github.com/pid-agent/pid/toolexec"
)

// refuseUnread is the Check of edit and write (run in toolexec's prepare pass, after
// validation): it refuses, before anyone is asked to approve the call, a change to a file
// that exists but that the agent has not read in this session
// (workspace.StaleGuard.RefuseUnread); a call without a path passes.
//
// Contract: called during toolexec's serial prepare pass; it stats the file, never reads
// it, and changes nothing.
func (w *Workspace) refuseUnread(call toolexec.Call) error {
	var a struct {
		Path *string `json:"path"`
	}
	if json.Unmarshal(call.Args, &a) != nil || a.Path == nil {
		return nil
	}
	return w.seen.RefuseUnread(*a.Path)
}

// readResources is the read tool's Resources: the file's real path (pathResources), which
// is also noted as expected (workspace.StaleGuard.Expect), so that an edit or write of it
// later in the same parallel batch is not refused before the read has run.
func readResources(w *Workspace) func(toolexec.Call) []string {
	paths := pathResources(w)
	return func(call toolexec.Call) []string {
		res := paths(call)
		for _, p := range res {
			w.seen.Expect(p)
		}
		return res
	}
}

// ChangedFiles returns the real paths, sorted, of the files the agent read or wrote in this
// session whose content on disk has changed since (or that are gone):
// workspace.StaleGuard.Changed, whose contract it has. After Close it returns nil.
func (w *Workspace) ChangedFiles() []string { return w.seen.Changed() }

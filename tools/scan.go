// This file lets another package reach the workspace as a search.Fence (the checkpoints'
// snapshots walk it with search.Scan): a file through the os.Root of the workspace folder
// holding it (At), the folders, how a path is shown.

package tools

import (
	"os"

	"github.com/pid-agent/pid/search"
)

// At returns the os.Root of the workspace folder holding the real absolute path p and p
// relative to it ("." for the folder itself), or an error wrapping ErrOutsideWorkspace when
// no folder holds it. Contract: the root belongs to the workspace: callers use it while the
// workspace is open and never close it.
func (w *Workspace) At(p string) (*os.Root, string, error) { return w.at(p) }

// The workspace is the fence of its searches.
var _ search.Fence = (*Workspace)(nil)

// Display returns how the real path p is shown in results: relative to the cwd when inside
// it, absolute otherwise.
func (w *Workspace) Display(p string) string { return w.display(p) }

// FolderOf returns the workspace folder holding the real path p, "" when none does.
func (w *Workspace) FolderOf(p string) string { return w.rootOf(p) }

// Folders returns the real paths of the workspace folders.
func (w *Workspace) Folders() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.real
	}
	return out
}

// This file holds the Workspace: package workspace's (the cwd, the workspace folders with
// an os.Root open on each, the path resolution) with what the file
// tools keep beside them: the stale-edit guard, the editor's files, the launcher of bash's
// commands (the sandbox), the jobs.

package tools

import (
	"context"
	"fmt"
	"sync"

	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/workspace"
	"github.com/pid-agent/pid/workspace/launch"
)

// ErrOutsideWorkspace is wrapped by the error Resolve returns for a path that leads outside
// the workspace folders, so callers can tell it apart with errors.Is.
// It is the search engine's search.ErrOutside, so that a Fence's refusals read the same.
var ErrOutsideWorkspace = search.ErrOutside

// Workspace is where one session's file tools may act: a cwd that relative paths start from,
// and the workspace folders (roots) that every path must stay inside once symbolic links are
// followed (its workspace.Workspace). Resolve checks a path and says why it refuses one; every
// open, create, rename, stat and listing then goes through an os.Root held open on the
// workspace folder (At), so a link swapped in after the check cannot lead outside. It also
// remembers what the agent last saw of each file it read or wrote, to refuse edits of
// files that changed on disk since (workspace.StaleGuard), and starts bash's commands
// (launch.Launcher).
//
// A Workspace is safe for concurrent use. Close it when the session ends.
type Workspace struct {
	*workspace.Workspace
	seen   *workspace.StaleGuard // what the agent last saw of each file (workspace/stale.go)
	editor EditorFiles           // set before the first call, then only read
	// launcher starts bash's commands, in the kernel sandbox unless it is turned off.
	launcher *launch.Launcher
	jobs     Jobs  // the background jobs (jobs.go)
	terms    terms // the editor's terminals, if bash uses them (terminal.go)

	// mu guards swept.
	mu sync.Mutex
	// swept holds the real paths of the folders already cleared of stale temporary files.
	swept map[string]bool
}

// EditorFiles is the editor's own view of files, for editors that offer one (an ACP client
// declaring fs.readTextFile / fs.writeTextFile, a native one declaring
// experimental.pid.fs): read, write and edit then see unsaved buffers, and their changes
// land in the editor. A nil func leaves that side to the disk. grep, find and ls always
// look at the disk.
//
// Contract: Read and Write are called from tool calls, possibly concurrently for different
// paths, with the resolved absolute path inside the workspace, only once every check a disk
// access would have passed has passed (confinement, the file being a regular text file on
// disk for Read and for replacing one); they must return promptly when ctx ends. Read
// returns the whole text of the file as the editor has it; Write replaces it. An error
// fails the tool call with that error's text, and nothing falls back to the disk. The
// stale-edit guard compares what Read returns with what the agent last saw.
type EditorFiles struct {
	Read  func(ctx context.Context, path string) (string, error)
	Write func(ctx context.Context, path, text string) error
}

// UseEditorFiles makes the file tools read and write through the editor. Contract: called
// at most once, before the session's first tool call.
func (w *Workspace) UseEditorFiles(f EditorFiles) { w.editor = f }

// NewWorkspace returns the workspace of a session whose cwd is cwd and whose workspace
// folders are roots (absolute paths of existing folders, as the editor named them in
// initialize). No roots means the cwd is the only folder.
//
// Contract: called once per session by whoever builds the session's tools. It fails when cwd
// or a root is not an absolute path of an existing folder, or when cwd is outside every
// root (relative paths would then all be refused). It opens one file descriptor per
// workspace folder (an os.Root) and starts no goroutine: the file watcher starts with the
// first file read. The caller must Close the workspace, which closes those descriptors.
func NewWorkspace(cwd string, roots []string) (*Workspace, error) {
	f, err := workspace.New(cwd, roots)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	w := &Workspace{Workspace: f, seen: workspace.NewStaleGuard(f), launcher: launch.New(f), swept: make(map[string]bool)}
	w.jobs.ws = w
	return w, nil
}

// Jobs returns the session's background jobs (bash with background: true).
func (w *Workspace) Jobs() *Jobs { return &w.jobs }

// Close ends the session's background jobs (each killed and reaped) and its sandbox (its
// namespace holders, with every process in them, its network and its proxy), gives up the
// workspace's share of the process's file watcher (internal/watch) and closes the workspace
// folders' descriptors. From then on the file tools fail, saying the workspace is closed, and
// ChangedFiles returns nil; a call already under way finishes or fails cleanly.
//
// Contract: called once by the session owner when the session ends; safe to call again.
// It returns the watcher's close error, if any.
func (w *Workspace) Close() error {
	w.jobs.Close()
	err := w.seen.Close()
	w.launcher.Close() // before the workspace, as launch.New asks
	w.Workspace.Close()
	return err
}

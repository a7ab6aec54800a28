// Package search is pid's fenced search engine: a parallel walk of a folder tree in one
// stable order (Walk) that skips .git and what ignore files exclude, never follows symbolic
// links and reaches every folder and file through an os.Root, so that it cannot leave the
// folders its Fence allows; the glob and the line matcher grep and find filter with (NewGlob,
// NewMatcher, GrepFile); and Scan, which walks every folder of a Fence for the checkpoints.
// It finds; the tools in package tools word what it found.
package search

import (
	"errors"
	"os"
	"strings"
)

// Fence is what a walk may reach: the folders of a workspace, each with an os.Root open on
// it. Package workspace's Workspace is one (and so package tools' Workspace, built on it).
//
// Contract: its methods are called from the walk's goroutines, concurrently; they must not
// call back into a walk. Paths given to them are real absolute paths unless said otherwise.
type Fence interface {
	// At returns the os.Root of the folder holding the real path p (the deepest one when
	// folders nest) and p relative to it ("." for the folder itself). It fails when no
	// folder holds p, or the fence is closed. The root belongs to the fence: callers never
	// close it.
	At(p string) (*os.Root, string, error)
	// Resolve returns the real path p leads to (following symbolic links), or an error
	// wrapping ErrOutside when it leads outside the folders.
	Resolve(p string) (string, error)
	// Display returns how the real path p is shown in results (relative to the cwd when
	// inside it).
	Display(p string) string
	// FolderOf returns the folder holding the real path p, "" when none does.
	FolderOf(p string) string
	// Folders returns the real paths of the folders.
	Folders() []string
}

// ErrOutside is what a Fence's Resolve wraps for a path that leads outside its folders.
var ErrOutside = errors.New("outside the workspace folders")

// SkippedFile is a file a walk left out, and why: an ignore file that is not a regular
// file, leads outside the workspace or is too big.
type SkippedFile struct {
	Path   string `json:"path"` // as shown in results: relative to the cwd when inside it
	Reason string `json:"reason"`
}

// within reports whether p is dir or inside it; both are absolute and clean.
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// This file holds the find tool: files and folders whose path matches a glob, respecting
// ignore files; and the check that a path names a folder, which find and ls share.

package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/toolexec"
)

// The find tool's limits.
const (
	FindDefaultLimit = 1000
	FindMaxLimit     = 10000
)

// FindDetails are the details of a find result.
type FindDetails struct {
	Count int `json:"count"`
	// Truncated says more paths match than are shown.
	Truncated bool `json:"truncated,omitempty"`
	// IgnoreFilesSkipped lists the ignore files that were not applied, and why.
	IgnoreFilesSkipped []SkippedFile `json:"ignoreFilesSkipped,omitempty"`
}

var findSchema = schema(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Glob. Without a / it matches names at any depth (*.go, *_test.{go,ts}); with a / it matches the path from the searched folder (src/**/*.go, **/testdata/*). * and ? stay within one folder, ** spans folders."},
    "path": {"type": "string", "description": "Folder to search, relative to the cwd or absolute. Default: the cwd."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "Most paths to show. Default 1000."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

func findTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameFind,
		Description: "Find files and folders by glob. Prints one path per line (relative to the cwd, folders ending in /), in name order, at most limit (default 1000). " +
			"Skips .git and what .gitignore, .ignore, .git/info/exclude and git's global excludes file exclude (also outside a git repository; a nested repository has its own rules); " +
			"lists hidden files; does not follow symbolic links. Finding nothing is not an error.",
		Parameters: findSchema,
		Execute: func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Pattern string   `json:"pattern"`
				Path    string   `json:"path"`
				Limit   *float64 `json:"limit"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.find(ctx, a.Pattern, a.Path, intArg(a.Limit, FindDefaultLimit), onUpdate)
		},
	}
}

// find runs the find tool; onUpdate (nil for none) gets progress on a long walk.
func (ws *Workspace) find(ctx context.Context, pattern, path string, limit int, onUpdate func(event.Result)) (toolexec.Result, error) {
	g, err := search.NewGlob(pattern)
	if err != nil {
		return toolexec.Result{}, err
	}
	if path == "" {
		path = "."
	}
	root, err := ws.folder(path, "")
	if err != nil {
		return toolexec.Result{}, err
	}
	var out strings.Builder
	var det FindDetails
	prog := startProgress(onUpdate, "looked at")
	det.IgnoreFilesSkipped, err = search.Walk(ctx, ws, root, search.Spec[struct{}]{Visit: func(n *search.Node, _ struct{}) error {
		prog.files.Add(1)
		if !g.MatchNode(n) {
			return nil
		}
		if det.Count == limit {
			det.Truncated = true
			return fs.SkipAll
		}
		det.Count++
		out.WriteString(ws.Display(n.Path()))
		if n.IsDir() {
			out.WriteByte('/')
		}
		out.WriteByte('\n')
		return nil
	}})
	prog.end()
	if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}
	note := skippedNote(det.IgnoreFilesSkipped)
	if det.Count == 0 {
		msg := fmt.Sprintf("No files match %q in %s", pattern, ws.Display(root))
		if note != "" {
			msg += "\n" + note
		}
		return toolexec.Result{Content: []llm.Content{llm.Text(msg)}, Details: det}, nil
	}
	if det.Truncated {
		fmt.Fprintf(&out, "\n[Stopped after %d paths (limit). Narrow the pattern or path, or raise limit.]\n", det.Count)
	}
	if note != "" {
		out.WriteString("\n" + note)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
}

// folder resolves path ("" meaning the cwd) to an existing folder of the workspace, or fails
// saying why; hint is added to the "not a folder" message.
func (ws *Workspace) folder(path, hint string) (string, error) {
	if path == "" {
		path = "."
	}
	real, err := ws.Resolve(path)
	if err != nil {
		return "", err
	}
	r, rel, err := ws.At(real)
	if err != nil {
		return "", err
	}
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("path not found: %s", path)
	case err != nil:
		return "", ws.Explain(path, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a folder%s", path, hint)
	}
	return real, nil
}

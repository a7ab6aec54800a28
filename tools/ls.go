// This file holds the ls tool: the entries of one folder.

package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/toolexec"
)

// The ls tool's limits.
const (
	LsDefaultLimit = 500
	LsMaxLimit     = 5000
)

// LsDetails are the details of an ls result.
type LsDetails struct {
	Path string `json:"path"`
	// Count is how many entries are shown, of Total.
	Count int `json:"count"`
	Total int `json:"total"`
}

var lsSchema = schema(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Folder to list, relative to the cwd or absolute. Default: the cwd."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Most entries to show. Default 500."}
  },
  "additionalProperties": false
}`)

func lsTool(ws *Workspace) toolexec.Tool {
	return toolexec.Tool{
		Name: NameLs,
		Description: "List a folder: one entry per line in name order, dot files included, folders ending in /, symbolic links as name -> target. " +
			"Shows everything on disk (.gitignore is not applied here; use find for that). At most limit (default 500) entries.",
		Parameters: lsSchema,
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path  string   `json:"path"`
				Limit *float64 `json:"limit"`
			}
			if err := decodeArgs(call, &a); err != nil {
				return toolexec.Result{}, err
			}
			return ws.ls(a.Path, intArg(a.Limit, LsDefaultLimit))
		},
	}
}

func (ws *Workspace) ls(path string, limit int) (toolexec.Result, error) {
	if path == "" {
		path = "."
	}
	real, err := ws.folder(path, "; use read to see a file")
	if err != nil {
		return toolexec.Result{}, err
	}
	entries, links, err := ws.listDir(real)
	if err != nil {
		return toolexec.Result{}, ws.Explain(path, err)
	}
	defer links.Close()
	det := LsDetails{Path: ws.Display(real), Total: len(entries)}
	if len(entries) == 0 {
		return toolexec.Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is empty.", det.Path))}, Details: det}, nil
	}
	var out strings.Builder
	for _, e := range entries {
		if det.Count == limit {
			break
		}
		det.Count++
		out.WriteString(e.Name)
		switch {
		case e.Type.IsDir():
			out.WriteByte('/')
		case e.Type&fs.ModeSymlink != 0:
			if target, err := links.Readlink(e.Name); err == nil {
				out.WriteString(" -> " + target)
			}
		}
		out.WriteByte('\n')
	}
	if det.Count < det.Total {
		fmt.Fprintf(&out, "\n[Showing %d of %d entries. Raise limit to see more.]\n", det.Count, det.Total)
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(out.String())}, Details: det}, nil
}

// listDir returns the entries of the folder at the real path real, sorted by name, read
// through an os.Root opened on it from the workspace folder's root, which it also returns
// (open, for reading links by name; the caller closes it).
func (ws *Workspace) listDir(real string) ([]search.Entry, *os.Root, error) {
	r, rel, err := ws.At(real)
	if err != nil {
		return nil, nil, err
	}
	dir, err := r.OpenRoot(rel)
	if err != nil {
		return nil, nil, err
	}
	entries, err := search.List(dir)
	if err != nil {
		dir.Close()
		return nil, nil, err
	}
	return entries, dir, nil
}

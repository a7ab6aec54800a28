// This file holds where acceptEdits and auto let a write or an edit run without asking:
// inside the workspace, outside the paths other programs load commands from.

package modes

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/protected"
	"github.com/pid-agent/pid/tools"
)

// InsideWorkspace reports whether a write or edit call's path leads inside one of ws's
// folders and outside the paths other programs load commands from (package protected:
// .git, .pid, .vscode...), which still ask. Where it leads is where the kernel would write:
// every symbolic link on the way followed, a dangling last one included (docs/x.md ->
// ../.envrc creates .envrc). The path as written counts too: a link named .vscode makes
// what it leads to the editor's configuration.
func InsideWorkspace(ws *tools.Workspace, call llm.ToolCall) bool {
	p := pathArg(call)
	if p == "" {
		return false
	}
	_, rel, ok := ws.Leads(p)
	if !ok || rel == "." {
		return false
	}
	if _, hit := protected.Match(rel); hit {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws.Cwd(), p)
	}
	p = filepath.Clean(p)
	for _, root := range ws.Roots() {
		if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			if _, hit := protected.Match(r); hit {
				return false
			}
		}
	}
	return true
}

// pathArg returns a call's "path" argument ("" when it has none).
func pathArg(call llm.ToolCall) string {
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Arguments, &a) != nil {
		return ""
	}
	return a.Path
}

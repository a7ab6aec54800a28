// This file says how the built-in tools' calls are shown to a person (toolexec.Tool.View): a
// kind, a title ("Read src/main.go", "Run `go test ./...`"), the file a call touches, and
// what a write or an edit changed.

package tools

import (
	"encoding/json"
	"path/filepath"

	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/toolexec"
)

// viewArgs are the arguments of the built-in tools that their views use.
type viewArgs struct {
	Path    string   `json:"path"`
	Command string   `json:"command"`
	Pattern string   `json:"pattern"`
	Offset  *float64 `json:"offset"`
	Content *string  `json:"content"`
}

// withViews sets the View of each built-in tool of all, for a workspace whose working folder
// is cwd (a view's paths are absolute).
func withViews(all []toolexec.Tool, cwd string) []toolexec.Tool {
	for i := range all {
		name := all[i].Name
		all[i].View = func(args json.RawMessage, details any) toolexec.View {
			var a viewArgs
			_ = json.Unmarshal(args, &a) // invalid arguments still get a title; the call fails later
			return view(name, cwd, a, details)
		}
	}
	return all
}

// view is the view of a call of the built-in tool name.
func view(name, cwd string, a viewArgs, details any) toolexec.View {
	in := ""
	if a.Path != "" {
		in = " in " + a.Path
	}
	v := toolexec.View{Kind: toolexec.KindOther, Title: name}
	switch name {
	case NameRead:
		v.Kind, v.Title = toolexec.KindRead, "Read "+title.Or(a.Path, "a file")
	case NameWrite:
		v.Kind, v.Title = toolexec.KindEdit, "Write "+title.Or(a.Path, "a file")
	case NameEdit:
		v.Kind, v.Title = toolexec.KindEdit, "Edit "+title.Or(a.Path, "a file")
	case NameBash:
		v.Kind, v.Title = toolexec.KindExecute, "Run a command"
		if a.Command != "" {
			v.Title = "Run " + title.Code(title.Line(a.Command, 80))
		}
		switch d := details.(type) {
		case BashDetails:
			v.Terminal = d.TerminalID
		case JobDetails:
			v.Terminal = d.TerminalID
		}
	case NameGrep:
		v.Kind, v.Title = toolexec.KindSearch, "Search for "+title.Code(title.Line(a.Pattern, 60))+in
	case NameFind:
		v.Kind, v.Title = toolexec.KindSearch, "Find "+title.Code(title.Line(a.Pattern, 60))+in
	case NameLs:
		v.Kind, v.Title = toolexec.KindSearch, "List "+title.Or(a.Path, ".")
	}
	switch name {
	case NameRead, NameWrite, NameEdit:
		if a.Path != "" {
			loc := toolexec.Location{Path: absPath(cwd, a.Path)}
			if name == NameRead && a.Offset != nil && *a.Offset >= 1 {
				loc.Line = int(*a.Offset)
			}
			v.Locations = []toolexec.Location{loc}
		}
		if c, ok := change(name, cwd, a, details); ok {
			v.Changes = []toolexec.FileChange{c}
		}
	}
	return v
}

// change is what a write or an edit whose result has details changed; ok is false for
// other details (none: the call has not ended).
func change(name, cwd string, a viewArgs, details any) (toolexec.FileChange, bool) {
	var c struct {
		Path             string `json:"path"`
		Diff             string `json:"diff"`
		Created          bool   `json:"created"`
		FirstChangedLine int    `json:"firstChangedLine"`
	}
	switch d := details.(type) {
	case WriteDetails:
		c.Path, c.Diff, c.Created = d.Path, d.Diff, d.Created
	case *WriteDetails:
		if d == nil {
			return toolexec.FileChange{}, false
		}
		c.Path, c.Diff, c.Created = d.Path, d.Diff, d.Created
	case EditDetails:
		c.Path, c.Diff, c.FirstChangedLine = d.Path, d.Diff, d.FirstChangedLine
	case *EditDetails:
		if d == nil {
			return toolexec.FileChange{}, false
		}
		c.Path, c.Diff, c.FirstChangedLine = d.Path, d.Diff, d.FirstChangedLine
	case map[string]any:
		// From a saved session: the JSON of WriteDetails or EditDetails (their json tags).
		b, err := json.Marshal(d)
		if err != nil || json.Unmarshal(b, &c) != nil {
			return toolexec.FileChange{}, false
		}
	default:
		return toolexec.FileChange{}, false
	}
	out := toolexec.FileChange{Path: absPath(cwd, c.Path), Diff: c.Diff, Created: c.Created, Line: c.FirstChangedLine}
	if c.Created && name == NameWrite && a.Content != nil {
		out.Content = *a.Content
	}
	return out, true
}

// absPath resolves a tool's path argument against cwd (a view's paths are absolute). "~" is
// left as the tools would take it: unresolved here.
func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

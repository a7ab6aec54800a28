// This file says how the calls of MCP tools are shown to a person (toolexec.Tool.View): from
// the hints their server gives (annotations: readOnlyHint, openWorldHint, title), which are
// shown, never trusted to decide anything, and always naming the server.

package mcp

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/toolexec"
)

// View returns the View of the MCP tool named name (pid's name, mcp__SERVER__TOOL) whose
// server gave hints (its annotations; nil for none, or for a tool its server no longer
// offers): see Kind and Title. A name that is not an MCP tool's is shown as it is.
//
// Contract: pure; the view is safe for concurrent use.
func View(name string, hints map[string]any) func(json.RawMessage, any) toolexec.View {
	v := toolexec.View{Kind: toolexec.KindOther, Title: name}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok && server != "" && tool != "" {
			v.Kind, v.Title = Kind(hints), Title(server, tool, hints)
		}
	}
	return func(json.RawMessage, any) toolexec.View { return v }
}

// Kind is the kind of an MCP tool's calls, from the hints its server sent: a tool that says
// it does not change its environment (readOnlyHint) reads (KindRead: reading files or data),
// or fetches when it also says it reaches outside entities (openWorldHint: KindFetch,
// retrieving external data); any other is KindOther, since a tool that may change things
// could edit, delete, move or run, and the hints do not say which. Only hints given as true
// count (MCP's defaults are not assumed). The kind only picks an icon: whether the call asks
// first is decided by the permission rules alone. Pure.
func Kind(hints map[string]any) toolexec.Kind {
	if hints["readOnlyHint"] != true {
		return toolexec.KindOther
	}
	if hints["openWorldHint"] == true {
		return toolexec.KindFetch
	}
	return toolexec.KindRead
}

// Title is what a person reads about a call of the MCP tool tool of server: its server's
// title hint when it gave one, else the tool's name, and always the server, as in "Create
// Issue (MCP server github)". A title that is not the tool's name in other words (case, _
// or - for spaces) also names the tool, so that a server cannot pass one tool off as another
// in a permission request: "List files (MCP server x, tool delete_all)". Pure.
func Title(server, tool string, hints map[string]any) string {
	where := "MCP server " + server
	t, _ := hints["title"].(string)
	t = title.Line(printable(t), 60)
	switch {
	case t == "":
		return tool + " (" + where + ")"
	case words(t) == words(tool):
		return t + " (" + where + ")"
	}
	return t + " (" + where + ", tool " + tool + ")"
}

// printable is s on one line: control and format characters (escape sequences, tabs, line
// breaks, direction overrides) and runs of spaces become one space.
func printable(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)), " ")
}

// words is s in lower case with _, - and runs of spaces as one space.
func words(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == '_' || r == '-' || unicode.IsSpace(r)
	}), " ")
}

// SearchView is the View of tool_search's calls: a search of the MCP tools, by its query.
func SearchView(args json.RawMessage, _ any) toolexec.View {
	var a struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(args, &a)
	if a.Query == "" {
		return toolexec.View{Kind: toolexec.KindSearch, Title: "Find MCP tools"}
	}
	return toolexec.View{Kind: toolexec.KindSearch, Title: "Find MCP tools: " + title.Code(title.Line(a.Query, 60))}
}

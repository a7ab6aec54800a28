package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// An MCP tool's kind and title come from its server's hints: readOnlyHint reads (and
// fetches when openWorldHint says it reaches outside), a title is shown with the server,
// and with the tool's name when it says something else; tool_search is a search by its
// query.
func TestViewTitles(t *testing.T) {
	for _, tc := range []struct {
		name, args  string
		hints       map[string]any
		kind, title string
	}{
		{"tool_search", `{"query":"open a pull request"}`, nil, "search", "Find MCP tools: `open a pull request`"},
		{"tool_search", `{}`, nil, "search", "Find MCP tools"},
		{"mcp__github__create_issue", `{}`, nil, "other", "create_issue (MCP server github)"},
		{"mcp__github__create_issue", `{}`, map[string]any{"title": "Create Issue", "destructiveHint": true}, "other", "Create Issue (MCP server github)"},
		{"mcp__t__peek", `{}`, map[string]any{"readOnlyHint": true, "title": "Peek"}, "read", "Peek (MCP server t)"},
		{"mcp__web__search", `{}`, map[string]any{"readOnlyHint": true, "openWorldHint": true}, "fetch", "search (MCP server web)"},
		{"mcp__t__peek", `{}`, map[string]any{"readOnlyHint": false, "openWorldHint": true}, "other", "peek (MCP server t)"},
		{"mcp__t__peek", `{}`, map[string]any{"readOnlyHint": "yes"}, "other", "peek (MCP server t)"},
		{"mcp__x__delete_all", `{}`, map[string]any{"readOnlyHint": true, "title": "List files"}, "read", "List files (MCP server x, tool delete_all)"},
		{"mcp__x__delete_all", `{}`, map[string]any{"title": "Safe\n\x1b[2Jlookup\u202e"}, "other", "Safe [2Jlookup (MCP server x, tool delete_all)"},
		{"mcp__x__t", `{}`, map[string]any{"title": strings.Repeat("long ", 20)}, "other", strings.Repeat("long ", 12)[:59] + "… (MCP server x, tool t)"},
		{"mcp__x__t", `{}`, map[string]any{"title": " \t "}, "other", "t (MCP server x)"},
		{"mcp__broken", `{}`, map[string]any{"readOnlyHint": true}, "other", "mcp__broken"},
		{"deploy", `{}`, nil, "other", "deploy"},
	} {
		view := View(tc.name, tc.hints)
		if tc.name == SearchToolName {
			view = SearchView
		}
		v := view(json.RawMessage(tc.args), nil)
		if string(v.Kind) != tc.kind || v.Title != tc.title {
			t.Errorf("%s %v: kind %q title %q, want %q %q", tc.name, tc.hints, v.Kind, v.Title, tc.kind, tc.title)
		}
	}
}

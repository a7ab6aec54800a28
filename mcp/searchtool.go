// This file builds the tool_search tool: the model finds deferred MCP tools by what they
// do, and the ones found are activated from its result on (addedToolNames).

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
)

// SearchToolName is the name of the tool SearchTool returns.
const SearchToolName = "tool_search"

// maxSearchLimit caps tool_search's limit; searchDescription caps each description it
// shows (the model gets the whole one with the tool once it is active).
const (
	maxSearchLimit    = 20
	searchDescription = 200
)

var searchParams = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string","description":"What the tool should do, in a few words (or its exact name)."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)."}},` +
	`"required":["query"],"additionalProperties":false}`)

// SearchTool returns tool_search, {query: string, limit?: number}: it ranks the tools of
// deferred() (see Index.Search), answers their names, servers and descriptions as text,
// and activates them (AddedToolNames), so the model can call them in its next step.
// Details is {"tools": [names]}.
//
// Contract: deferred is called once per call, from the call's goroutine; it returns the
// index of the tools the session has not activated yet (nil: none), and must not block.
func SearchTool(deferred func() *Index) toolexec.Tool {
	return toolexec.Tool{
		Name: SearchToolName,
		Description: "Search the tools of the session's MCP servers that are not loaded yet, by what they do " +
			"or by name. The tools found are loaded: call them by name in your next step.",
		Parameters: searchParams,
		Execute: func(_ context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var in struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := call.Decode(&in); err != nil {
				return toolexec.Result{}, err
			}
			if strings.TrimSpace(in.Query) == "" {
				return toolexec.Result{}, fmt.Errorf("query is empty: say in a few words what the tool should do")
			}
			in.Limit = min(in.Limit, maxSearchLimit)
			var found []Tool
			if ix := deferred(); ix != nil {
				found = ix.Search(in.Query, in.Limit)
			}
			if len(found) == 0 {
				return toolexec.Result{Content: toolexec.TextResult(fmt.Sprintf(
					"No MCP tool that is not loaded yet matches %q. Try other words (what the tool does, or its server's name).", in.Query)).Content,
					Details: map[string]any{"tools": []string{}}}, nil
			}
			return searchResult(in.Query, found), nil
		},
	}
}

// searchResult is tool_search's answer for the tools found.
func searchResult(query string, found []Tool) toolexec.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tool(s) for %q, now loaded:\n", len(found), query)
	names := make([]string, len(found))
	for i, t := range found {
		names[i] = t.Name
		fmt.Fprintf(&b, "\n- %s (MCP server %s)", t.Name, t.Server)
		if d := firstWords(t.Description, searchDescription); d != "" {
			b.WriteString(": " + d)
		}
	}
	r := toolexec.TextResult(b.String())
	r.AddedToolNames = names
	r.Details = map[string]any{"tools": names}
	return r
}

// firstWords returns s on one line, cut to about n bytes at a space (marked "…").
func firstWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return s[:cut] + "…"
}

package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pid-agent/pid/toolexec"
)

func runSearchTool(t *testing.T, ix *Index, args string) (toolexec.Result, error) {
	t.Helper()
	tool := SearchTool(func() *Index { return ix })
	if _, err := toolexec.NewToolbox(tool); err != nil {
		t.Fatalf("tool_search does not make a toolbox: %v", err)
	}
	return tool.Execute(context.Background(), toolexec.Call{Name: SearchToolName, Args: json.RawMessage(args)}, nil)
}

func TestSearchToolActivatesWhatItFinds(t *testing.T) {
	tools := searchTools()
	tools[0].Description = strings.Repeat("Create a new issue in a repository. ", 20)
	res, err := runSearchTool(t, NewIndex(tools), `{"query":"create issue","limit":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mcp__github__create_issue", "mcp__jira__createIssue"}
	if !reflect.DeepEqual(res.AddedToolNames, want) || !reflect.DeepEqual(res.Details, map[string]any{"tools": want}) {
		t.Errorf("added %v, details %v; want %v", res.AddedToolNames, res.Details, want)
	}
	got := text(res)
	for _, w := range []string{`2 tool(s) for "create issue", now loaded:`, "- mcp__github__create_issue (MCP server github): Create a new issue", "…", "- mcp__jira__createIssue (MCP server jira): Create a Jira ticket."} {
		if !strings.Contains(got, w) {
			t.Errorf("tool_search text lacks %q:\n%s", w, got)
		}
	}
	if line := strings.Split(got, "\n")[2]; len(line) > 300 {
		t.Errorf("a long description is shown whole (%d bytes)", len(line))
	}
}

func TestSearchToolWithoutMatch(t *testing.T) {
	for _, ix := range []*Index{nil, NewIndex(searchTools())} {
		res, err := runSearchTool(t, ix, `{"query":"kubernetes"}`)
		if err != nil || len(res.AddedToolNames) != 0 || !strings.Contains(text(res), `No MCP tool that is not loaded yet matches "kubernetes"`) {
			t.Errorf("no match: %q, added %v, %v", text(res), res.AddedToolNames, err)
		}
	}
	if _, err := runSearchTool(t, nil, `{"query":"  "}`); err == nil || !strings.Contains(err.Error(), "query is empty") {
		t.Errorf("empty query: %v", err)
	}
}

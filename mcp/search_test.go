package mcp

import (
	"fmt"
	"strings"
	"testing"
)

func searchTools() []Tool {
	mk := func(server, tool, desc string) Tool {
		return Tool{Name: ToolName(server, tool, nil), Server: server, Original: tool, Description: desc}
	}
	return []Tool{
		mk("github", "create_issue", "Create a new issue in a repository."),
		mk("github", "list_issues", "List the issues of a repository, with filters."),
		mk("github", "create_pull_request", "Open a pull request from a branch."),
		mk("jira", "createIssue", "Create a Jira ticket."),
		mk("fs", "read_file", "Read the contents of a file."),
		mk("fs", "search", "Find files by name."),
		mk("web", "query", "Search the web with JavaScript. Search engines search everything; search, search, search."),
		mk("slack", "post_message", "Post a message to a Slack channel."),
	}
}

func TestSearchRanking(t *testing.T) {
	tools := searchTools()
	cases := []struct {
		query string
		limit int
		want  string // names without the mcp__ prefix, best first
	}{
		// Both words in the name and the description beat both in the name alone, which
		// beat one word.
		{"create issue", 0, "github__create_issue jira__createIssue github__list_issues github__create_pull_request"},
		// camelCase words are split (and kept whole), plurals folded.
		{"CreateIssues", 2, "jira__createIssue github__create_issue"},
		{"javascript", 0, "web__query"},
		{"JavaScript", 0, "web__query"},
		// An exact original name wins over a description that says it five times.
		{"search", 0, "fs__search web__query"},
		// An exact pid name wins, whatever its case.
		{"  MCP__SLACK__POST_MESSAGE ", 0, "slack__post_message"},
		// A rare word weighs more than a common one (idf).
		{"repository branch", 0, "github__create_pull_request github__create_issue github__list_issues"},
		{"message slack", 1, "slack__post_message"},
		{"kubernetes", 0, ""},
		{"the a of", 0, ""},
	}
	ix := NewIndex(tools)
	for _, c := range cases {
		for _, path := range []struct {
			name   string
			search func(string, int) []Tool
		}{{"Search", func(q string, l int) []Tool { return Search(tools, q, l) }}, {"Index.Search", ix.Search}} {
			var got []string
			for _, tl := range path.search(c.query, c.limit) {
				got = append(got, strings.TrimPrefix(tl.Name, "mcp__"))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("%s(%q, %d) = %v, want %s", path.name, c.query, c.limit, got, c.want)
			}
		}
	}
}

// TestSearchAgreesWithIndex checks that the one-pass Search and an Index rank a thousand
// tools the same way, scores included (through the order of many results).
func TestSearchAgreesWithIndex(t *testing.T) {
	tools := thousandTools()
	ix := NewIndex(tools)
	for _, q := range []string{"update the dashboard of a workspace", "pullRequests", "delete", "files denied", "SERVER07 timestamps", "mcp__server03__sync_page_49", "nothing matches this"} {
		a, b := Search(tools, q, 50), ix.Search(q, 50)
		if len(a) != len(b) {
			t.Fatalf("%q: Search gave %d tools, Index %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Name != b[i].Name {
				t.Fatalf("%q: result %d is %s by Search, %s by Index", q, i, a[i].Name, b[i].Name)
			}
		}
		if q != "nothing matches this" && len(a) == 0 {
			t.Errorf("%q found nothing", q)
		}
	}
}

func TestSearchLimit(t *testing.T) {
	var tools []Tool
	for i := range 12 {
		tools = append(tools, Tool{Name: fmt.Sprintf("mcp__s__t%d", i), Original: fmt.Sprintf("t%d", i), Description: "does a thing"})
	}
	if got := Search(tools, "thing", 0); len(got) != DefaultSearchLimit || got[0].Original != "t0" || got[4].Original != "t4" {
		t.Errorf("default limit: %d tools from %s, want the first %d in order", len(got), got[0].Original, DefaultSearchLimit)
	}
	if got := Search(tools, "thing", 100); len(got) != 12 {
		t.Errorf("limit 100 over 12 matches gave %d", len(got))
	}
	if got := Search(nil, "thing", 3); len(got) != 0 {
		t.Errorf("no tools gave %v", got)
	}
}

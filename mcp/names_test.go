package mcp

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	cut := func(server, tool string) string { return ToolName(server, tool, nil) }
	cases := []struct {
		server, tool string
		taken        []string
		want         string
	}{
		{"github", "create_issue", nil, "mcp__github__create_issue"},
		{"my server", "get.file/v2", nil, "mcp__my_server__get_file_v2"},
		{"émoji", "naïve-tool", nil, "mcp___moji__na_ve-tool"}, // one '_' per character, not per byte
		{"", "", nil, "mcp______"},
		{"s", long, nil, cut("s", long)},
		{"github", "create_issue", []string{"mcp__github__create_issue"}, "mcp__github__create_issue_2"},
		{"github", "create_issue", []string{"mcp__github__create_issue", "mcp__github__create_issue_2"}, "mcp__github__create_issue_3"},
		{"a.b", "t", []string{"mcp__a_b__t"}, "mcp__a_b__t_2"},
	}
	for _, c := range cases {
		taken := map[string]bool{}
		for _, n := range c.taken {
			taken[n] = true
		}
		got := ToolName(c.server, c.tool, func(n string) bool { return taken[n] })
		if got != c.want {
			t.Errorf("ToolName(%q, %q, %v) = %q, want %q", c.server, c.tool, c.taken, got, c.want)
		}
	}

	// Cut names: 64 characters, the start kept, a hash of the original names at the end.
	a := ToolName("s", long+"a", nil)
	b := ToolName("s", long+"b", nil)
	if len(a) != MaxToolName || len(b) != MaxToolName || a == b || !strings.HasPrefix(a, "mcp__s__xxxx") || a[MaxToolName-9] != '_' {
		t.Errorf("long names: %q and %q, want 64 characters each, distinct, ending in _HASH", a, b)
	}
	taken := map[string]bool{a: true}
	c := ToolName("s", long+"a", func(n string) bool { return taken[n] })
	if len(c) != MaxToolName || !strings.HasSuffix(c, "_2") || c[:MaxToolName-11] != a[:MaxToolName-11] {
		t.Errorf("a taken long name became %q, want 64 characters ending in _2", c)
	}
	for _, n := range []string{a, b, c, ToolName("x y", "ü/\x00", nil)} {
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Errorf("%q holds %q", n, r)
			}
		}
	}
}

func TestAllToolsNamesUniquelyAcrossServers(t *testing.T) {
	// Two servers whose names sanitize alike: "a.b" and "a_b" both offer "t".
	mk := func(name string, tools ...string) *Server {
		s := &server{name: name}
		taken := map[string]bool{}
		for _, o := range tools {
			n := ToolName(name, o, func(n string) bool { return taken[n] })
			taken[n] = true
			s.tools = append(s.tools, Tool{Name: n, Server: name, Original: o})
		}
		return &Server{s: s}
	}
	got := AllTools(mk("a.b", "t", "u"), mk("a_b", "t"))
	var names []string
	for _, tl := range got {
		names = append(names, tl.Name+"="+tl.Server+"/"+tl.Original)
	}
	want := "mcp__a_b__t=a.b/t mcp__a_b__u=a.b/u mcp__a_b__t_2=a_b/t"
	if strings.Join(names, " ") != want {
		t.Errorf("AllTools = %v, want %s", names, want)
	}
}

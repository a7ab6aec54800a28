// Tests of Tools: which tools only read, which change files, and which MCP tools plan mode
// refuses, for built-in tools and scripted ones that take a built-in one's name.

package gate

import "testing"

func TestToolsReadOnly(t *testing.T) {
	builtin := Tools{Builtin: map[string]bool{"read": true, "grep": true, "write": true, "bash": true, "todo_write": true,
		"skill": true, "task": true, "fetch": true, "job_kill": true}}
	// A scripted session whose tools take built-in names: theirs is the scripted answer.
	scripted := Tools{Builtin: map[string]bool{}, Asks: map[string]bool{"read": true, "write": false, "todo_write": true, "custom": false}}
	cases := []struct {
		t    Tools
		tool string
		want bool
	}{
		{builtin, "read", true},
		{builtin, "grep", true},
		{builtin, "write", false},
		{builtin, "bash", false},
		{builtin, "todo_write", true},
		{builtin, "skill", true},
		{builtin, "task", true},
		{builtin, "fetch", true},
		{builtin, "job_kill", true},
		{builtin, "tool_search", true},
		{builtin, "mcp__fs__read", false},
		{scripted, "read", false}, // requires approval
		{scripted, "write", true}, // does not
		{scripted, "todo_write", false},
		{scripted, "custom", true},
		{scripted, "unknown", false},
	}
	for _, tc := range cases {
		if got := tc.t.ReadOnly(tc.tool); got != tc.want {
			t.Errorf("ReadOnly(%s) with builtin %v = %v, want %v", tc.tool, tc.t.Builtin[tc.tool], got, tc.want)
		}
	}
}

func TestToolsChangesFiles(t *testing.T) {
	ts := Tools{Builtin: map[string]bool{"write": true, "edit": true, "bash": true}}
	for name, want := range map[string]bool{"write": true, "edit": true, "bash": false, "read": false} {
		if got := ts.ChangesFiles(name); got != want {
			t.Errorf("ChangesFiles(%s) = %v, want %v", name, got, want)
		}
	}
	if (Tools{Asks: map[string]bool{"write": true}}).ChangesFiles("write") {
		t.Error("a scripted tool named write changes files")
	}
}

func TestToolsMCPMayChange(t *testing.T) {
	hints := map[string]map[string]any{
		"mcp__db__query":  {"readOnlyHint": true},
		"mcp__db__drop":   {"readOnlyHint": false, "destructiveHint": true},
		"mcp__db__odd":    {"readOnlyHint": "yes"},
		"mcp__db__silent": nil,
	}
	asked := 0
	annotations := func(name string) map[string]any { asked++; return hints[name] }
	ts := Tools{Builtin: map[string]bool{"bash": true}, Asks: map[string]bool{"mcp__scripted__x": true}}
	cases := map[string]bool{
		"mcp__db__query":   false,
		"mcp__db__drop":    true,
		"mcp__db__odd":     true, // not a boolean: no claim
		"mcp__db__silent":  true,
		"mcp__scripted__x": false, // a scripted tool is not an MCP server's
		"bash":             false,
		"write":            false,
	}
	for name, want := range cases {
		if got := ts.MCPMayChange(name, annotations); got != want {
			t.Errorf("MCPMayChange(%s) = %v, want %v", name, got, want)
		}
	}
	if asked != 4 {
		t.Errorf("the annotations were read %d times, want 4 (the MCP tools only)", asked)
	}
}

// This file holds By: which tools changed a file, as changes/list names them.

package changes

import (
	"cmp"
	"slices"
)

// TaskTool is what By names a change a subagent made: the parent's task call, whatever tool
// of the child's made it (the person asked the parent; the child's tools are its own).
const TaskTool = "task"

// builtins are the tools that change files, in the order By lists them.
var builtins = []string{"edit", "write", "bash", TaskTool}

// Changer returns the name By records for a change made by the tool named tool, in a
// subagent's run when child: TaskTool for any tool of a child, else the tool's own name
// (edit, write, bash, or an MCP tool's full name such as mcp__server__tool).
func Changer(tool string, child bool) string {
	if child {
		return TaskTool
	}
	return tool
}

// By returns the `by` list of a file from the names recorded for its changes (in any order,
// repeated, from every checkpoint the listing covers): each name once, the built-in tools
// first in a fixed order (edit, write, bash, task), then the others (MCP tools) sorted; ""
// is left out. It never returns nil.
func By(names ...string) []string {
	out := []string{}
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	rank := func(n string) int {
		if i := slices.Index(builtins, n); i >= 0 {
			return i
		}
		return len(builtins)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	return out
}

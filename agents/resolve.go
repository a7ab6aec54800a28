// This file turns an agent definition into what its child session gets: its tools (from
// the parent's, never more) and its model (from the person's models list, else the
// parent's).

package agents

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// TaskTool is the subagent tool's name, which no child gets (depth 1).
const TaskTool = "task"

// claudeTools maps Claude Code's tool names (lower-cased) to pid's; "" is a tool no child
// gets. opencode's "list" is pid's ls. Any other name is taken as written (pid's own names,
// an MCP tool's).
var claudeTools = map[string]string{
	"read":      "read",
	"edit":      "edit",
	"multiedit": "edit",
	"write":     "write",
	"bash":      "bash",
	"grep":      "grep",
	"glob":      "find",
	"ls":        "ls",
	"list":      "ls",
	"webfetch":  "fetch",
	"task":      "",
}

// pidName returns pid's name for a tool name of an agent file; "" for one no child gets.
func pidName(name string) string {
	if m, ok := claudeTools[strings.ToLower(name)]; ok {
		return m
	}
	if name == TaskTool {
		return ""
	}
	return name
}

// ToolSet returns the tools of the agent's child session, given its parent's (in the
// parent's order): without tools in its file, the parent's but task (and, for opencode's
// form, but those it sets to false); with them, exactly those (mapped to pid's names:
// Read->read, Edit and MultiEdit->edit, Write->write, Bash->bash, Grep->grep, Glob->find,
// LS->ls, WebFetch->fetch, Task->none; "*" the parent's but task) that the parent has.
// Never task, never a tool the parent lacks. notes say, in words a person reads, what was
// left out and why.
func (a Agent) ToolSet(parent []string) (tools []string, notes []string) {
	has := func(n string) bool { return n != TaskTool && slices.Contains(parent, n) }
	want := map[string]bool{}
	if a.Tools == nil {
		for _, n := range parent {
			want[n] = true
		}
		for _, off := range a.ToolsOff {
			for _, n := range parent {
				if ok, _ := path.Match(off, n); ok || pidName(off) == n {
					delete(want, n)
				}
			}
		}
	}
	for _, t := range a.Tools {
		switch m := pidName(t); {
		case strings.Contains(t, "("):
			notes = append(notes, fmt.Sprintf("%s is left out: pid cannot give an agent a tool for some calls only", t))
		case t == "*":
			for _, n := range parent {
				want[n] = true
			}
		case m == "":
			notes = append(notes, fmt.Sprintf("%s is left out: a subagent cannot start subagents", t))
		case !has(m):
			if m != t {
				notes = append(notes, fmt.Sprintf("%s (pid's %s) is left out: the parent session does not have it", t, m))
			} else {
				notes = append(notes, fmt.Sprintf("%s is left out: the parent session has no such tool", t))
			}
		default:
			want[m] = true
		}
	}
	tools = []string{}
	for _, n := range parent {
		if want[n] && has(n) && !slices.Contains(tools, n) {
			tools = append(tools, n)
		}
	}
	return tools, notes
}

// Model is a model of the person's models list, or the parent's.
type Model struct {
	Provider string
	ID       string
	// Name is the list's display name, if any.
	Name string
}

// String returns the model as PROVIDER/ID.
func (m Model) String() string { return m.Provider + "/" + m.ID }

// ResolveModel returns the model of the agent's child session: the parent's when the file
// names none or "inherit"; the model of the person's list models that its file names as
// PROVIDER/ID or as an ID; for Claude Code's "sonnet", "opus" and "haiku", the first model
// of the list whose ID holds that word (an Anthropic one first). A model it names that is
// not in the list is not used: the parent's is, and warning says so.
func (a Agent) ResolveModel(models []Model, parent Model) (m Model, warning string) {
	spec := strings.TrimSpace(a.Model)
	switch lower := strings.ToLower(spec); lower {
	case "", "inherit":
		return parent, ""
	case "sonnet", "opus", "haiku":
		for _, anthropicOnly := range []bool{true, false} {
			for _, c := range models {
				if (!anthropicOnly || c.Provider == "anthropic") && strings.Contains(strings.ToLower(c.ID), lower) {
					return c, ""
				}
			}
		}
		return parent, fmt.Sprintf("the agent %s asks for the model %q, and no model of your models list is one; it uses the parent's, %s", a.Name, spec, parent)
	}
	provider, id, hasProvider := strings.Cut(spec, "/")
	for _, c := range models {
		if hasProvider && c.Provider == provider && c.ID == id || c.ID == spec {
			return c, ""
		}
	}
	return parent, fmt.Sprintf("the agent %s asks for the model %q, which is not in your models list; it uses the parent's, %s", a.Name, spec, parent)
}

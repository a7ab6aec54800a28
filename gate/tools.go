// This file holds what the gate knows of a session's tools (Tools): which only read, which
// change files, and which MCP tools plan mode refuses.

package gate

import (
	"strings"

	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/skills"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/todo"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/webfetch"
)

// Tools is what the gate knows of a session's tools. The maps are the session's, read only.
type Tools struct {
	// Builtin holds the names of the session's built-in tools (a scripted tool may take a
	// built-in one's name, and is then not built in).
	Builtin map[string]bool
	// Asks maps each scripted tool to whether it requires approval.
	Asks map[string]bool
}

// ReadOnly reports whether a tool of the session only reads: built-in read-only tools, and
// scripted tools that do not require approval. The policy's built-in default allows those
// and asks for the rest.
func (t Tools) ReadOnly(tool string) bool {
	if t.Builtin[tool] {
		switch tool {
		case todo.Name: // it changes the session's plan, nothing outside the session
			return true
		case skills.ToolName: // it reads the person's skills
			return true
		case task.Name: // it starts a subagent, whose own calls are decided one by one
			return true
		case webfetch.Name: // it reads the web; its question is the network's
			return true
		}
		// job_kill too: it stops only what the session itself started.
		return tools.ReadOnly(tool) || tools.RunsWithoutAsking(tool)
	}
	if tool == mcp.SearchToolName {
		return true // it searches the session's own list of tools
	}
	if need, scripted := t.Asks[tool]; scripted {
		return !need
	}
	return false
}

// ChangesFiles reports whether a call of name is a built-in write or edit.
func (t Tools) ChangesFiles(name string) bool {
	return t.Builtin[name] && (name == tools.NameWrite || name == tools.NameEdit)
}

// MCPMayChange reports whether name is an MCP tool whose server does not say it only reads
// (readOnlyHint in its annotations, which returns the tool's hints as its server sent them;
// called only for an MCP tool): plan mode does not run it, whatever the rules say (an MCP
// server runs outside the sandbox). The hint is the server's claim: outside plan mode it
// never skips a question.
func (t Tools) MCPMayChange(name string, annotations func(string) map[string]any) bool {
	if t.Builtin[name] || !strings.HasPrefix(name, "mcp__") {
		return false
	}
	if _, scripted := t.Asks[name]; scripted {
		return false
	}
	ro, _ := annotations(name)["readOnlyHint"].(bool)
	return !ro
}

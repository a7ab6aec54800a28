// Package task holds the subagent tool's parts apart from the sessions it runs: its spec
// (Spec, with the person's agents: WithAgents), its arguments and result details, the bash
// an explore child has (ExploreBash), the cap on task calls per message (OverCap), the
// "subagents" settings (Settings), and what a child's run is followed by (Progress: the
// steps shown, the turns, calls and usage counted, the turn limit) and summed up with
// (Summary). The entry points are Spec and Progress. It runs no session: package session
// makes and runs the child.
//
// This file holds the tool's spec, arguments and details.
package task

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/worktree"
)

// Name is the subagent tool's name.
const Name = "task"

// schema is task's parameters.
const schema = `{"type": "object", "properties": {
  "description": {"type": "string", "minLength": 1, "description": "A few words saying what the subagent is for (shown to the user)."},
  "prompt": {"type": "string", "minLength": 1, "description": "The whole task: the subagent sees this and the repository's instructions, not this conversation."},
  "agent": {"type": "string", "enum": ["explore", "general"], "description": "explore (default): reads and searches only (read, grep, find, ls, bash in a read-only sandbox); general: your tools and permissions, to change files."}
}, "required": ["description", "prompt"], "additionalProperties": false}`

// Spec is task's name, description, parameters and view, without Execute nor Slots.
func Spec() toolexec.Tool {
	return toolexec.Tool{
		Name: Name,
		Description: "Hand a question or a task to a subagent with a fresh context; its final message is this call's result. " +
			"The user does not see that result: tell them what matters in it. Several task calls in one message run at the same time. " +
			"Use explore to search and read the code (it cannot change files), general to make changes. " +
			"The prompt is all the subagent knows: make it self-contained, and say what to return (say, the files and lines that matter).",
		Parameters: json.RawMessage(schema),
		View: func(args json.RawMessage, _ any) toolexec.View {
			var a Args
			_ = json.Unmarshal(args, &a)
			return toolexec.View{Kind: toolexec.KindThink, Title: "Subagent: " + title.Or(title.Line(a.Description, 80), "a task")}
		},
	}
}

// WithAgents returns task t with the person's agents defs in its agent enum and
// description.
func WithAgents(t toolexec.Tool, defs []agents.Agent) toolexec.Tool {
	var sch map[string]any
	if json.Unmarshal(t.Parameters, &sch) != nil {
		return t
	}
	props, _ := sch["properties"].(map[string]any)
	agent, _ := props["agent"].(map[string]any)
	if agent == nil {
		return t
	}
	enum := []string{"explore", "general"}
	var lines strings.Builder
	for _, d := range defs {
		enum = append(enum, d.Name)
		fmt.Fprintf(&lines, "\n%s: %s", d.Name, mdfile.OneLine(d.Description, 200))
	}
	agent["enum"] = enum
	agent["description"] = agent["description"].(string) + " The user's own agents:" + lines.String()
	if raw, err := json.Marshal(sch); err == nil {
		t.Parameters = raw
	}
	t.Description += " The user's own agents (named in agent) do what their descriptions say, with the tools they are given."
	return t
}

// ExploreTools are the tools an explore child has (those its parent has of them).
var ExploreTools = []string{tools.NameRead, tools.NameGrep, tools.NameFind, tools.NameLs, tools.NameBash, tools.NameDiagnostics}

// ExploreBash returns bash as an explore subagent has it: in a read-only sandbox, with no
// way out of it, so its schema has no unsandboxed and no justification, and its description
// does not offer them.
func ExploreBash(t toolexec.Tool) toolexec.Tool {
	var sch map[string]any
	if json.Unmarshal(t.Parameters, &sch) == nil {
		if props, ok := sch["properties"].(map[string]any); ok {
			delete(props, "unsandboxed")
			delete(props, "justification")
			if raw, err := json.Marshal(sch); err == nil {
				t.Parameters = raw
			}
		}
	}
	if i := strings.Index(t.Description, " Unless the user turned the sandbox off"); i >= 0 {
		t.Description = t.Description[:i] + " It runs in a read-only sandbox: it can change no file of the workspace."
	}
	return t
}

// Args are task's arguments.
type Args struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
}

// Details are the details of a task result.
type Details struct {
	ChildSessionID string    `json:"childSessionId"`
	Turns          int       `json:"turns"`
	ToolCalls      int       `json:"toolCalls"`
	Usage          llm.Usage `json:"usage"`
	StopReason     string    `json:"stopReason"`
	// Worktree is what became of the child's worktree (nil when it had none).
	Worktree *worktree.Result `json:"worktree,omitempty"`
}

// Failure is an error result's text written for the model: whole sentences.
type Failure string

func (f Failure) Error() string { return string(f) }

// This file tests the task tool's parts: its spec with the person's agents, explore's bash
// made from the real bash tool, the cap per message, the settings' layering, and what a
// child's run is counted and summed up as.

package task

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// params decodes a tool's parameters.
func params(t *testing.T, tl toolexec.Tool) map[string]any {
	t.Helper()
	var sch map[string]any
	if err := json.Unmarshal(tl.Parameters, &sch); err != nil {
		t.Fatalf("%s's parameters: %v", tl.Name, err)
	}
	return sch
}

// The spec offers explore and general; with agents, their names join the enum and their
// descriptions the agent's; the view names the task.
func TestSpecWithAgents(t *testing.T) {
	spec := Spec()
	if spec.Name != Name || spec.Execute != nil {
		t.Fatalf("spec %+v", spec)
	}
	if v := spec.View(json.RawMessage(`{"description":"find the parser"}`), nil); v.Title != "Subagent: find the parser" {
		t.Errorf("view title %q", v.Title)
	}
	got := WithAgents(spec, []agents.Agent{{Name: "reviewer", Description: "Reviews a diff.\nThoroughly."}})
	agent := params(t, got)["properties"].(map[string]any)["agent"].(map[string]any)
	enum := fmt.Sprint(agent["enum"])
	if enum != "[explore general reviewer]" || !strings.Contains(agent["description"].(string), "\nreviewer: Reviews a diff.") {
		t.Errorf("agent enum %s, description %q", enum, agent["description"])
	}
	if !strings.Contains(got.Description, "The user's own agents") || strings.Contains(spec.Description, "The user's own agents") {
		t.Error("the description does not name the agents, or Spec's was changed")
	}
}

// Explore's bash, made from the real bash tool, offers no way out of the sandbox.
func TestExploreBash(t *testing.T) {
	dir := t.TempDir()
	ws, err := tools.NewWorkspace(dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var bash toolexec.Tool
	for _, tl := range tools.New(ws) {
		if tl.Name == tools.NameBash {
			bash = tl
		}
	}
	if _, ok := params(t, bash)["properties"].(map[string]any)["unsandboxed"]; !ok {
		t.Fatal("the real bash has no unsandboxed: the test no longer checks anything")
	}
	got := ExploreBash(bash)
	props := params(t, got)["properties"].(map[string]any)
	if _, ok := props["unsandboxed"]; ok {
		t.Error("explore's bash still has unsandboxed")
	}
	if _, ok := props["justification"]; ok {
		t.Error("explore's bash still has justification")
	}
	if _, ok := props["command"]; !ok {
		t.Error("explore's bash lost its command")
	}
	if !strings.HasSuffix(got.Description, "It runs in a read-only sandbox: it can change no file of the workspace.") || strings.Contains(got.Description, "Unless the user turned the sandbox off") {
		t.Errorf("explore's bash description: %q", got.Description)
	}
}

// The first MaxCalls task calls of a message run; the next are refused with their number.
func TestOverCap(t *testing.T) {
	m := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.NewToolCall("r", tools.NameRead, json.RawMessage(`{}`))}}
	for i := 1; i <= MaxCalls+2; i++ {
		m.Content = append(m.Content, llm.NewToolCall(fmt.Sprintf("t%d", i), Name, json.RawMessage(`{}`)))
	}
	if b := OverCap(m, fmt.Sprintf("t%d", MaxCalls)); b != nil {
		t.Errorf("call %d refused: %s", MaxCalls, b.Reason)
	}
	b := OverCap(m, fmt.Sprintf("t%d", MaxCalls+1))
	if b == nil || !strings.Contains(b.Reason, fmt.Sprintf("your message has %d (this is number %d)", MaxCalls+2, MaxCalls+1)) {
		t.Errorf("call %d: %+v", MaxCalls+1, b)
	}
}

// The editor's settings override the keys they set, and only those.
func TestSettingsOver(t *testing.T) {
	got := Settings{MaxConcurrent: 2, MaxTurns: 10, Isolation: "auto"}.Over(Settings{MaxTurns: 3, Isolation: "none"})
	if got != (Settings{MaxConcurrent: 2, MaxTurns: 3, Isolation: "none"}) {
		t.Errorf("Over = %+v", got)
	}
}

// Every isolation value passes, and the empty one; another is named with the values.
func TestSettingsCheck(t *testing.T) {
	for _, iso := range []string{"", IsolationAuto, IsolationWorktree, IsolationNone} {
		if err := (Settings{Isolation: iso}).Check(); err != nil {
			t.Errorf("%q: %v", iso, err)
		}
	}
	err := Settings{Isolation: "always"}.Check()
	if err == nil || err.Error() != `subagents.isolation must be "auto", "worktree" or "none", not "always"` {
		t.Errorf("always: %v", err)
	}
}

// Progress counts turns, calls and usage, shows steps, keeps the last answer, and stops
// the child at its turn limit only when the turn asked for tools.
func TestProgress(t *testing.T) {
	p := &Progress{MaxTurns: 2}
	steps := []string{}
	observe := func(ev event.Event) bool {
		step, stop := p.Observe(ev)
		if step != "" {
			steps = append(steps, step)
		}
		return stop
	}
	answer := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("  found it in parse.go  ")}, Usage: &llm.Usage{Input: 10, Output: 2, Total: 12}}
	observe(event.ToolStart{ToolName: "read", Args: json.RawMessage(`{"path":"parse.go"}`)})
	observe(event.ToolEnd{ToolName: "read", Result: event.Result{Content: []llm.Content{llm.Text("package x")}}})
	observe(event.MessageEnd{Message: answer})
	observe(event.MessageEnd{Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text("not counted")}}})
	if observe(event.TurnEnd{}) {
		t.Fatal("stopped after the first turn")
	}
	observe(event.MessageEnd{Message: answer})
	if !observe(event.TurnEnd{ToolResults: []llm.Message{{Role: llm.RoleToolResult}}}) || !p.Limited {
		t.Fatal("the turn at the limit that asked for tools did not stop the child")
	}
	d := p.Details
	if d.Turns != 2 || d.ToolCalls != 1 || d.Usage != (llm.Usage{Input: 20, Output: 4, Total: 24}) || p.Last != "found it in parse.go" {
		t.Errorf("details %+v, last %q", d, p.Last)
	}
	if len(steps) != 4 || !strings.HasPrefix(steps[0], "read ") || !strings.HasPrefix(steps[1], "read -> ") || steps[2] != "says: found it in parse.go" {
		t.Errorf("steps %q", steps)
	}
	if s := Summary("c1", d, "", "merged: ok"); s != "The subagent (session c1) took 2 turns and 1 tool calls and gave no answer.\n\nmerged: ok" {
		t.Errorf("Summary = %q", s)
	}
	if s := Summary("c1", d, "last", ""); s != "The subagent (session c1) took 2 turns and 1 tool calls; its last answer:\n\nlast" {
		t.Errorf("Summary = %q", s)
	}
}

// Package session is the layer both of pid's faces stand on (the editor protocol in rpc and
// the Agent Client Protocol in acp): what a session is made of (its model, tools, workspace,
// permissions, hooks) and what all sessions of one connection share (the settings files,
// the remembered answers, the audit log). A face adapts it to its wire through Face.
//
// The entry point is Host: NewHost, then Host.SetUp with the editor's workspace folders,
// then Host.New for each session.
//
// This file declares a session's settings.
package session

import (
	"encoding/json"

	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/scripted"
)

// Config is a session's options. A face merges its sources with Merge: the editor's
// defaults (initializationOptions), then the session's own.
type Config struct {
	Cwd           string          `json:"cwd,omitempty"`
	Model         *ModelConfig    `json:"model,omitempty"`
	ToolExecution string          `json:"toolExecution,omitempty"`
	Permissions   json.RawMessage `json:"permissions,omitempty"`
	ScriptedTools []ScriptedTool  `json:"scriptedTools,omitempty"`
	// SystemPrompt replaces pid's own system prompt (session/sysprompt.go) when set;
	// AppendSystemPrompt is added after whichever prompt the session has.
	SystemPrompt       string `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	// MCPServers are the session's own MCP servers, in the shape of the settings files'
	// "mcpServers" (see mcp.ParseServers); they come on top of the settings' servers.
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
	// Sandbox is the editor's "sandbox" settings (see sandbox.Settings): session/new's keys
	// over initializationOptions' (mergeSandbox). The settings files' come below it
	// (sandbox.go).
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
	// Mode is the mode a new session starts in (mode.go); "" is "default".
	Mode string `json:"mode,omitempty"`
	// Hooks are the session's own hooks, in the settings files' "hooks" shape (package
	// hooks); they run after the user's and the trusted workspace's (hooks.go).
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// LSP are the session's own language servers, in the settings files' "lsp" shape
	// (package lsp), over the user's and a trusted workspace's (diagnostics.go).
	LSP json.RawMessage `json:"lsp,omitempty"`
	// Diagnostics are the "diagnostics" settings (diagnostics.go); nil: the defaults.
	Diagnostics *DiagnosticsSettings `json:"diagnostics,omitempty"`
	// Subagents bounds the task tool's children (subagent.go): the editor's, over the
	// settings files' (Host.subagentSettings).
	Subagents SubagentSettings `json:"subagents,omitzero"`
}

// Merge returns c with every field that over sets replaced by over's.
func (c Config) Merge(over Config) Config {
	if over.Cwd != "" {
		c.Cwd = over.Cwd
	}
	if over.Model != nil {
		c.Model = over.Model
	}
	if over.ToolExecution != "" {
		c.ToolExecution = over.ToolExecution
	}
	if len(over.Permissions) > 0 && string(over.Permissions) != "null" {
		c.Permissions = over.Permissions
	}
	if over.ScriptedTools != nil {
		c.ScriptedTools = over.ScriptedTools
	}
	if over.SystemPrompt != "" {
		c.SystemPrompt = over.SystemPrompt
	}
	if over.AppendSystemPrompt != "" {
		c.AppendSystemPrompt = over.AppendSystemPrompt
	}
	if len(over.MCPServers) > 0 && string(over.MCPServers) != "null" {
		c.MCPServers = over.MCPServers
	}
	if over.Mode != "" {
		c.Mode = over.Mode
	}
	if len(over.Hooks) > 0 && string(over.Hooks) != "null" {
		c.Hooks = over.Hooks
	}
	if len(over.LSP) > 0 && string(over.LSP) != "null" {
		c.LSP = over.LSP
	}
	if over.Diagnostics != nil {
		c.Diagnostics = over.Diagnostics
	}
	c.Subagents = c.Subagents.Over(over.Subagents)
	if len(over.Sandbox) > 0 && string(over.Sandbox) != "null" {
		c.Sandbox = mergeSandbox(c.Sandbox, over.Sandbox)
	}
	return c
}

// ModelConfig selects a session's model: "openai" (any OpenAI-compatible server),
// "anthropic", or "script" (turns given in advance, for tests and headless runs). See
// provider.Model.
type ModelConfig = provider.Model

// ScriptedTool is a tool whose behaviour is a list of steps, for headless tests (see package
// scripted); ScriptStep is one of its steps, ScriptedValue a result it returns.
type (
	ScriptedTool  = scripted.Tool
	ScriptStep    = scripted.Step
	ScriptedValue = scripted.Value
)

// ToolInfo is what a face tells its client about a tool.
type ToolInfo struct {
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Parameters    json.RawMessage `json:"parameters"`
	ExecutionMode string          `json:"executionMode"`
	// Source is "builtin", "session" (scripted tools) or "mcp:SERVER".
	Source string `json:"source"`
	// Active reports whether the model is offered the tool now; a deferred MCP tool is
	// listed inactive until tool_search loads it.
	Active bool `json:"active"`
	// Unavailable, when set, says why an active tool cannot be called now (its MCP server is
	// starting, failed or no longer offers it).
	Unavailable string `json:"unavailable,omitempty"`
}

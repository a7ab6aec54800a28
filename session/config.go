// Package session is the layer both of pid's faces stand on (the editor protocol in rpc and
// the Agent Client Protocol in acp): what a session is made of (its model, tools, workspace,
// permissions, hooks) and what all sessions of one connection share (the settings files,
// the remembered answers, the audit log). A face adapts it to its wire through Face.
//
// The entry point is Host: NewHost, then Host.SetUp with the editor's workspace folders,
// then Host.New for each session.
//
// This file declares the names of a session's settings (package sessionconfig holds them)
// and of what a face tells its client about a tool.
package session

import (
	"encoding/json"

	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/scripted"
	"github.com/pid-agent/pid/sessionconfig"
)

// Config is a session's options (sessionconfig.Config). A face merges its sources with
// Merge: the editor's defaults (initializationOptions), then the session's own.
type Config = sessionconfig.Config

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

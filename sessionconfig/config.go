// Package sessionconfig holds a session's options as the faces give them (Config): how a
// face merges its sources (Merge: the editor's defaults, then the session's own), what of
// them is checked before a session is built (Check), and what of them a session's file
// keeps to re-create it (Config.Header, FromHeader). Its entry point is Config. It reads no
// file and knows no session: package session builds a session of a Config.
package sessionconfig

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pid-agent/pid/diagnostics"
	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/scripted"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
)

// Config is a session's options. A face merges its sources with Merge: the editor's
// defaults (initializationOptions), then the session's own.
type Config struct {
	Cwd           string          `json:"cwd,omitempty"`
	Model         *provider.Model `json:"model,omitempty"`
	ToolExecution string          `json:"toolExecution,omitempty"`
	Permissions   json.RawMessage `json:"permissions,omitempty"`
	ScriptedTools []scripted.Tool `json:"scriptedTools,omitempty"`
	// SystemPrompt replaces pid's own system prompt (package prompt) when set;
	// AppendSystemPrompt is added after whichever prompt the session has.
	SystemPrompt       string `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	// MCPServers are the session's own MCP servers, in the shape of the settings files'
	// "mcpServers" (see mcp.ParseServers); they come on top of the settings' servers.
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
	// Sandbox is the editor's "sandbox" settings (see sandbox.Settings): session/new's keys
	// over initializationOptions' (Merge). The settings files' come below it (the session's
	// sandbox.go).
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
	// Mode is the mode a new session starts in (the session's mode.go); "" is "default".
	Mode string `json:"mode,omitempty"`
	// Hooks are the session's own hooks, in the settings files' "hooks" shape (package
	// hooks); they run after the user's and the trusted workspace's (the session's hooks.go).
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// LSP are the session's own language servers, in the settings files' "lsp" shape
	// (package lsp), over the user's and a trusted workspace's (the session's diagnostics.go).
	LSP json.RawMessage `json:"lsp,omitempty"`
	// Diagnostics are the "diagnostics" settings (package diagnostics); nil: the defaults.
	Diagnostics *diagnostics.Settings `json:"diagnostics,omitempty"`
	// Subagents bounds the task tool's children (package task): the editor's, over the
	// settings files' (the session's subagent.go).
	Subagents task.Settings `json:"subagents,omitzero"`
}

// Merge returns c with every field that over sets replaced by over's; the "sandbox" settings
// are merged key by key (sandbox.Settings.Over).
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
	if set(over.Permissions) {
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
	if set(over.MCPServers) {
		c.MCPServers = over.MCPServers
	}
	if over.Mode != "" {
		c.Mode = over.Mode
	}
	if set(over.Hooks) {
		c.Hooks = over.Hooks
	}
	if set(over.LSP) {
		c.LSP = over.LSP
	}
	if over.Diagnostics != nil {
		c.Diagnostics = over.Diagnostics
	}
	c.Subagents = c.Subagents.Over(over.Subagents)
	if set(over.Sandbox) {
		c.Sandbox = mergeSandbox(c.Sandbox, over.Sandbox)
	}
	return c
}

// Check reports what of c can be checked alone (its toolExecution, its subagents' isolation,
// its permission rules), and returns its permission rules.
func (c Config) Check() (*permissions.Spec, error) {
	switch c.ToolExecution {
	case "", string(toolexec.Parallel), string(toolexec.Sequential):
	default:
		return nil, fmt.Errorf("toolExecution must be %q or %q, not %q", toolexec.Parallel, toolexec.Sequential, c.ToolExecution)
	}
	if err := c.Subagents.Check(); err != nil {
		return nil, err
	}
	return permissions.ParseSpec(c.Permissions)
}

// set reports whether raw holds a value: neither absent nor null.
func set(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// mergeSandbox returns the "sandbox" settings over sets on top of base's, key by key
// (sandbox.Settings.Over). When either is malformed it returns over unchanged, for the
// session to report.
func mergeSandbox(base, over json.RawMessage) json.RawMessage {
	b, err1 := sandbox.Parse(base)
	o, err2 := sandbox.Parse(over)
	if err1 != nil || err2 != nil {
		return over
	}
	merged, err := json.Marshal(b.Over(o))
	if err != nil {
		return over
	}
	return merged
}

// Header is the header of a new session's file with id, in cwd, starting with tools: what
// re-creates it after a restart. The model config holds no key (provider.Model has none;
// apiKeyEnv names a variable only), and the MCP servers' secrets are left out.
func (c Config) Header(id, cwd string, tools []string) store.Header {
	h := store.Header{ID: id, Cwd: cwd, CreatedAt: time.Now().UTC(), ToolExecution: c.ToolExecution,
		Permissions: c.Permissions, SystemPrompt: c.SystemPrompt, AppendSystemPrompt: c.AppendSystemPrompt, Tools: append([]string{}, tools...)}
	if c.Model != nil {
		h.Model, _ = json.Marshal(c.Model)
	}
	if c.ScriptedTools != nil {
		h.ScriptedTools, _ = json.Marshal(c.ScriptedTools)
	}
	h.MCPServers = mcp.WithoutSecrets(c.MCPServers)
	if set(c.Hooks) {
		h.Hooks = c.Hooks
	}
	return h
}

// FromHeader is the Config a saved header describes; an error names the member that cannot
// be read.
func FromHeader(h store.Header) (Config, error) {
	cfg := Config{Cwd: h.Cwd, ToolExecution: h.ToolExecution, Permissions: h.Permissions, SystemPrompt: h.SystemPrompt,
		AppendSystemPrompt: h.AppendSystemPrompt, MCPServers: h.MCPServers, Hooks: h.Hooks}
	if set(h.Model) {
		cfg.Model = &provider.Model{}
		if err := json.Unmarshal(h.Model, cfg.Model); err != nil {
			return Config{}, fmt.Errorf("its model: %v", err)
		}
	}
	if set(h.ScriptedTools) {
		if err := json.Unmarshal(h.ScriptedTools, &cfg.ScriptedTools); err != nil {
			return Config{}, fmt.Errorf("its scriptedTools: %v", err)
		}
	}
	return cfg, nil
}

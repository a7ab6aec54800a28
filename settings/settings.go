// Package settings reads pid's settings files: the user's (~/.config/pid/settings.json) and
// each workspace root's (.pid/settings.json). It finds them, reads them safely (through
// safefile: no FIFO wait, a size cap), validates them, watches their folders and reloads
// them when they change, and merges the user's with a workspace's, trust-gated: a folder
// the user does not trust may only narrow what pid does. docs/permissions.md describes the
// files for users.
//
// The entry point is NewLoader. A Loader hands out, for a folder, the effective permission
// Policy (the policy itself is package permissions: settings builds it from the rules it
// loaded, and permissions knows nothing of files), the model and the models to pick from,
// the MCP servers, the sandbox settings and the redaction patterns, all without blocking.
// Parse reads one file's content into a File.
//
// This file reads one settings file: its "permissions" object, its "redact" patterns (the
// afterToolCall redaction rule's extension list, kept here because it lives in the same files
// and reloads with them), its "sandbox" object (sandbox.go), and the keys that widen or
// redirect what pid does (model, models, mcpServers, trustedFolders), which a workspace's
// file may only set once the folder is trusted. Other keys are ignored, for later settings.
package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pid-agent/pid/hooks"
	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/permissions"
)

// File is what pid reads from one settings file.
type File struct {
	// Permissions is the file's "permissions" object; nil when absent.
	Permissions *permissions.Spec
	// Redact holds the compiled "redact.patterns" regular expressions (Go syntax).
	Redact []*regexp.Regexp
	// Model, Models and MCPServers are the raw "model", "models" and "mcpServers" values
	// (nil when absent); the session layer decodes them.
	Model      json.RawMessage
	Models     json.RawMessage
	MCPServers json.RawMessage
	// TrustedFolders is "trustedFolders": folders whose own settings are trusted. Only the
	// user's file may say so.
	TrustedFolders []string
	// Sandbox is the raw "sandbox" value, checked (nil when absent; see sandbox.go).
	Sandbox json.RawMessage
	// AllowBypassPermissions is "allowBypassPermissions": whether the session mode
	// bypassPermissions is offered. Only the user's file may say so.
	AllowBypassPermissions bool
	// Checkpoints is "checkpoints" (checkpoints.go). Only the user's file counts.
	Checkpoints Checkpoints
	// ACP is "acp" (acp.go). Only the user's file counts.
	ACP ACP
	// Hooks is the raw "hooks" value, checked (nil when absent; package hooks reads it). A
	// workspace's counts only once the folder is trusted: hooks start processes.
	Hooks json.RawMessage
	// LSP is the raw "lsp" value (the language servers pid may start; package lsp reads
	// it). A workspace's counts only once the folder is trusted: servers are processes.
	LSP json.RawMessage
	// Subagents is the raw "subagents" value, checked: {"maxConcurrent"?, "maxTurns"?},
	// positive integers (nil when absent; package session reads it). A workspace's counts
	// only once the folder is trusted: it sets how many model calls run at once.
	Subagents json.RawMessage
}

// widenKeys are the top-level keys that widen what pid does or redirect it (where requests
// and keys go, which processes start), in the order Widening lists them.
var widenKeys = []string{"model", "models", "mcpServers", "trustedFolders", "hooks", "lsp", "subagents"}

// Widening lists, for a person to read, what in these settings would widen or redirect what
// pid does: each widening top-level key (model, models, mcpServers, trustedFolders) and each
// allow of the permissions (see permissions.Spec.Widening). An untrusted workspace's file has all of
// these ignored. Pure.
func (s *File) Widening() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, k := range widenKeys {
		if s.raw(k) != nil {
			out = append(out, k)
		}
	}
	if s.Permissions != nil {
		out = append(out, s.Permissions.Widening()...)
	}
	return out
}

// raw returns a widening key's value, or nil when the file does not set it.
func (s *File) raw(key string) []byte {
	switch key {
	case "model":
		return s.Model
	case "models":
		return s.Models
	case "mcpServers":
		return s.MCPServers
	case "trustedFolders":
		if s.TrustedFolders != nil {
			return []byte("[]")
		}
	case "hooks":
		return s.Hooks
	case "lsp":
		return s.LSP
	case "subagents":
		return s.Subagents
	}
	return nil
}

// Parse reads a settings file's content: `{"permissions"?: {...}, "redact"?:
// {"patterns": ["regexp", ...]}, ...}`. Unknown top-level keys are ignored; an empty file
// (only white space) is the empty File. Errors name the field.
//
// Contract: called by the Loader for each changed file. Pure: safe for concurrent use; on
// error it returns a nil File.
func Parse(data []byte) (*File, error) {
	s := &File{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return s, nil
	}
	var top map[string]json.RawMessage
	var err error
	if err = json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if raw, ok := top["permissions"]; ok && string(raw) != "null" {
		spec, err := permissions.ParseSpec(raw)
		if err != nil {
			return nil, err
		}
		s.Permissions = spec
	}
	for key, dst := range map[string]*json.RawMessage{"model": &s.Model, "models": &s.Models, "mcpServers": &s.MCPServers, "lsp": &s.LSP} {
		if raw, ok := top[key]; ok && string(raw) != "null" {
			*dst = raw
		}
	}
	if raw, ok := top["trustedFolders"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &s.TrustedFolders); err != nil {
			return nil, fmt.Errorf("trustedFolders must be a list of absolute folder paths, not %s", elide.Quote(raw))
		}
		for i, f := range s.TrustedFolders {
			if !filepath.IsAbs(f) && !strings.HasPrefix(f, "~/") {
				return nil, fmt.Errorf("trustedFolders[%d] %q must be an absolute path (or start with ~/)", i, f)
			}
		}
		if s.TrustedFolders == nil {
			s.TrustedFolders = []string{}
		}
	}
	if raw, ok := top["allowBypassPermissions"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &s.AllowBypassPermissions); err != nil {
			return nil, fmt.Errorf("allowBypassPermissions must be true or false, not %s", elide.Quote(raw))
		}
	}
	if s.Checkpoints, err = parseCheckpoints(top); err != nil {
		return nil, err
	}
	if s.ACP, err = parseACP(top); err != nil {
		return nil, err
	}
	if raw, ok := top["hooks"]; ok && string(raw) != "null" {
		if _, err := hooks.Parse(raw, ""); err != nil {
			return nil, err
		}
		s.Hooks = raw
	}
	if raw, ok := top["subagents"]; ok && string(raw) != "null" {
		var sub struct {
			MaxConcurrent *int `json:"maxConcurrent"`
			MaxTurns      *int `json:"maxTurns"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sub); err != nil {
			return nil, fmt.Errorf(`subagents must be an object {"maxConcurrent"?: N, "maxTurns"?: N}, not %s`, elide.Quote(raw))
		}
		for name, v := range map[string]*int{"maxConcurrent": sub.MaxConcurrent, "maxTurns": sub.MaxTurns} {
			if v != nil && *v <= 0 {
				return nil, fmt.Errorf("subagents.%s must be a positive number, not %d", name, *v)
			}
		}
		s.Subagents = raw
	}
	sb, err := parseSandbox(top)
	if err != nil {
		return nil, err
	}
	s.Sandbox = sb
	if raw, ok := top["redact"]; ok && string(raw) != "null" {
		var r struct {
			Patterns []json.RawMessage `json:"patterns"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("redact must be an object {\"patterns\": [\"regexp\", ...]}")
		}
		for i, p := range r.Patterns {
			var src string
			if err := json.Unmarshal(p, &src); err != nil || src == "" {
				return nil, fmt.Errorf("redact.patterns[%d] must be a non-empty string, not %s", i, elide.Quote(p))
			}
			re, err := regexp.Compile(src)
			if err != nil {
				return nil, fmt.Errorf("redact.patterns[%d]: %v", i, err)
			}
			if re.MatchString("") {
				return nil, fmt.Errorf("redact.patterns[%d] %q matches the empty string", i, src)
			}
			s.Redact = append(s.Redact, re)
		}
	}
	return s, nil
}

// UserPath returns $XDG_CONFIG_HOME/pid/settings.json, or
// ~/.config/pid/settings.json when XDG_CONFIG_HOME is unset or not absolute. It reads the
// environment only; it fails when neither XDG_CONFIG_HOME nor the home folder is known.
func UserPath() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pid", "settings.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("settings: no config folder: %w", err)
	}
	return filepath.Join(home, ".config", "pid", "settings.json"), nil
}

// WorkspacePath returns a workspace root's settings file, ROOT/.pid/settings.json.
// Pure.
func WorkspacePath(root string) string {
	return filepath.Join(root, ".pid", "settings.json")
}

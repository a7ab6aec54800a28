// This file reads the settings' "lsp" object: the language servers pid may start.

package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ServerConfig is one language server of the settings' "lsp" object.
type ServerConfig struct {
	// Command is the program and its arguments ("gopls", or ["typescript-language-server",
	// "--stdio"]); it runs in the workspace folder.
	Command []string `json:"command"`
	// Extensions are the file name endings the server is for (".go").
	Extensions []string `json:"extensions"`
	// InitializationOptions go in initialize's params as they are.
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty"`
	// Env is added to pid's environment for the server.
	Env map[string]string `json:"env,omitempty"`
}

// Parse reads an "lsp" object: {"NAME": {"command": [...], "extensions": [...],
// "initializationOptions"?: {}, "env"?: {}}}. A server set to null is left out (a later
// layer may remove one this way). Errors name the server and the field.
func Parse(raw json.RawMessage) (map[string]*ServerConfig, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("lsp must be an object of language servers by name: %v", err)
	}
	out := map[string]*ServerConfig{}
	for name, v := range top {
		if string(bytes.TrimSpace(v)) == "null" {
			out[name] = nil
			continue
		}
		var c ServerConfig
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("lsp[%q]: %v", name, err)
		}
		if len(c.Command) == 0 || c.Command[0] == "" {
			return nil, fmt.Errorf("lsp[%q].command must name the program to run", name)
		}
		if len(c.Extensions) == 0 {
			return nil, fmt.Errorf("lsp[%q].extensions must list the file endings the server is for (\".go\")", name)
		}
		for i, e := range c.Extensions {
			if !strings.HasPrefix(e, ".") {
				return nil, fmt.Errorf("lsp[%q].extensions[%d] %q must start with a dot", name, i, e)
			}
		}
		out[name] = &c
	}
	return out, nil
}

// Merge returns the servers of the layers, later ones replacing earlier ones by name (a nil
// entry removes the server).
func Merge(layers ...map[string]*ServerConfig) map[string]*ServerConfig {
	out := map[string]*ServerConfig{}
	for _, l := range layers {
		for name, c := range l {
			if c == nil {
				delete(out, name)
			} else {
				out[name] = c
			}
		}
	}
	return out
}

// serves reports whether the server is for the file path.
func (c *ServerConfig) serves(path string) bool {
	base := filepath.Base(path)
	return slices.ContainsFunc(c.Extensions, func(e string) bool { return strings.HasSuffix(base, e) })
}

// key identifies a server's configuration: two sessions naming one server differently
// get two processes.
func (c *ServerConfig) key() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// languageID guesses LSP's languageId from a file's extension.
func languageID(path string) string {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	switch ext {
	case "go":
		return "go"
	case "ts", "mts", "cts":
		return "typescript"
	case "tsx":
		return "typescriptreact"
	case "js", "mjs", "cjs":
		return "javascript"
	case "jsx":
		return "javascriptreact"
	case "py":
		return "python"
	case "rs":
		return "rust"
	case "c", "h":
		return "c"
	case "cc", "cpp", "cxx", "hpp":
		return "cpp"
	case "md":
		return "markdown"
	case "yml":
		return "yaml"
	case "":
		return "plaintext"
	}
	return ext
}

// This file reads the "mcpServers" configuration (Claude Code's .mcp.json shape) into
// ServerConfig values, and expands the ${VAR} references in them when a server starts.

package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
)

// Load values of ServerConfig.Load.
const (
	LoadDeferred = "deferred" // the default: tools are found through tool_search
	LoadEager    = "eager"    // tools are active from the start
)

// ServerConfig is one entry of "mcpServers": a stdio server (Command) or a streamable
// HTTP server (URL), never both.
//
// Strings in Command, Args, Env, URL and Headers may hold ${VAR} or ${VAR:-default},
// expanded from pid's environment when the server starts (not when it is parsed), so a
// secret can stay in the environment instead of the settings file.
type ServerConfig struct {
	// Command, Args, Env and Cwd describe a stdio server. The process inherits pid's
	// environment, with Env on top. An empty Cwd means pid's working folder: the session
	// layer should set it (a relative Cwd is relative to pid's working folder).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// URL and Headers describe a streamable HTTP server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Load is LoadDeferred (the default, also for "") or LoadEager. It does not change
	// how the server runs, only how the session offers its tools.
	Load string `json:"load,omitempty"`
	// Sampling lets the server ask for sampling/createMessage (declined otherwise).
	Sampling bool `json:"sampling,omitempty"`
}

// IsHTTP reports whether the server is reached over streamable HTTP (URL is set).
func (c ServerConfig) IsHTTP() bool { return c.URL != "" }

// Key returns the identity of the configuration for sharing a server between sessions:
// two entries with the same name and the same Key share one process. Load is left out
// (it changes how a session offers the tools, not the server).
func (c ServerConfig) Key() string {
	c.Load = ""
	b, _ := json.Marshal(c) // map keys are sorted: equal configurations give equal keys
	return string(b)
}

// ParseServers reads the value of "mcpServers": an object of NAME: {command, args?, env?,
// cwd?} or NAME: {url, headers?}, each with optional "type" ("stdio", or "http" /
// "streamable-http" for a URL), "load" ("deferred" or "eager") and "sampling" (bool).
// null or an empty input gives an empty map.
//
// Contract: pure; safe for concurrent use. The error names the first bad field in the
// order of the sorted server names (mcpServers.NAME.FIELD) and says what it must be.
func ParseServers(raw json.RawMessage) (map[string]ServerConfig, error) {
	raw = bytes.TrimSpace(raw)
	out := map[string]ServerConfig{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf(`mcpServers: must be an object of NAME: {"command": ...} or NAME: {"url": ...} (%v)`, err)
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		cfg, err := parseServer(name, entries[name])
		if err != nil {
			return nil, err
		}
		out[name] = cfg
	}
	return out, nil
}

// stdioFields and httpFields are the fields of each kind of server.
var (
	stdioFields = []string{"command", "args", "env", "cwd"}
	httpFields  = []string{"url", "headers"}
	allFields   = []string{"type", "command", "args", "env", "cwd", "url", "headers", "load", "sampling"}
)

func parseServer(name string, raw json.RawMessage) (ServerConfig, error) {
	var cfg ServerConfig
	where := "mcpServers." + name
	if strings.TrimSpace(name) == "" {
		return cfg, fmt.Errorf("mcpServers: a server has an empty name; give it a name made of letters, digits, '-' or '_'")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return cfg, fmt.Errorf(`%s: must be an object, {"command": ...} for a stdio server or {"url": ...} for an HTTP one`, where)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(allFields, k) {
			return cfg, fmt.Errorf("%s.%s: unknown field; the fields are %s", where, k, strings.Join(allFields, ", "))
		}
	}
	str := func(k string, dst *string) error {
		v, ok := fields[k]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s.%s: must be a string", where, k)
		}
		return nil
	}
	strMap := func(k string, dst *map[string]string) error {
		v, ok := fields[k]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s.%s: must be an object of string values", where, k)
		}
		return nil
	}
	var typ string
	if err := str("type", &typ); err != nil {
		return cfg, err
	}
	for _, f := range []struct {
		k   string
		dst *string
	}{{"command", &cfg.Command}, {"cwd", &cfg.Cwd}, {"url", &cfg.URL}, {"load", &cfg.Load}} {
		if err := str(f.k, f.dst); err != nil {
			return cfg, err
		}
	}
	if v, ok := fields["args"]; ok {
		if err := json.Unmarshal(v, &cfg.Args); err != nil {
			return cfg, fmt.Errorf("%s.args: must be an array of strings", where)
		}
	}
	if err := strMap("env", &cfg.Env); err != nil {
		return cfg, err
	}
	if err := strMap("headers", &cfg.Headers); err != nil {
		return cfg, err
	}
	if v, ok := fields["sampling"]; ok {
		if err := json.Unmarshal(v, &cfg.Sampling); err != nil {
			return cfg, fmt.Errorf("%s.sampling: must be true or false", where)
		}
	}

	_, hasCommand := fields["command"]
	_, hasURL := fields["url"]
	switch {
	case hasCommand && hasURL:
		return cfg, fmt.Errorf("%s: has both command and url; keep command for a stdio server or url for an HTTP one", where)
	case !hasCommand && !hasURL:
		return cfg, fmt.Errorf(`%s.command: missing; give "command" (a stdio server) or "url" (a streamable HTTP server)`, where)
	}
	if hasCommand {
		if strings.TrimSpace(cfg.Command) == "" {
			return cfg, fmt.Errorf("%s.command: must be a non-empty string (the program to run)", where)
		}
		for _, k := range httpFields {
			if _, ok := fields[k]; ok {
				return cfg, fmt.Errorf("%s.%s: only for an HTTP server (url); remove it from this stdio server", where, k)
			}
		}
		if typ != "" && typ != "stdio" {
			return cfg, fmt.Errorf(`%s.type: %q does not go with command; use "stdio" or leave it out`, where, typ)
		}
	} else {
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, fmt.Errorf("%s.url: must be an http:// or https:// URL, got %q", where, cfg.URL)
		}
		for _, k := range stdioFields {
			if _, ok := fields[k]; ok {
				return cfg, fmt.Errorf("%s.%s: only for a stdio server (command); remove it from this HTTP server", where, k)
			}
		}
		switch typ {
		case "", "http", "streamable-http", "streamableHttp":
		case "sse":
			return cfg, fmt.Errorf(`%s.type: "sse" (the old HTTP+SSE transport) is not supported; pid speaks streamable HTTP ("http"), which most servers also serve`, where)
		default:
			return cfg, fmt.Errorf(`%s.type: %q does not go with url; use "http" or leave it out`, where, typ)
		}
	}
	switch cfg.Load {
	case "", LoadDeferred, LoadEager:
	default:
		return cfg, fmt.Errorf(`%s.load: must be "deferred" (the default: found through tool_search) or "eager" (active from the start), got %q`, where, cfg.Load)
	}
	return cfg, nil
}

// expand returns the configuration with ${VAR} and ${VAR:-default} replaced from lookup in
// every string but Load. A reference to an unset variable without a default is an error
// naming it; "$" not followed by "{" is kept as is.
func (c ServerConfig) expand(lookup func(string) (string, bool)) (ServerConfig, error) {
	var firstErr error
	x := func(s string) string {
		if firstErr != nil || !strings.Contains(s, "${") {
			return s
		}
		v, err := expandString(s, lookup)
		if err != nil {
			firstErr = err
		}
		return v
	}
	out := c
	out.Command = x(c.Command)
	out.Cwd = x(c.Cwd)
	out.URL = x(c.URL)
	if c.Args != nil {
		out.Args = make([]string, len(c.Args))
		for i, a := range c.Args {
			out.Args[i] = x(a)
		}
	}
	xm := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		n := make(map[string]string, len(m))
		for k, v := range m {
			n[k] = x(v)
		}
		return n
	}
	out.Env = xm(c.Env)
	out.Headers = xm(c.Headers)
	return out, firstErr
}

func expandString(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%q: an unclosed ${ (write ${NAME} or ${NAME:-default})", s)
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if v, ok := lookup(name); ok && (v != "" || !hasDef) {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			return "", fmt.Errorf("the environment variable %s is not set (referenced as ${%s}); set it in pid's environment or write ${%s:-default}", name, ref, name)
		}
		s = s[i+j+1:]
	}
}

// lookupEnv is os.LookupEnv, a variable for tests.
var lookupEnv = os.LookupEnv

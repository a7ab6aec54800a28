// This file connects the face's sessions to MCP servers: it turns ACP's mcpServers (a list
// of McpServerStdio and McpServerHttp entries) into the session layer's "mcpServers" object,
// refusing what pid cannot run with an error that names the entry, and it logs the servers'
// status (the session layer runs them).

package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/session"
)

// acpMCPServer is one entry of ACP's mcpServers, as pid reads it: stdio (no type) or
// "http"; "sse" and other types are refused. _meta and unknown members are ignored.
type acpMCPServer struct {
	Type    *string     `json:"type"`
	Name    *string     `json:"name"`
	Command *string     `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     *string     `json:"url"`
	Headers []nameValue `json:"headers"`
}

// nameValue is ACP's EnvVariable and HttpHeader.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// settingsServer is one server in the settings files' shape (see session.CheckMCPServers).
type settingsServer struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpServersConfig returns the session's own mcpServers in the session layer's shape: the
// servers of own (the settings-shaped "mcpServers" of _meta.pid, possibly empty), then the
// ACP entries. cwd is the session's folder, against which a command with a slash but no
// leading one is found (the server runs there). Every entry is checked before anything
// starts: the error, an invalid-params *rpcError, names the first bad entry by its index and
// name and says what to change. nil entries and no own give nil (no servers of its own).
//
// The servers come from the client: they run whether or not the cwd is a trusted folder, as
// the user's own settings do.
func mcpServersConfig(entries []json.RawMessage, own json.RawMessage, cwd string) (json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if o := bytes.TrimSpace(own); len(o) > 0 && string(o) != "null" {
		if err := json.Unmarshal(o, &out); err != nil || out == nil {
			return nil, fmt.Errorf(`%w: _meta.pid.mcpServers must be an object of NAME: {"command": ...} or NAME: {"url": ...}`, errInvalidParams)
		}
	}
	fromMeta := make(map[string]bool, len(out))
	for name := range out {
		fromMeta[name] = true
	}
	seen := map[string]int{} // name -> index of the entry that named it
	for i, raw := range entries {
		name, cfg, err := convertServer(i, raw, cwd)
		if err != nil {
			return nil, err
		}
		where := entryName(i, name)
		if j, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: %s: mcpServers[%d] has the same name; give every server a name of its own", errInvalidParams, where, j)
		}
		if fromMeta[name] {
			return nil, fmt.Errorf("%w: %s: _meta.pid.mcpServers has a server of the same name; keep one of the two", errInvalidParams, where)
		}
		seen[name] = i
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errInvalidParams, where, err)
		}
		out[name] = b
	}
	if len(out) == 0 {
		if len(bytes.TrimSpace(own)) > 0 {
			return own, nil
		}
		return nil, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: mcpServers: %v", errInvalidParams, err)
	}
	// The session layer parses the same object: an error here is one it would give.
	if err := session.CheckMCPServers(b); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidParams, err)
	}
	return b, nil
}

// entryName names entry i for an error: mcpServers[1] ("github").
func entryName(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("mcpServers[%d]", i)
	}
	return fmt.Sprintf("mcpServers[%d] (%q)", i, name)
}

// convertServer checks one ACP entry and returns its name and settings-shaped config.
func convertServer(i int, raw json.RawMessage, cwd string) (string, settingsServer, error) {
	var e acpMCPServer
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return "", settingsServer{}, fmt.Errorf(`%w: mcpServers[%d] must be an object: {"name", "command", "args", "env"} for a stdio server or {"type": "http", "name", "url", "headers"} for an HTTP one`, errInvalidParams, i)
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", settingsServer{}, fmt.Errorf("%w: mcpServers[%d]: %s", errInvalidParams, i, describeJSONError(err))
	}
	name := ""
	if e.Name != nil {
		name = *e.Name
	}
	where := entryName(i, name)
	bad := func(format string, args ...any) (string, settingsServer, error) {
		return "", settingsServer{}, fmt.Errorf("%w: %s: %s", errInvalidParams, where, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(name) == "" {
		return bad("a server needs a name (its tools are offered as mcp__NAME__TOOL)")
	}
	typ := ""
	if e.Type != nil {
		typ = *e.Type
	}
	switch typ {
	case "":
		return stdioServer(name, e, cwd, bad)
	case "http":
		return httpServer(name, e, bad)
	case "sse":
		return bad(`type "sse" (the old HTTP+SSE transport) is not supported: pid's mcpCapabilities.sse is false. Give the server's streamable HTTP endpoint with type "http", which most servers also serve`)
	case "stdio":
		// Not a type ACP defines, but the meaning is clear.
		return stdioServer(name, e, cwd, bad)
	}
	return bad(`type %q is not one pid knows: leave type out for a stdio server (command), or use "http" (url)`, typ)
}

type badFunc func(format string, args ...any) (string, settingsServer, error)

// stdioServer checks a stdio entry: a command pid can run, env names.
func stdioServer(name string, e acpMCPServer, cwd string, bad badFunc) (string, settingsServer, error) {
	if e.URL != nil {
		return bad(`has a url but no type "http"; a stdio server has a command instead`)
	}
	if e.Command == nil || strings.TrimSpace(*e.Command) == "" {
		return bad("a stdio server needs a command (the absolute path of the server's program)")
	}
	command := *e.Command
	// ${VAR} is expanded when the server starts (see mcp.ServerConfig): checked then.
	if !strings.Contains(command, "${") {
		if err := runnable(command, cwd); err != nil {
			return bad("%v", err)
		}
	}
	cfg := settingsServer{Command: command, Args: e.Args}
	if len(e.Env) > 0 {
		cfg.Env = make(map[string]string, len(e.Env))
		for k, v := range e.Env {
			if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") {
				return bad("env[%d]: the name %q is not a variable name", k, v.Name)
			}
			cfg.Env[v.Name] = v.Value
		}
	}
	return name, cfg, nil
}

// runnable reports why command cannot be run as a server started in cwd (nil when it can):
// a bare name must be on pid's PATH; a path must name an executable file (a relative one is
// taken from cwd, where the server runs).
func runnable(command, cwd string) error {
	path := command
	if strings.ContainsRune(command, filepath.Separator) && !filepath.IsAbs(command) {
		path = filepath.Join(cwd, command)
	}
	if _, err := exec.LookPath(path); err != nil {
		if !strings.ContainsRune(command, filepath.Separator) {
			return fmt.Errorf("command %q is not on pid's PATH; give the absolute path of the server's program", command)
		}
		return fmt.Errorf("command %q cannot be run (%v); give the absolute path of an executable file", command, unwrapExec(err))
	}
	return nil
}

// unwrapExec returns the cause of an exec.LookPath error, without the repeated name.
func unwrapExec(err error) error {
	if ee, ok := err.(*exec.Error); ok {
		return ee.Err
	}
	return err
}

// httpServer checks an http entry: an http(s) URL, header names.
func httpServer(name string, e acpMCPServer, bad badFunc) (string, settingsServer, error) {
	if e.Command != nil {
		return bad(`has type "http" and a command; an HTTP server has a url only`)
	}
	if e.URL == nil || *e.URL == "" {
		return bad(`an HTTP server needs a url (its streamable HTTP endpoint, such as https://example.com/mcp)`)
	}
	u, err := url.Parse(*e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("url %q must be an http:// or https:// URL", *e.URL)
	}
	cfg := settingsServer{Type: "http", URL: *e.URL}
	if len(e.Headers) > 0 {
		cfg.Headers = make(map[string]string, len(e.Headers))
		for k, h := range e.Headers {
			if h.Name == "" || strings.ContainsAny(h.Name, ": \t\r\n") {
				return bad("headers[%d]: the name %q is not a header name", k, h.Name)
			}
			cfg.Headers[h.Name] = h.Value
		}
	}
	return name, cfg, nil
}

// mcpStatus logs a server's status changes (failures as warnings), once the sessions that
// use it have heard (session.HostOptions.MCPStatus), and tells mcpSeen.
//
// Contract: as session.HostOptions.MCPStatus: any goroutine; takes only mmu, so it never
// waits for a write to the client.
func (s *server) mcpStatus(st session.ServerInfo) {
	s.mmu.Lock()
	seen := s.mcpSeen
	s.mmu.Unlock()
	switch st.Status {
	case "failed":
		s.log.Warn("an MCP server failed", "server", st.Name, "err", st.Error)
	default:
		s.log.Debug("MCP server status", "server", st.Name, "status", st.Status, "tools", st.Tools)
	}
	if seen != nil {
		seen(st)
	}
}

// tell shows title to the person as a notice of the session's running turn, when the
// client declared session.notices (nothing otherwise, and nothing between turns).
func (s *server) tell(st *sessionState, severity, title string) {
	s.mu.Lock()
	notices := s.caps.Notices
	s.mu.Unlock()
	if !notices || title == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cur != nil {
		st.update(notice{SessionUpdate: "notice", Severity: severity, Title: title})
	}
}

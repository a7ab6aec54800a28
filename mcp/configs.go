// This file works out a session's MCP servers from what names them: the user's settings,
// the workspace folder's (only once it is trusted), the session's own; and what of them a
// session's file keeps.

package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Configs returns the servers a session in cwd names: the user settings' (user), its
// workspace folder's (workspace) only when that folder is trusted, else their names as
// untrusted (listed, never run), then its own (own), later ones replacing earlier ones of
// the same name; a stdio server without a cwd of its own runs in cwd. settingsErrs are the
// settings files' errors (their servers are left out), err the session's own (nothing runs
// then). A name the untrusted workspace shares with the user's settings or the session's own
// servers is theirs: that one runs, and the name is not listed as untrusted. Pure.
func Configs(cwd string, user, workspace json.RawMessage, trusted bool, own json.RawMessage) (servers map[string]ServerConfig, untrusted []string, settingsErrs []error, err error) {
	servers = map[string]ServerConfig{}
	add := func(raw json.RawMessage, where string) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		parsed, err := ParseServers(raw)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		for name, c := range parsed {
			if c.Cwd == "" && !c.IsHTTP() {
				c.Cwd = cwd
			}
			servers[name] = c
		}
		return nil
	}
	if err := add(user, "user settings"); err != nil {
		settingsErrs = append(settingsErrs, err)
	}
	if trusted {
		if err := add(workspace, "workspace settings"); err != nil {
			settingsErrs = append(settingsErrs, err)
		}
	} else if parsed, err := ParseServers(workspace); err == nil {
		for name := range parsed {
			untrusted = append(untrusted, name)
		}
		sort.Strings(untrusted)
	}
	if err := add(own, "mcpServers"); err != nil {
		return nil, nil, settingsErrs, err
	}
	untrusted = slices.DeleteFunc(untrusted, func(n string) bool { _, ok := servers[n]; return ok })
	return servers, untrusted, settingsErrs, nil
}

// WithoutSecrets returns an "mcpServers" object as a session's file keeps it: without the
// literal values of env and headers, which are where tokens go. An env value becomes a
// reference to pid's environment variable of the same name (${NAME}); a header with a
// literal value is left out. Values that are references already (${VAR}) are kept. A value
// that is no such object is returned as it is. Pure.
func WithoutSecrets(raw json.RawMessage) json.RawMessage {
	var servers map[string]map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &servers) != nil || servers == nil {
		return raw
	}
	for _, srv := range servers {
		for _, field := range []string{"env", "headers"} {
			var values map[string]string
			if json.Unmarshal(srv[field], &values) != nil || values == nil {
				continue
			}
			kept := map[string]string{}
			for k, v := range values {
				switch {
				case isReference(v):
					kept[k] = v
				case field == "env":
					kept[k] = "${" + k + "}"
				}
			}
			srv[field], _ = json.Marshal(kept)
		}
	}
	out, err := json.Marshal(servers)
	if err != nil {
		return raw
	}
	return out
}

// isReference reports whether v is one ${VAR} or ${VAR:-default} reference and nothing else.
func isReference(v string) bool {
	if !strings.HasPrefix(v, "${") || !strings.HasSuffix(v, "}") {
		return false
	}
	return !strings.Contains(v[2:len(v)-1], "}") && !strings.Contains(v[2:len(v)-1], "${")
}

// HasDeferred reports whether any of servers may have deferred tools (not loaded eagerly:
// the model finds them with tool_search, so its prompt tells it of that tool).
func HasDeferred(servers map[string]ServerConfig) bool {
	for _, c := range servers {
		if c.Load != LoadEager {
			return true
		}
	}
	return false
}

package mcp

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseServers(t *testing.T) {
	got, err := ParseServers([]byte(`{
		"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, "cwd": "/w", "type": "stdio"},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}, "load": "eager"},
		"writer": {"command": "w", "sampling": true, "load": "deferred"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServerConfig{
		"github": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, Cwd: "/w"},
		"remote": {URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Load: LoadEager},
		"writer": {Command: "w", Sampling: true, Load: LoadDeferred},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseServers =\n%#v\nwant\n%#v", got, want)
	}
	for _, empty := range []string{``, `null`, ` {} `} {
		if got, err := ParseServers([]byte(empty)); err != nil || len(got) != 0 {
			t.Errorf("ParseServers(%q) = %v, %v", empty, got, err)
		}
	}
}

func TestParseServersErrorsNameTheField(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[]`, "mcpServers: must be an object"},
		{`{"a": 3}`, "mcpServers.a: must be an object"},
		{`{"a": {}}`, `mcpServers.a.command: missing; give "command"`},
		{`{"a": {"command": ""}}`, "mcpServers.a.command: must be a non-empty string"},
		{`{"a": {"command": 3}}`, "mcpServers.a.command: must be a string"},
		{`{"a": {"command": "x", "args": "y"}}`, "mcpServers.a.args: must be an array of strings"},
		{`{"a": {"command": "x", "env": {"K": 1}}}`, "mcpServers.a.env: must be an object of string values"},
		{`{"a": {"command": "x", "url": "http://h/"}}`, "mcpServers.a: has both command and url"},
		{`{"a": {"command": "x", "headers": {}}}`, "mcpServers.a.headers: only for an HTTP server"},
		{`{"a": {"url": "http://h/", "cwd": "/"}}`, "mcpServers.a.cwd: only for a stdio server"},
		{`{"a": {"url": "ftp://h/"}}`, `mcpServers.a.url: must be an http:// or https:// URL, got "ftp://h/"`},
		{`{"a": {"url": "http://h/", "type": "sse"}}`, `mcpServers.a.type: "sse" (the old HTTP+SSE transport) is not supported`},
		{`{"a": {"command": "x", "type": "http"}}`, `mcpServers.a.type: "http" does not go with command`},
		{`{"a": {"command": "x", "load": "lazy"}}`, `mcpServers.a.load: must be "deferred"`},
		{`{"a": {"command": "x", "sampling": "yes"}}`, "mcpServers.a.sampling: must be true or false"},
		{`{"a": {"command": "x", "comand": "y"}}`, "mcpServers.a.comand: unknown field"},
		{`{"": {"command": "x"}}`, "mcpServers: a server has an empty name"},
		// The first bad server in name order is reported.
		{`{"z": {}, "b": {"command": 1}}`, "mcpServers.b.command"},
	}
	for _, c := range cases {
		_, err := ParseServers([]byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseServers(%s) = %v, want an error starting %q", c.in, err, c.want)
		}
	}
}

func TestKeyIgnoresLoadOnly(t *testing.T) {
	a := ServerConfig{Command: "x", Env: map[string]string{"A": "1", "B": "2"}, Load: LoadEager}
	b := ServerConfig{Command: "x", Env: map[string]string{"B": "2", "A": "1"}}
	if a.Key() != b.Key() {
		t.Errorf("keys differ on load and map order: %s / %s", a.Key(), b.Key())
	}
	for _, c := range []ServerConfig{{Command: "y", Env: b.Env}, {Command: "x", Env: map[string]string{"A": "1"}}, {Command: "x", Env: b.Env, Sampling: true}, {Command: "x", Env: b.Env, Cwd: "/"}} {
		if c.Key() == b.Key() {
			t.Errorf("%+v has the key of %+v", c, b)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := ServerConfig{
		Command: "${TOKEN}-cmd", Args: []string{"--a=${TOKEN}", "$HOME", "${MISSING:-dflt}", "${EMPTY:-filled}", "x${EMPTY}y"},
		Env: map[string]string{"K": "${TOKEN}"}, URL: "", Headers: map[string]string{"H": "Bearer ${TOKEN}"}, Load: "${TOKEN}",
	}
	got, err := cfg.expand(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := ServerConfig{
		Command: "t0k-cmd", Args: []string{"--a=t0k", "$HOME", "dflt", "filled", "xy"},
		Env: map[string]string{"K": "t0k"}, Headers: map[string]string{"H": "Bearer t0k"}, Load: "${TOKEN}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expand =\n%#v\nwant\n%#v", got, want)
	}
	if cfg.Env["K"] != "${TOKEN}" || cfg.Args[0] != "--a=${TOKEN}" {
		t.Error("expand changed its receiver's maps or slices")
	}
	for in, msg := range map[string]string{"${MISSING}": "MISSING is not set", "${OPEN": "an unclosed ${"} {
		if _, err := (ServerConfig{Command: in}).expand(lookup); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("expand(%q) = %v, want %q", in, err, msg)
		}
	}
}

// This file tests a session's options: every member the session's own options set wins
// over the editor's defaults (and only those), the sandbox settings merge key by key, a
// session's file keeps what re-creates the options, without the MCP servers' secrets, and
// what cannot be a setting is refused before a session is built.

package sessionconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pid-agent/pid/diagnostics"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/scripted"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
)

// full is a Config with every member set.
func full(tag string) Config {
	return Config{
		Cwd: "/work/" + tag, Model: &provider.Model{Provider: "script", ID: tag}, ToolExecution: "sequential",
		Permissions: json.RawMessage(`{"default":"` + tag + `"}`), ScriptedTools: []scripted.Tool{{Name: tag}},
		SystemPrompt: "system " + tag, AppendSystemPrompt: "append " + tag, MCPServers: json.RawMessage(`{"` + tag + `":{"command":"x"}}`),
		Mode: "plan-" + tag, Hooks: json.RawMessage(`{"` + tag + `":[]}`), LSP: json.RawMessage(`{"` + tag + `":{}}`),
		Diagnostics: &diagnostics.Settings{WaitMs: len(tag)}, Subagents: task.Settings{MaxConcurrent: len(tag), Isolation: tag},
	}
}

func TestMergeKeepsWhatOverLeavesOut(t *testing.T) {
	base := full("base")
	for name, over := range map[string]Config{
		"nothing": {},
		"nulls":   {Permissions: json.RawMessage(`null`), MCPServers: json.RawMessage(`null`), Hooks: json.RawMessage(`null`), LSP: json.RawMessage(`null`), Sandbox: json.RawMessage(`null`)},
	} {
		if diff := cmp.Diff(base, base.Merge(over)); diff != "" {
			t.Errorf("%s: the defaults changed (-want +got):\n%s", name, diff)
		}
	}
}

func TestMergeTakesWhatOverSets(t *testing.T) {
	over := full("overs")
	if diff := cmp.Diff(over, full("base").Merge(over)); diff != "" {
		t.Errorf("over's members must win (-want +got):\n%s", diff)
	}
	// The subagents' keys merge one by one.
	got := full("base").Merge(Config{Subagents: task.Settings{MaxTurns: 7}})
	if want := (task.Settings{MaxConcurrent: 4, MaxTurns: 7, Isolation: "base"}); got.Subagents != want {
		t.Errorf("subagents = %+v, want %+v", got.Subagents, want)
	}
}

func TestMergeSandboxKeyByKey(t *testing.T) {
	base := Config{Sandbox: json.RawMessage(`{"mode":"read-only","writableRoots":["/a"],"denyRead":["/secret"]}`)}
	got := base.Merge(Config{Sandbox: json.RawMessage(`{"writableRoots":["/b"],"denyRead":["/other"]}`)})
	var m map[string]any
	if err := json.Unmarshal(got.Sandbox, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"mode": "read-only", "writableRoots": []any{"/b"}, "denyRead": []any{"/secret", "/other"}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("merged sandbox (-want +got):\n%s", diff)
	}
	// A malformed side leaves over's as given, for the session to report.
	bad := json.RawMessage(`{"mode": 3}`)
	if got := base.Merge(Config{Sandbox: bad}); string(got.Sandbox) != string(bad) {
		t.Errorf("malformed over: %s, want it as given", got.Sandbox)
	}
	over := json.RawMessage(`{"mode": "off"}`) // as given, not as marshalled again
	if got := (Config{Sandbox: bad}).Merge(Config{Sandbox: over}); string(got.Sandbox) != string(over) {
		t.Errorf("malformed base: %s, want over as given", got.Sandbox)
	}
	if got := (Config{}).Merge(Config{Sandbox: over}); !strings.Contains(string(got.Sandbox), `"mode":"off"`) {
		t.Errorf("no base: %s", got.Sandbox)
	}
}

func TestHeaderRecreatesTheConfig(t *testing.T) {
	cfg := full("s")
	cfg.Model.Turns = []llm.Turn{{Content: []llm.Content{llm.Text("hi")}}}
	cfg.MCPServers = json.RawMessage(`{"gh":{"command":"gh-mcp","env":{"GH_TOKEN":"ghp_secret","HOME":"${HOME}"}}}`)
	tools := []string{"read", "bash"}
	h := cfg.Header("id1", "/work/s", tools)
	tools[0] = "changed"
	if h.ID != "id1" || h.Cwd != "/work/s" || h.CreatedAt.IsZero() || !cmp.Equal(h.Tools, []string{"read", "bash"}) {
		t.Errorf("header = %+v", h)
	}
	if strings.Contains(string(h.MCPServers), "ghp_secret") || !strings.Contains(string(h.MCPServers), `"GH_TOKEN":"${GH_TOKEN}"`) {
		t.Errorf("mcpServers kept as %s, want the token's value left out", h.MCPServers)
	}
	back, err := FromHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	// What a file keeps: the options that re-create the session (the editor's sandbox, mode,
	// language servers, diagnostics and subagents are not among them).
	want := Config{Cwd: "/work/s", Model: cfg.Model, ToolExecution: cfg.ToolExecution, Permissions: cfg.Permissions, ScriptedTools: cfg.ScriptedTools,
		SystemPrompt: cfg.SystemPrompt, AppendSystemPrompt: cfg.AppendSystemPrompt, MCPServers: h.MCPServers, Hooks: cfg.Hooks}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("FromHeader(Header) (-want +got):\n%s", diff)
	}
	// Without a model, scripted tools or hooks, the header holds none.
	h = Config{Hooks: json.RawMessage(`null`)}.Header("id2", "/w", nil)
	if h.Model != nil || h.ScriptedTools != nil || h.Hooks != nil || h.Tools == nil {
		t.Errorf("empty config's header = %+v", h)
	}
	if back, err := FromHeader(h); err != nil || back.Model != nil || back.ScriptedTools != nil {
		t.Errorf("FromHeader(empty) = %+v, %v", back, err)
	}
}

func TestFromHeaderNamesWhatCannotBeRead(t *testing.T) {
	for _, c := range []struct {
		h    store.Header
		want string
	}{
		{store.Header{Model: json.RawMessage(`{"provider": 3}`)}, "its model: "},
		{store.Header{ScriptedTools: json.RawMessage(`{"name": "x"}`)}, "its scriptedTools: "},
	} {
		if _, err := FromHeader(c.h); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("FromHeader(%+v) = %v, want an error starting %q", c.h, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	spec, err := Config{ToolExecution: "parallel", Permissions: json.RawMessage(`{"default":"deny"}`)}.Check()
	if err != nil || spec == nil {
		t.Fatalf("a valid config: %v, %v", spec, err)
	}
	if spec, err := (Config{}).Check(); err != nil || spec == nil {
		t.Fatalf("an empty config: %v, %v", spec, err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ToolExecution: "serial"}, `toolExecution must be "parallel" or "sequential", not "serial"`},
		{Config{Subagents: task.Settings{Isolation: "always"}}, `subagents.isolation must be "auto", "worktree" or "none", not "always"`},
		{Config{Permissions: json.RawMessage(`{"default":"maybe"}`)}, "maybe"},
	} {
		if _, err := c.cfg.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

package toolexec_test

// Catalog tools come and go (an MCP server's): R12 activation of names the catalog knows,
// tools resolved as they are now, unavailable ones listed but not offered and refused with
// a reason, Always tools active everywhere.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

type fakeCatalog struct {
	mu      sync.Mutex
	tools   map[string]toolexec.Tool
	always  []toolexec.Tool
	version atomic.Uint64
}

func (c *fakeCatalog) Lookup(name string) (toolexec.Tool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.tools[name]; ok {
		return t, true
	}
	if strings.HasPrefix(name, "mcp__") {
		return toolexec.Tool{Name: name, Unavailable: "its server is starting"}, true
	}
	return toolexec.Tool{}, false
}

func (c *fakeCatalog) Always() []toolexec.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.always)
}

func (c *fakeCatalog) Version() uint64 { return c.version.Load() }

func (c *fakeCatalog) set(t toolexec.Tool) {
	c.mu.Lock()
	c.tools[t.Name] = t
	c.mu.Unlock()
	c.version.Add(1)
}

func mcpTool(name, answer string) toolexec.Tool {
	return toolexec.Tool{Name: name, Description: "a server's tool", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		Execute: func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
			return toolexec.TextResult(answer), nil
		}}
}

func specNames(specs []llm.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// R12: a result's addedToolNames activates a catalog tool from that message on, even while
// its server cannot serve it; the tool resolves as it is once the server is ready.
func TestCatalogToolsActivateAndResolveLater(t *testing.T) {
	cat := &fakeCatalog{tools: map[string]toolexec.Tool{}, always: []toolexec.Tool{mcpTool("mcp__eager__ping", "pong")}}
	box, err := toolexec.NewToolbox(echoTool("read"))
	if err != nil {
		t.Fatal(err)
	}
	box = box.WithCatalog(cat)
	initial, _ := box.Activate("read")
	transcript := []llm.Message{
		llm.NewUser("find it"),
		{Role: llm.RoleToolResult, ToolCallID: "s1", ToolName: "tool_search", AddedToolNames: []string{"mcp__gh__issue", "nosuch"}},
	}
	sets := toolexec.Replay(initial, transcript)
	before, after := sets[0], sets[1]
	if before.Has("mcp__gh__issue") || !after.Has("mcp__gh__issue") {
		t.Fatalf("activation: before %v after %v", before.Names(), after.Names())
	}
	if after.Has("nosuch") {
		t.Error("a name no catalog knows was activated")
	}
	// Starting: listed, not offered, a call refused with the reason.
	if got := specNames(after.Specs()); !slices.Equal(got, []string{"read", "mcp__eager__ping"}) {
		t.Errorf("offered while the server starts: %v", got)
	}
	if !slices.Contains(after.Names(), "mcp__gh__issue") {
		t.Errorf("not listed while the server starts: %v", after.Names())
	}
	out := toolexec.Run(t.Context(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{tc("c1", "mcp__gh__issue", `{"q":"x"}`)}, Tools: after})
	if m := out.Messages[0]; !m.IsError || !strings.Contains(m.Content[0].Text, "unavailable: its server is starting") {
		t.Errorf("call while unavailable: %+v", m)
	}
	// Ready: the same set (no new activation) now offers and runs it, schema validated.
	cat.set(mcpTool("mcp__gh__issue", "issue found"))
	if got := specNames(after.Specs()); !slices.Equal(got, []string{"read", "mcp__eager__ping", "mcp__gh__issue"}) {
		t.Errorf("offered once ready: %v", got)
	}
	out = toolexec.Run(t.Context(), &toolexec.Config{}, toolexec.Batch{Calls: []llm.ToolCall{
		tc("c2", "mcp__gh__issue", `{"q":"x"}`), tc("c3", "mcp__gh__issue", `{}`), tc("c4", "mcp__eager__ping", `{"q":"y"}`),
	}, Tools: after})
	if s := summarize(out.Messages); s[0].Text != "issue found" || !s[1].IsError || !strings.Contains(s[1].Text, "q") || s[2].Text != "pong" {
		t.Errorf("calls once ready: %+v", s)
	}
	// The earlier point of the transcript still does not have it.
	if before.Has("mcp__gh__issue") {
		t.Error("an earlier set gained the tool")
	}
}

// flickeringCatalog is a catalog whose Always tool is there at every other version, and whose
// version moves at every look: what a server failing between two looks does.
type flickeringCatalog struct{ version atomic.Uint64 }

func (c *flickeringCatalog) Lookup(string) (toolexec.Tool, bool) { return toolexec.Tool{}, false }
func (c *flickeringCatalog) Version() uint64                     { return c.version.Add(1) }
func (c *flickeringCatalog) Always() []toolexec.Tool {
	if c.version.Load()%2 == 1 {
		return []toolexec.Tool{mcpTool("tool_search", "found")}
	}
	return nil
}

// Tools takes the names and the tools from one view of the catalog: a catalog that changed
// between two looks once made it look up a name the second view did not have (a nil entry:
// a panic in session/new when an MCP server failed as the session started).
func TestActiveSetToolsOneView(t *testing.T) {
	box, err := toolexec.NewToolbox(mcpTool("local", "ok"))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := box.WithCatalog(&flickeringCatalog{}).Activate("local")
	for range 4 {
		tools := set.Tools()
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		if names[0] != "local" || len(names) > 2 || len(names) == 2 && names[1] != "tool_search" {
			t.Fatalf("Tools() = %v; want local, then tool_search when the view had it", names)
		}
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/toolexec"
)

// A catalog offers an eager server's tools at once and a deferred one's through
// tool_search, which activates what it finds; a name no server offers any more is known but
// unavailable, saying why; Set with other servers stops the one no longer named, and Close
// releases the rest.
func TestCatalog(t *testing.T) {
	log := newStatusLog()
	m := newTestManager(t, Options{OnStatus: log.record})
	var calls []string
	c := NewCatalog(m, func(ctx context.Context, id string) context.Context {
		calls = append(calls, id)
		return ctx
	})
	eager, deferred := serverConfig(t), serverConfig(t)
	eager.Load = LoadEager
	deferred.Env["PID_TEST_CATALOG"] = "d" // another configuration: a process of its own
	c.Set(map[string]ServerConfig{"e": eager, "d": deferred}, []string{"shipped"})
	for _, name := range []string{"e", "d"} {
		log.wait(t, name+" ready", 0, func(st ServerStatus) bool { return st.Name == name && st.Status == StatusReady })
	}
	var always []string
	for _, tl := range c.Always() {
		always = append(always, tl.Name)
	}
	if len(always) < 2 || always[0] != SearchToolName || !slices.Contains(always, "mcp__e__echo") || slices.Contains(always, "mcp__d__echo") {
		t.Errorf("always: %v, want tool_search first and e's tools, not d's", always)
	}
	if got := c.Servers(); len(got) != 3 || got[2].Name != "shipped" || got[2].Status != StatusUntrusted {
		t.Errorf("servers %+v", got)
	}
	search, ok := c.Lookup(SearchToolName)
	if !ok || search.Unavailable != "" {
		t.Fatalf("tool_search: %+v", search)
	}
	res, err := search.Execute(context.Background(), toolexec.Call{Name: SearchToolName, Args: json.RawMessage(`{"query":"echo the given text","limit":1}`)}, nil)
	if err != nil || !slices.Equal(res.AddedToolNames, []string{"mcp__d__echo"}) || !strings.Contains(text(res), "- mcp__d__echo (MCP server d): Echo the given text back unchanged.") {
		t.Fatalf("search: %q %v %v", text(res), res.AddedToolNames, err)
	}
	echo, ok := c.Lookup("mcp__d__echo")
	if !ok || echo.Unavailable != "" || c.ServerOf("mcp__d__echo") != "d" || echo.ViewOf(nil, nil).Title != "echo (MCP server d)" {
		t.Fatalf("d's echo: %+v", echo)
	}
	out, err := echo.Execute(context.Background(), toolexec.Call{ID: "call-1", Name: echo.Name, Args: json.RawMessage(`{"text":"hi"}`)}, nil)
	if err != nil || text(out) != "hi" || !slices.Equal(calls, []string{"call-1"}) {
		t.Errorf("echo: %q %v, contexts asked for %v", text(out), err, calls)
	}
	if got := c.Annotations("mcp__e__peek"); got["readOnlyHint"] != true {
		t.Errorf("peek's annotations %v", got)
	}
	c.Set(map[string]ServerConfig{"e": eager}, nil)
	if gone, ok := c.Lookup("mcp__d__echo"); !ok || !strings.Contains(gone.Unavailable, "no longer configured") {
		t.Errorf("d's echo once d is no longer named: %+v", gone)
	}
	c.Close(true)
	c.Set(map[string]ServerConfig{"d": deferred}, nil) // after Close: nothing
	if got := c.Servers(); len(got) != 1 || got[0].Name != "e" {
		t.Errorf("servers after Close and Set: %+v", got)
	}
}

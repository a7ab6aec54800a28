package session

// Tests of the system prompt a session sends its model (sysprompt.go): the facts it is given,
// the lines of tools the session lacks, and its size.

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/mcp"
)

// pid's own prompt: the facts it is given show, the lines of tools the session lacks do
// not, and it stays short (pi's default prompt is about 2 KB).
func TestDefaultSystemPromptFacts(t *testing.T) {
	started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	plain := systemPrompt(Config{}, factsFor("/w/app", []string{"/w/app"}, started, nil))
	for _, want := range []string{"Working folder: /w/app\n", "The session started on Tuesday, 1 December 2026.", "OS: " + runtime.GOOS + ";"} {
		if !strings.Contains(plain, want) {
			t.Errorf("prompt lacks %q:\n%s", want, plain)
		}
	}
	for _, unwanted := range []string{"Workspace folders", "tool_search", "<no value>"} {
		if strings.Contains(plain, unwanted) {
			t.Errorf("prompt has %q:\n%s", unwanted, plain)
		}
	}
	if n := len(plain); n > 2500 {
		t.Errorf("pid's prompt is %d bytes; keep it short", n)
	}
	t.Logf("pid's default prompt: %d bytes, %d words\n%s", len(plain), len(strings.Fields(plain)), plain)

	servers := map[string]mcp.ServerConfig{"docs": {}}
	wide := systemPrompt(Config{}, factsFor("/w/app", []string{"/w/app", "/w/lib"}, started, servers))
	for _, want := range []string{"Workspace folders (file tools reach only these): /w/app, /w/lib\n", "call tool_search"} {
		if !strings.Contains(wide, want) {
			t.Errorf("prompt lacks %q:\n%s", want, wide)
		}
	}
	eager := systemPrompt(Config{}, factsFor("/w/app", nil, started, map[string]mcp.ServerConfig{"git": {Load: mcp.LoadEager}}))
	if strings.Contains(eager, "tool_search") {
		t.Errorf("an eager server's session is told of tool_search:\n%s", eager)
	}
}

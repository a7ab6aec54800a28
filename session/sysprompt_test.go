package session

// Tests of the system prompt a session sends its model (sysprompt.go): the facts it is given,
// the lines of tools the session lacks, and its size.

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
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

// recorder is a provider that keeps the system prompt of each request and answers "ok".
type recorder struct{ prompts []string }

func (r *recorder) Stream(_ context.Context, req *llm.Request, _ llm.StreamSink) llm.Message {
	r.prompts = append(r.prompts, req.SystemPrompt)
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("ok")}, StopReason: llm.StopEnd}
}

// The mode's section: the same bytes at every call in one mode, another text in another mode,
// none in default mode (the prompt is then exactly the session's own).
func TestModeSectionStableWithinAMode(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	s, err := h.New(Config{Cwd: t.TempDir(), SystemPrompt: "Base."}, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s.model.cur = &sessionModel{cfg: &ModelConfig{Provider: "script"}, provider: rec, summarizer: rec}
	p := &compactingProvider{s: s}
	call := func() string {
		p.Stream(context.Background(), &llm.Request{SystemPrompt: "Base."}, nil)
		return rec.prompts[len(rec.prompts)-1]
	}
	if got := call(); got != "Base." {
		t.Errorf("default mode sent %q, want the prompt alone", got)
	}
	if err := s.SetMode(ModePlan); err != nil {
		t.Fatal(err)
	}
	plan1, plan2 := call(), call()
	if plan1 != plan2 || !strings.HasPrefix(plan1, "Base.\n\n# Mode: plan\n") || !strings.Contains(plan1, "exit_plan_mode") {
		t.Errorf("plan mode sent %q then %q, want the same prompt with the plan section", plan1, plan2)
	}
	if err := s.SetMode(ModeAuto); err != nil {
		t.Fatal(err)
	}
	if auto := call(); auto == plan1 || !strings.HasPrefix(auto, "Base.\n\n# Mode: auto\n") {
		t.Errorf("auto mode sent %q", auto)
	}
}

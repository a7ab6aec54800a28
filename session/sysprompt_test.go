package session

// Tests of the system prompt a session sends its model (sysprompt.go): the facts it is given,
// the lines of tools the session lacks, its sections, a subagent's own prompt, and what a
// mode change does to the request (modenote.go).

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/mcp"
)

// pid's own prompt: the facts it is given show, the lines of tools the session lacks do
// not, each section is there once, and it stays short.
func TestDefaultSystemPromptFacts(t *testing.T) {
	started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	plain := systemPrompt(Config{}, factsFor("0123456789ab", "/w/app", []string{"/w/app"}, started, nil), false)
	for _, want := range []string{"Working folder: /w/app\n", "The session started on Tuesday, 1 December 2026.", "OS: " + runtime.GOOS + ";"} {
		if !strings.Contains(plain, want) {
			t.Errorf("prompt lacks %q:\n%s", want, plain)
		}
	}
	for _, unwanted := range []string{"Workspace folders", "tool_search", "<no value>", "# Mode", "subagent"} {
		if strings.Contains(plain, unwanted) {
			t.Errorf("prompt has %q:\n%s", unwanted, plain)
		}
	}
	// The working rules: each section once, each rule in it.
	for _, section := range []string{"# Where you work\n", "# Tools\n", "# Doing the work\n", "# Git and the person's work\n", "# Answering\n"} {
		if n := strings.Count(plain, section); n != 1 {
			t.Errorf("section %q is there %d times:\n%s", section, n, plain)
		}
	}
	for _, rule := range []string{
		"keep going while there is something you can do",                        // finish the request
		"Stop to ask only for what only the person can decide",                  // ask kept for decisions
		"Keep to what was asked. Fix the cause, not the symptom.",               // scope, root cause
		"Write like the code around it",                                         // the code's own style
		"the narrowest test or build that covers the change, then broader ones", // verification
		"In plan mode run only checks that change nothing.",
		"Say what you could not check.",
		"put independent reads and searches in one answer",                                      // parallel reads
		"Do not commit, push, stash, reset, check out, rebase or clean unless the person asks.", // git
		"never revert or overwrite a change you did not make",
		"Write Markdown", "`path:line`",
	} {
		if strings.Count(plain, rule) != 1 {
			t.Errorf("prompt does not say %q once:\n%s", rule, plain)
		}
	}
	if n := len(plain); n > 3000 {
		t.Errorf("pid's prompt is %d bytes; keep it short", n)
	}
	t.Logf("pid's default prompt: %d bytes, %d words\n%s", len(plain), len(strings.Fields(plain)), plain)

	servers := map[string]mcp.ServerConfig{"docs": {}}
	wide := systemPrompt(Config{}, factsFor("0123456789ab", "/w/app", []string{"/w/app", "/w/lib"}, started, servers), false)
	for _, want := range []string{"Workspace folders (file tools reach only these): /w/app, /w/lib\n", "call tool_search"} {
		if !strings.Contains(wide, want) {
			t.Errorf("prompt lacks %q:\n%s", want, wide)
		}
	}
	eager := systemPrompt(Config{}, factsFor("0123456789ab", "/w/app", nil, started, map[string]mcp.ServerConfig{"git": {Load: mcp.LoadEager}}), false)
	if strings.Contains(eager, "tool_search") {
		t.Errorf("an eager server's session is told of tool_search:\n%s", eager)
	}
}

// A subagent's own prompt: it is told it is one and that its last message is all its parent
// gets; an explore one that it cannot change files, with no mode; a general one its mode.
func TestSubagentSystemPrompt(t *testing.T) {
	started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	parent := systemPrompt(Config{}, factsFor("0123456789ab", "/w/app", nil, started, nil), false)
	explore := factsFor("0123456789ab", "/w/app", nil, started, nil)
	explore.CanChange = false
	ex := systemPrompt(Config{}, explore, true)
	general := factsFor("0123456789ab", "/w/app", nil, started, nil)
	general.Mode, general.ModeSection = ModeAcceptEdits, modeText(ModeAcceptEdits)
	gen := systemPrompt(Config{}, general, true)
	for name, p := range map[string]string{"explore": ex, "general": gen} {
		if p == parent {
			t.Fatalf("%s: the subagent got its parent's prompt", name)
		}
		for _, want := range []string{"You are a subagent of pid", "nobody can answer a question", "is all your parent receives", "`path:line`", "what you could not do or check", "Working folder: /w/app\n"} {
			if strings.Count(p, want) != 1 {
				t.Errorf("%s: prompt does not say %q once:\n%s", name, want, p)
			}
		}
		if strings.Contains(p, "asks them before a call") {
			t.Errorf("%s: the subagent is told a person reads it:\n%s", name, p)
		}
	}
	if !strings.Contains(ex, "You cannot change files; bash runs in a read-only sandbox.") || strings.Contains(ex, "# Mode") || strings.Contains(ex, "with edit") {
		t.Errorf("explore prompt:\n%s", ex)
	}
	if !strings.Contains(gen, "# Mode: acceptEdits\nwrites and edits inside the workspace run without asking") || strings.Contains(gen, "You cannot change files") {
		t.Errorf("general prompt:\n%s", gen)
	}
	t.Logf("explore subagent's prompt: %d bytes\n%s", len(ex), ex)
}

// requestRecorder is a provider that keeps each request whole and answers "ok".
type requestRecorder struct{ reqs []*llm.Request }

func (r *requestRecorder) Stream(_ context.Context, req *llm.Request, _ llm.StreamSink) llm.Message {
	r.reqs = append(r.reqs, req)
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("ok")}, StopReason: llm.StopEnd}
}

// A mode change changes neither the system prompt nor the tools (exit_plan_mode is offered
// in every mode), so the provider's cache holds: the model reads of it in a note at the start
// of the next message, and the earlier messages are sent as before.
func TestModeChangeKeepsPromptAndTools(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	s, err := h.New(Config{Cwd: t.TempDir(), Mode: ModePlan}, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &requestRecorder{}
	s.model.cur = &sessionModel{cfg: &ModelConfig{Provider: "script"}, provider: rec, summarizer: rec}
	prompt := func(text string) *llm.Request {
		t.Helper()
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		defer s.End()
		if _, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser(text)}); err != nil {
			t.Fatal(err)
		}
		return rec.reqs[len(rec.reqs)-1]
	}
	first := prompt("one")
	if err := s.SetMode(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	second := prompt("two")
	third := prompt("three")
	tools := func(r *llm.Request) string { b, _ := json.Marshal(r.Tools); return string(b) }
	if first.SystemPrompt != second.SystemPrompt || first.SystemPrompt != third.SystemPrompt {
		t.Errorf("the system prompt changed with the mode:\n%s\n---\n%s", first.SystemPrompt, second.SystemPrompt)
	}
	if tools(first) != tools(second) || !strings.Contains(tools(first), `"name":"exit_plan_mode"`) {
		t.Errorf("the tools changed with the mode, or lack exit_plan_mode:\n%s\n---\n%s", tools(first), tools(second))
	}
	msgs := func(r *llm.Request) string { b, _ := json.Marshal(r.Messages); return string(b) }
	if !strings.HasPrefix(msgs(second), strings.TrimSuffix(msgs(first), "]")) || !strings.HasPrefix(msgs(third), strings.TrimSuffix(msgs(second), "]")) {
		t.Errorf("earlier messages were sent otherwise:\n%s\n---\n%s", msgs(first), msgs(second))
	}
	noteOf := func(m llm.Message) string {
		if len(m.Content) > 1 && strings.HasPrefix(m.Content[0].Text, "<system-reminder>") {
			return m.Content[0].Text
		}
		return ""
	}
	if got := noteOf(first.Messages[0]); !strings.HasPrefix(got, "<system-reminder>The mode is now plan: ") {
		t.Errorf("a session started in plan mode: first message's note %q", got)
	}
	if got := noteOf(second.Messages[2]); got != modeNote(ModeAcceptEdits) || second.Messages[2].Content[1].Text != "two" {
		t.Errorf("after plan -> acceptEdits the next message is %+v", second.Messages[2])
	}
	if got := noteOf(third.Messages[4]); got != "" {
		t.Errorf("a message after the note, in the same mode, has a note: %q", got)
	}
	// The transcript, and what the editor is shown, hold the messages as sent by the person.
	for _, it := range s.Items() {
		if m := it.Message; m != nil && strings.Contains(m.Text(), "system-reminder") {
			t.Errorf("the note is in the session's items: %+v", m)
		}
	}
}

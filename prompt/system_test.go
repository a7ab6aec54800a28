package prompt

// Tests of the system prompt: the facts it is given, the lines of tools the session lacks,
// its sections, a subagent's own prompt, and two parts of a prompt joined.

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// pid's own prompt: the facts it is given show, the lines of tools the session lacks do
// not, each section is there once, and it stays short.
func TestDefaultSystemPromptFacts(t *testing.T) {
	started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	plain := System("", "", FactsFor("0123456789ab", "/w/app", []string{"/w/app"}, started, false), false)
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

	wide := System("", "", FactsFor("0123456789ab", "/w/app", []string{"/w/app", "/w/lib"}, started, true), false)
	for _, want := range []string{"Workspace folders (file tools reach only these): /w/app, /w/lib\n", "call tool_search"} {
		if !strings.Contains(wide, want) {
			t.Errorf("prompt lacks %q:\n%s", want, wide)
		}
	}
	eager := System("", "", FactsFor("0123456789ab", "/w/app", nil, started, false), false)
	if strings.Contains(eager, "tool_search") {
		t.Errorf("a session without deferred tools is told of tool_search:\n%s", eager)
	}
}

// A subagent's own prompt: it is told it is one and that its last message is all its parent
// gets; an explore one that it cannot change files, with no mode; a general one its mode.
func TestSubagentSystemPrompt(t *testing.T) {
	started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	parent := System("", "", FactsFor("0123456789ab", "/w/app", nil, started, false), false)
	explore := FactsFor("0123456789ab", "/w/app", nil, started, false)
	explore.CanChange = false
	ex := System("", "", explore, true)
	general := FactsFor("0123456789ab", "/w/app", nil, started, false)
	general.Mode, general.ModeSection = ModeAcceptEdits, ModeText(ModeAcceptEdits)
	gen := System("", "", general, true)
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

func TestJoin(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"You review.", "Be brief.", "You review.\n\nBe brief."},
		{"  You review.\n", "\n Be brief.  ", "You review.\n\nBe brief."},
		{"", "Be brief.", "Be brief."},
		{"You review.", " \n", "You review."},
		{"", "", ""},
	} {
		if got := Join(c.a, c.b); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

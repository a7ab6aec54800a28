// This file checks what system prompt a real model gets (issue 20): pid's own, with the
// working folder and the day the session started, byte for byte the same on every call of a
// session; a session's systemPrompt in its place; its appendSystemPrompt after either. The
// real binary talks to a local chat-completions server that records every request.

package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// textAnswer is a whole chat-completions answer of one text.
func textAnswer(text string) []streamStep {
	return []streamStep{sseChunk(obj{"role": "assistant", "content": text}, nil), sseChunk(obj{}, "stop"), sseDone}
}

// systemOf returns the raw JSON of the system message of a recorded request body, "" when
// there is none.
func systemOf(body []byte) string {
	first := gjson.GetBytes(body, "messages.0")
	if first.Get("role").String() != "system" {
		return ""
	}
	return first.Get("content").Raw
}

func TestE2EDefaultSystemPrompt(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newFakeOpenAI(t,
		sseAnswer(sseChunk(callFragment(0, "call_r1", "read", `{"path":"a.txt"}`), nil), sseChunk(obj{}, "tool_calls"), sseDone),
		sseAnswer(textAnswer("alpha it is")...),
	)
	d := startProcess(t, processOptions{Env: e2eEnv})
	d.initialize(nil)
	before := time.Now()
	sid := d.newSession(obj{"cwd": cwd, "model": e2eModel(srv)})
	after := time.Now()
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "what is in a.txt?"})
	if got := res.Get("stopReason").String(); got != "stop" {
		t.Fatalf("stopReason %q: %s", got, res.Raw)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the tool call, then the answer)", len(reqs))
	}
	first, second := systemOf(reqs[0].body), systemOf(reqs[1].body)
	if first == "" {
		t.Fatalf("the first request has no system message: %s", reqs[0].body)
	}
	if first != second {
		t.Errorf("the two calls sent different system prompts:\n%s\n---\n%s", first, second)
	}
	prompt := gjson.Parse(first).String()
	for _, want := range []string{"You are pid", "inside the person's code editor", "Working folder: " + cwd, "stale-edit guard", "tool_search"} {
		has := strings.Contains(prompt, want)
		if want == "tool_search" {
			// No MCP server, no deferred tools: the prompt does not tell of a tool the model lacks.
			has = !has
		}
		if !has {
			t.Errorf("the system prompt does not fit %q:\n%s", want, prompt)
		}
	}
	const layout = "Monday, 2 January 2006"
	if !strings.Contains(prompt, before.Format(layout)) && !strings.Contains(prompt, after.Format(layout)) {
		t.Errorf("the system prompt does not name the day the session started (%s):\n%s", before.Format(layout), prompt)
	}
	stopDaemon(t, d)
}

// systemPrompt replaces pid's prompt, appendSystemPrompt comes after either, on the native
// face's session/new.
func TestE2ESystemPromptReplaceAndAppend(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	srv := newFakeOpenAI(t, sseAnswer(textAnswer("one")...), sseAnswer(textAnswer("two")...), sseAnswer(textAnswer("three")...))
	d := startProcess(t, processOptions{Env: e2eEnv})
	d.initialize(nil)
	cases := []struct {
		name   string
		params obj
		check  func(prompt string) bool
	}{
		{"replace", obj{"systemPrompt": "You review Go code."}, func(p string) bool { return p == "You review Go code." }},
		{"append", obj{"appendSystemPrompt": "Answer in French."}, func(p string) bool {
			return strings.HasPrefix(p, "You are pid") && strings.Contains(p, "Working folder: "+cwd) && strings.HasSuffix(p, ".\n\nAnswer in French.")
		}},
		{"both", obj{"systemPrompt": "You review Go code.", "appendSystemPrompt": "Answer in French."}, func(p string) bool {
			return p == "You review Go code.\n\nAnswer in French."
		}},
	}
	for i, tc := range cases {
		tc.params["cwd"], tc.params["model"] = cwd, e2eModel(srv)
		sid := d.newSession(tc.params)
		d.call("session/prompt", obj{"sessionId": sid, "text": "hi"})
		reqs := srv.requests()
		if len(reqs) != i+1 {
			t.Fatalf("%s: %d requests, want %d", tc.name, len(reqs), i+1)
		}
		if p := gjson.Parse(systemOf(reqs[i].body)).String(); !tc.check(p) {
			t.Errorf("%s: system prompt %q", tc.name, p)
		}
	}
	stopDaemon(t, d)
}

// A session closed and loaded again sends the same prompt bytes as before: pid's prompt is
// made again from the saved session (its day included), not kept in the file.
func TestE2ESystemPromptSameAfterLoad(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	srv := newFakeOpenAI(t, sseAnswer(textAnswer("one")...), sseAnswer(textAnswer("two")...))
	d := startProcess(t, processOptions{Env: e2eEnv})
	d.initialize(nil)
	sid := d.newSession(obj{"cwd": cwd, "model": e2eModel(srv), "appendSystemPrompt": "Answer in French."})
	d.call("session/prompt", obj{"sessionId": sid, "text": "hi"})
	d.call("session/close", obj{"sessionId": sid})
	d.call("session/load", obj{"sessionId": sid})
	d.call("session/prompt", obj{"sessionId": sid, "text": "again"})
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	before, after := systemOf(reqs[0].body), systemOf(reqs[1].body)
	if before == "" || before != after {
		t.Errorf("the loaded session sent another system prompt:\n%s\n---\n%s", before, after)
	}
	if !strings.HasSuffix(gjson.Parse(after).String(), "\n\nAnswer in French.") {
		t.Errorf("the loaded session lost appendSystemPrompt: %s", after)
	}
	stopDaemon(t, d)
}

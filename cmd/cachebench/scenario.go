// This file is the scripted session and the editor that drives it: 40 model requests with
// tool calls, a plan -> acceptEdits switch, a denial, a subagent, a tool_search activation, a
// daemon restart with session/load, and a compaction, against the recording server.

package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/internal/pidtest"
)

// Conversations a request belongs to.
const (
	convMain    = "main"
	convChild   = "child"
	convSummary = "summary"
)

// step is one model request of the script and its answer.
type step struct {
	conv string
	// note says what happened just before the request, when it is worth saying.
	note string
	// expect is text the request must hold (a prompt, a tool's result), so a script that
	// went out of step fails instead of measuring something else.
	expect string
	answer []block
}

// act is what the editor does: a prompt, a compaction, or a restart of pid followed by
// session/load.
type act struct {
	prompt           string
	compact, restart bool
}

// Notes of the requests the target allows below 1.0 (the first after a compaction
// and after a tool_search activation), and of the one after the mode change, which the
// system prompt and tool list change today.
const (
	noteCompacted  = "after the compaction"
	noteToolFound  = "after a tool_search activation"
	noteModeSwitch = "after the plan -> acceptEdits switch"
	noteResumed    = "after a restart and session/load"
)

// denyReason is the editor's reason for denying the bash call.
const denyReason = "use make test, not go test"

// files are the workspace's.
var files = map[string]string{
	"parse.go": "package parse\n\nfunc Parse() int { return 1 }\n",
	"a.txt":    "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n", "d.txt": "delta\n", "e.txt": "epsilon\n",
}

var acts = []act{
	{prompt: "Plan a fix for the failing parse test, then make it."},
	{prompt: "Run the tests."},
	{prompt: "Ask a helper what b.txt says."},
	{prompt: "Echo hi with the echo tool of server t."},
	{prompt: "Read c.txt and d.txt."},
	{restart: true},
	{prompt: "And e.txt?"},
	{prompt: "Make a.txt say alpha two."},
	{compact: true},
	{prompt: "What does a.txt say now?"},
	{prompt: "List the folder."},
	{prompt: "Which files mention alpha?"},
	{prompt: "Read b.txt again."},
	{prompt: "Find the text files."},
	{prompt: "Read c.txt once more."},
	{prompt: "Read d.txt and e.txt, then echo bye."},
	{prompt: "Thanks."},
}

var steps = []step{
	// Plan mode: read, then exit_plan_mode, which the editor approves into acceptEdits.
	{conv: convMain, note: "first request", expect: "Plan a fix", answer: []block{text("Let me look."),
		call("r1", "read", `{"path":"parse.go"}`), call("g1", "grep", `{"pattern":"Parse"}`)}},
	{conv: convMain, expect: "func Parse", answer: []block{call("l1", "ls", `{}`)}},
	{conv: convMain, expect: "a.txt", answer: []block{call("x1", "exit_plan_mode", `{"plan":"1. Make Parse return 2."}`)}},
	{conv: convMain, note: noteModeSwitch, expect: "acceptEdits", answer: []block{
		call("e1", "edit", `{"path":"parse.go","edits":[{"oldText":"return 1","newText":"return 2"}]}`)}},
	{conv: convMain, expect: "parse.go", answer: []block{text("Parse returns 2 now.")}},
	// A denial.
	{conv: convMain, expect: "Run the tests", answer: []block{call("b1", "bash", `{"command":"go test ./..."}`)}},
	{conv: convMain, note: "after a denial", expect: denyReason, answer: []block{call("w1", "write", `{"path":"notes.md","content":"Run make test.\n"}`)}},
	{conv: convMain, expect: "notes.md", answer: []block{text("Noted in notes.md.")}},
	// A subagent.
	{conv: convMain, expect: "Ask a helper", answer: []block{call("t1", "task", `{"description":"read b.txt","prompt":"Read b.txt and say what it holds.","agent":"explore"}`)}},
	{conv: convChild, note: "the subagent's first request", expect: "Read b.txt and say", answer: []block{call("c1", "read", `{"path":"b.txt"}`)}},
	{conv: convChild, expect: "beta", answer: []block{text("b.txt holds beta.")}},
	{conv: convMain, note: "after the subagent", expect: "b.txt holds beta.", answer: []block{text("The helper says b.txt holds beta.")}},
	// tool_search activates the MCP server's echo.
	{conv: convMain, expect: "Echo hi", answer: []block{call("q1", "tool_search", `{"query":"echo"}`)}},
	{conv: convMain, note: noteToolFound, expect: "mcp__t__echo", answer: []block{call("m1", "mcp__t__echo", `{"text":"hi"}`)}},
	{conv: convMain, expect: "hi", answer: []block{text("It echoed hi.")}},
	{conv: convMain, expect: "Read c.txt and d.txt", answer: []block{call("r2", "read", `{"path":"c.txt"}`)}},
	{conv: convMain, expect: "gamma", answer: []block{call("r3", "read", `{"path":"d.txt"}`)}},
	{conv: convMain, expect: "delta", answer: []block{text("c.txt holds gamma, d.txt delta.")}},
	// pid restarts; the session is loaded.
	{conv: convMain, note: noteResumed, expect: "And e.txt?", answer: []block{call("r4", "read", `{"path":"e.txt"}`)}},
	{conv: convMain, expect: "epsilon", answer: []block{text("e.txt holds epsilon.")}},
	{conv: convMain, expect: "alpha two", answer: []block{call("r5", "read", `{"path":"a.txt"}`)}},
	{conv: convMain, expect: "alpha", answer: []block{call("e2", "edit", `{"path":"a.txt","edits":[{"oldText":"alpha","newText":"alpha two"}]}`)}},
	{conv: convMain, expect: "a.txt", answer: []block{text("Done.")}},
	// session/compact.
	{conv: convSummary, note: "the compaction's summary request", answer: []block{text("## Goal\nSmall edits in a test folder.")}},
	{conv: convMain, note: noteCompacted, expect: "What does a.txt say now?", answer: []block{call("r6", "read", `{"path":"a.txt"}`)}},
	{conv: convMain, expect: "alpha two", answer: []block{text("It says alpha two.")}},
	{conv: convMain, expect: "List the folder", answer: []block{call("l2", "ls", `{}`)}},
	{conv: convMain, expect: "notes.md", answer: []block{text("Six text files, parse.go and notes.md.")}},
	{conv: convMain, expect: "mention alpha", answer: []block{call("g2", "grep", `{"pattern":"alpha"}`)}},
	{conv: convMain, expect: "a.txt", answer: []block{text("Only a.txt.")}},
	{conv: convMain, expect: "Read b.txt again", answer: []block{call("r7", "read", `{"path":"b.txt"}`)}},
	{conv: convMain, expect: "beta", answer: []block{text("beta.")}},
	{conv: convMain, expect: "Find the text files", answer: []block{call("f1", "find", `{"pattern":"*.txt"}`)}},
	{conv: convMain, expect: "e.txt", answer: []block{text("a.txt to e.txt.")}},
	{conv: convMain, expect: "Read c.txt once more", answer: []block{call("r8", "read", `{"path":"c.txt"}`)}},
	{conv: convMain, expect: "gamma", answer: []block{text("gamma.")}},
	{conv: convMain, expect: "then echo bye", answer: []block{call("r9", "read", `{"path":"d.txt"}`), call("r10", "read", `{"path":"e.txt"}`)}},
	{conv: convMain, expect: "epsilon", answer: []block{call("m2", "mcp__t__echo", `{"text":"bye"}`)}},
	{conv: convMain, expect: "bye", answer: []block{text("delta, epsilon, and it echoed bye.")}},
	{conv: convMain, expect: "Thanks.", answer: []block{text("You're welcome.")}},
}

// variant is one provider configuration the session runs with.
type variant struct {
	name     string
	provider string // "anthropic" or "openai"
	api      string // openai: "" (chat completions) or "responses"
	thinking string
}

var variants = []variant{
	{name: "anthropic", provider: "anthropic"},
	{name: "anthropic, thinking low", provider: "anthropic", thinking: "low"},
	{name: "openai chat completions", provider: "openai"},
	{name: "openai responses, reasoning medium", provider: "openai", api: "responses", thinking: "medium"},
}

// keyEnv holds the API key pid sends to the recording server.
const keyEnv = "PID_CACHEBENCH_KEY"

// model is the session's model for v at the server srv.
func (v variant) model(srv *server) obj {
	m := obj{"provider": v.provider, "apiKeyEnv": keyEnv, "compaction": obj{"keepRecentTokens": 1}}
	switch v.provider {
	case "anthropic":
		m["id"], m["baseUrl"] = "claude-sonnet-4-5", srv.URL
	default:
		m["id"], m["baseUrl"] = "gpt-5", srv.URL+"/v1"
		if v.api != "" {
			m["api"] = v.api
		} else {
			m["promptCacheKey"] = true
		}
	}
	if v.thinking != "" {
		m["thinking"] = v.thinking
	}
	return m
}

// outcome is one run of the script: the requests the server got, and the session's id.
type outcome struct {
	requests  []request
	sessionID string
}

// runScript runs the session for v with the pid binary bin, the test MCP server mcpBin, in
// folders under dir.
func runScript(bin, mcpBin, dir string, v variant) (*outcome, error) {
	script := steps
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	srv := newServer(script, v.thinking != "")
	defer srv.Close()

	var cur atomic.Pointer[pidtest.Process]
	start := func() (*pidtest.Process, error) {
		p, err := pidtest.Start(bin, pidtest.Options{Home: home, Env: []string{keyEnv + "=sk-cachebench"},
			Conn: pidtest.ConnOptions{Discard: true, OnMessage: func(m *pidtest.Msg) { approve(cur.Load(), m) }}})
		if err != nil {
			return nil, err
		}
		cur.Store(p)
		if _, err := p.Call("initialize", obj{"processId": os.Getpid(), "clientInfo": obj{"name": "cachebench"},
			"capabilities":     obj{"experimental": obj{"pid": obj{"beforeToolCall": true}}},
			"workspaceFolders": []obj{{"uri": (&url.URL{Scheme: "file", Path: ws}).String(), "name": "ws"}}}); err != nil {
			p.Kill()
			return nil, err
		}
		return p, p.Notify("initialized", obj{})
	}
	stop := func(p *pidtest.Process) error {
		if code, err := p.Stop(30 * time.Second); err != nil || code != 0 {
			return fmt.Errorf("pid stopped with code %d: %v\n%s", code, err, p.Stderr())
		}
		return nil
	}
	p, err := start()
	if err != nil {
		return nil, err
	}
	defer func() { cur.Load().Kill() }()
	res, err := p.Call("session/new", obj{"cwd": ws, "mode": "plan", "model": v.model(srv),
		"mcpServers": obj{"t": obj{"command": mcpBin}}})
	if err != nil {
		return nil, err
	}
	sid := res.Get("sessionId").String()
	for _, a := range acts {
		p := cur.Load()
		switch {
		case a.restart:
			if err := stop(p); err != nil {
				return nil, err
			}
			if p, err = start(); err != nil {
				return nil, err
			}
			if _, err := p.Call("session/load", obj{"sessionId": sid}); err != nil {
				return nil, err
			}
		case a.compact:
			if _, err := p.Call("session/compact", obj{"sessionId": sid}); err != nil {
				return nil, err
			}
		default:
			r, err := p.Call("session/prompt", obj{"sessionId": sid, "text": a.prompt})
			if err != nil {
				return nil, err
			}
			if got := r.Get("stopReason").String(); got != "stop" {
				return nil, fmt.Errorf("prompt %q ended with %q: %.600s", a.prompt, got, r.Raw)
			}
		}
	}
	if err := stop(cur.Load()); err != nil {
		return nil, err
	}
	reqs := srv.requests()
	if len(reqs) != len(script) {
		return nil, fmt.Errorf("the server got %d requests, the script has %d", len(reqs), len(script))
	}
	var errs []error
	for i, r := range reqs {
		if e := script[i].expect; e != "" && !strings.Contains(string(r.body), strings.ReplaceAll(e, `"`, `\"`)) && !strings.Contains(string(r.body), e) {
			errs = append(errs, fmt.Errorf("request %d does not hold %q: the script is out of step", i+1, e))
		}
	}
	return &outcome{requests: reqs, sessionID: sid}, errors.Join(errs...)
}

// approve answers pid's approval requests as the person would: bash is denied with a
// reason, exit_plan_mode is approved into acceptEdits, anything else is allowed.
func approve(p *pidtest.Process, m *pidtest.Msg) {
	if p == nil || !m.IsRequest() {
		return
	}
	if m.Method() != "beforeToolCall" {
		p.AnswerError(m, -32601, "cachebench answers beforeToolCall only")
		return
	}
	switch m.Get("params.toolName").String() {
	case "bash":
		p.Answer(m, obj{"decision": "deny", "reason": denyReason})
	case "exit_plan_mode":
		p.Answer(m, obj{"decision": "allow", "mode": "acceptEdits"})
	default:
		p.Answer(m, obj{"decision": "allow"})
	}
}

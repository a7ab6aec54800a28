// This file checks that a resumed session hits the provider's prompt cache (issue 24): after
// session/load in a new pid, the first model request has the same system prompt, tool list
// and messages, byte for byte, as the request the same conversation makes without the
// reload. Two conversations run the same script against two recording servers: one in a
// single daemon (prompt A, then prompt B), the other in a daemon that runs prompt A and
// stops, then in a new daemon that loads the session and runs prompt B. The two B requests
// must be the same bytes.

package rpc

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resumeScript is the answers of one conversation: prompt A makes two calls in parallel
// (their arguments in fragments, after some text and some reasoning), then answers; prompt
// B answers at once.
func resumeScript() []func(w http.ResponseWriter, r *http.Request) {
	return []func(w http.ResponseWriter, r *http.Request){
		sseAnswer(
			sseChunk(obj{"role": "assistant", "reasoning_content": "Look at the file first."}, nil),
			sseChunk(obj{"content": "Let me look: "}, nil),
			sseChunk(obj{"content": "two calls."}, nil),
			sseChunk(callFragment(0, "call_read", "read", `{"path":`), nil),
			sseChunk(callFragment(1, "call_ls", "ls", `{ "path" : "." }`), nil),
			sseChunk(callFragment(0, "", "", ` "a.txt"}`), nil),
			sseChunk(obj{}, "tool_calls"),
			sseUsage(900, 0, 40),
			sseDone),
		sseAnswer(sseChunk(obj{"role": "assistant", "content": "It says alpha, é and \u2028 ünïcödé <&>."}, nil), sseChunk(obj{}, "stop"), sseUsage(1000, 800, 12), sseDone),
		sseAnswer(textAnswer("B's answer")...),
	}
}

// firstDifference describes where two byte strings first differ.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-120)
	return fmt.Sprintf("at byte %d:\n  without reload: …%s…\n  after reload:   …%s…", i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
}

func TestE2EResumeSendsTheSameRequest(t *testing.T) {
	// compact: the session is compacted after prompt A (before the reload), so that B's
	// request starts with the summary.
	// mcp: the session has an eager MCP server, which the loading daemon holds at a gate
	// in its start until the prompt after the load is under way: the request waits for its
	// tools rather than going without them.
	for _, c := range []struct{ compacted, mcp bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("compacted=%v,mcp=%v", c.compacted, c.mcp), func(t *testing.T) { resumeSameRequest(t, c.compacted, c.mcp) })
	}
}

func resumeSameRequest(t *testing.T, compacted, withMCP bool) {
	config, _ := xdgDirs(t)
	_, ws := newWorkspaceDir(t, map[string]string{"AGENTS.md": "Run the tests before you say you are done.\n", "a.txt": "alpha\n"})
	wsWriteFile(t, filepath.Join(config, "pid", "AGENTS.md"), "The person's own instructions.\n")
	trustInUserSettings(t, config, ws)
	script := resumeScript()
	if compacted {
		summary := sseAnswer(textAnswer("The person asked what a.txt holds: alpha.")...)
		script = append(script[:2:2], summary, script[2])
	}
	direct, reloaded := newFakeOpenAI(t, script...), newFakeOpenAI(t, script...)
	prompt := func(d *daemon, sid, text string) {
		t.Helper()
		if r := d.call("session/prompt", obj{"sessionId": sid, "text": text}); r.Get("stopReason").String() != "stop" {
			t.Fatalf("prompt %q: %s", text, r.Raw)
		}
	}
	compact := func(d *daemon, sid string) {
		t.Helper()
		if compacted {
			if r := d.call("session/compact", obj{"sessionId": sid}); r.Get("summary").String() == "" {
				t.Fatalf("session/compact: %s", r.Raw)
			}
		}
	}
	cfg := func(srv *fakeOpenAI) obj {
		model := e2eModel(srv)
		model["compaction"] = obj{"keepRecentTokens": 1}
		c := obj{"cwd": ws, "model": model, "appendSystemPrompt": "Be brief.", "mode": "acceptEdits"}
		if withMCP {
			c["mcpServers"] = obj{"t": obj{"command": "pidtestmcp", "load": "eager"}}
		}
		return c
	}
	ready := func(d *daemon) {
		t.Helper()
		if withMCP {
			awaitServer(t, d, "t")
		}
	}

	// Without a reload: A, then B.
	d1 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d1, nil, ws)
	s1 := d1.newSession(cfg(direct))
	ready(d1)
	prompt(d1, s1, "prompt A: what is in a.txt?")
	compact(d1, s1)
	prompt(d1, s1, "prompt B: thanks")
	stopDaemon(t, d1)

	// With one: A, the daemon stops, a new one loads the session, then B.
	d2 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d2, nil, ws)
	s2 := d2.newSession(cfg(reloaded))
	ready(d2)
	prompt(d2, s2, "prompt A: what is in a.txt?")
	compact(d2, s2)
	stopDaemon(t, d2)
	d3 := startProcess(t, processOptions{Env: e2eEnv})
	initWorkspace(d3, nil, ws)
	if !withMCP {
		loaded := d3.call("session/load", obj{"sessionId": s2})
		if got, want := loaded.Get("instructions.#.path").Raw, mustJSON([]string{filepath.Join(config, "pid", "AGENTS.md"), filepath.Join(ws, "AGENTS.md")}); !jsonEq(got, want) {
			t.Errorf("session/load's instructions: %s, want %s", loaded.Get("instructions").Raw, want)
		}
		prompt(d3, s2, "prompt B: thanks")
	} else {
		gate := filepath.Join(t.TempDir(), "gate")
		if err := mkfifo(gate, 0o600); err != nil {
			t.Fatal(err)
		}
		d3.call("session/load", obj{"sessionId": s2, "mcpServers": obj{"t": obj{"command": "pidtestmcp", "load": "eager", "args": []string{"-gate", gate}}}})
		id := d3.request("session/prompt", obj{"sessionId": s2, "text": "prompt B: thanks"})
		// The prompt is under way (its message is out) while the server is held.
		d3.notification("messageEnd", func(m *wireMsg) bool {
			return m.get("params.sessionId").String() == s2 && m.get("params.message.role").String() == "user"
		})
		if n := len(reloaded.requests()); n != len(script)-1 {
			t.Errorf("the model was asked while the loaded session's MCP server was still starting (%d requests)", n)
		}
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("go\n")
		f.Close()
		if r := d3.result(id); r.Get("stopReason").String() != "stop" {
			t.Fatalf("prompt B: %s", r.Raw)
		}
	}
	stopDaemon(t, d3)

	a, b := direct.requests(), reloaded.requests()
	if len(a) != len(script) || len(b) != len(script) {
		t.Fatalf("%d and %d requests, want %d each", len(a), len(b), len(script))
	}
	last := len(script) - 1
	// The requests before B are the same: the two conversations are the same one.
	for i := range last {
		if string(a[i].body) != string(b[i].body) {
			t.Fatalf("request %d before prompt B differs between the two daemons (the test is wrong): %s", i+1, firstDifference(a[i].body, b[i].body))
		}
	}
	same := string(a[last].body) == string(b[last].body)
	if !same {
		t.Errorf("prompt B's request after session/load is not the one without the reload: %s", firstDifference(a[last].body, b[last].body))
	}
	if withMCP && !strings.Contains(string(b[last].body), `"name":"mcp__t__echo"`) {
		t.Errorf("prompt B's request does not offer the MCP server's tools: %s", b[last].body)
	}
	if compacted && !strings.Contains(string(b[last].body), "alpha.") {
		t.Errorf("prompt B's request does not hold the summary: %s", b[last].body)
	}
	if same {
		t.Logf("prompt B's request: %d bytes, the same after the reload", len(b[last].body))
	}
}

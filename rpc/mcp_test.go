// This file tests MCP servers as tool sources through the protocol, against the real binary
// and package mcp's test server (pidtestmcp, on PATH): tool_search finds a deferred tool and
// activates it, the editor approves it like any tool, progress and cancel reach the server,
// a crash fails the call with the server's stderr and the next call restarts it, a changed
// tool list shows, elicitation goes to the editor, an untrusted workspace's servers never
// start, a reloaded session has the tools it had, and no server outlives pid.

package rpc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/proctest"
)

// testServers is mcpServers naming the test server "t" (deferred).
func testServers(extra obj) obj {
	c := obj{"command": "pidtestmcp"}
	for k, v := range extra {
		c[k] = v
	}
	return obj{"t": c}
}

// eagerSession starts a daemon on a fresh workspace, initialized with the pid capabilities
// caps, opens a session with params (which name the test server t), and waits for t. It
// returns the daemon, the session and the workspace folder.
func eagerSession(t *testing.T, caps, params obj) (*daemon, string, string) {
	t.Helper()
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	d := startProcess(t, processOptions{})
	initWorkspace(d, caps, ws)
	sid := d.newSession(params)
	awaitServer(t, d, "t")
	return d, sid, ws
}

// awaitServer waits until mcp/servers says the server is ready.
func awaitServer(t *testing.T, d *daemon, name string) {
	t.Helper()
	d.await("mcp/serverStatus ready for "+name, func(m *wireMsg) bool {
		return m.method() == "mcp/serverStatus" && m.get("params.name").String() == name && m.get("params.status").String() == "ready"
	})
}

// allow answers every approval with allow, recording the requests.
func allowAll(reqs *[]*wireMsg) wsAnswerer {
	return func(m *wireMsg) any {
		*reqs = append(*reqs, m)
		return obj{"decision": "allow"}
	}
}

// promptAnswering runs a prompt, answering the editor's requests with answer.
func promptAnswering(t *testing.T, d *daemon, sid, text string, answer func(*wireMsg) any) gjson.Result {
	t.Helper()
	start := len(d.snapshot())
	id := d.request("session/prompt", obj{"sessionId": sid, "text": text})
	handled := map[int]bool{}
	for {
		m := d.await("the prompt's answer or a request", func(m *wireMsg) bool {
			return m.seq >= start && (m.isResponse() && m.id() == id || m.isRequest() && !handled[m.seq])
		})
		if m.isResponse() {
			return m.get("result")
		}
		handled[m.seq] = true
		d.answer(m, answer(m))
	}
}

// executeAnswering runs tools/execute, answering every request of pid's with answer (nil:
// an error, as an editor that does not know the method).
func executeAnswering(t *testing.T, d *daemon, sid string, calls []obj, answer func(*wireMsg) any) gjson.Result {
	t.Helper()
	start := len(d.snapshot())
	id := d.request("tools/execute", obj{"sessionId": sid, "toolCalls": calls})
	handled := map[int]bool{}
	for {
		m := d.await("the batch's answer or a request", func(m *wireMsg) bool {
			return m.seq >= start && (m.isResponse() && m.id() == id || m.isRequest() && !handled[m.seq])
		})
		if m.isResponse() {
			return m.get("result")
		}
		handled[m.seq] = true
		if answer == nil {
			d.answerError(m, -32601, "method not found")
			continue
		}
		d.answer(m, answer(m))
	}
}

func TestMCPToolSearchThenCall(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	d := startProcess(t, processOptions{})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("s1", "tool_search", obj{"query": "echo text back"})),
		turn(toolCall("e1", "mcp__t__echo", obj{"text": "hello"})),
		turn(text("done")),
		turn(toolCall("e2", "mcp__t__echo", obj{"text": "after the compaction"})),
		turn(text("again")),
	)
	// session/compact's summary, which takes none of the turns
	model["summaries"] = []obj{turn(text("## Goal\nsummary of the search"))}
	model["compaction"] = obj{"keepRecentTokens": 1} // everything before the last prompt can go
	sid := d.newSession(obj{"model": model, "mcpServers": testServers(nil)})
	awaitServer(t, d, "t")
	// Deferred: listed, not active; tool_search is.
	list := d.call("tools/list", obj{"sessionId": sid})
	if e := list.Get(`tools.#(name=="mcp__t__echo")`); e.Get("active").Bool() || e.Get("source").String() != "mcp:t" {
		t.Errorf("mcp__t__echo before the search: %s", e.Raw)
	}
	if e := list.Get(`tools.#(name=="tool_search")`); !e.Get("active").Bool() {
		t.Errorf("tool_search: %s", e.Raw)
	}
	var asked []*wireMsg
	res := promptAnswering(t, d, sid, "echo hello", allowAll(&asked))
	msgs := res.Get("messages").Array()
	search := msgs[2]
	if !strings.Contains(search.Get("content.0.text").String(), "mcp__t__echo") || search.Get("addedToolNames.0").String() != "mcp__t__echo" {
		t.Fatalf("tool_search result: %s", search.Raw)
	}
	if call := msgs[4]; call.Get("isError").Bool() || call.Get("content.0.text").String() != "hello" {
		t.Errorf("mcp__t__echo result: %s", call.Raw)
	}
	// The MCP tool was asked about (MCP tools ask by default), tool_search was not.
	if len(asked) != 1 || asked[0].get("params.toolName").String() != "mcp__t__echo" || asked[0].get("params.always.tool").String() != "mcp__t__echo" {
		t.Errorf("approvals: %v", asked)
	}
	if e := d.call("tools/list", obj{"sessionId": sid}).Get(`tools.#(name=="mcp__t__echo")`); !e.Get("active").Bool() {
		t.Errorf("mcp__t__echo after the search: %s", e.Raw)
	}
	servers := d.call("mcp/servers", obj{})
	if s := servers.Get(`servers.#(name=="t")`); s.Get("status").String() != "ready" || s.Get("tools").Int() < 5 {
		t.Errorf("mcp/servers: %s", servers.Raw)
	}
	// A compaction summarizes the search away from the model's view; the tool it activated
	// stays active (the activation is in the transcript), and the model calls it again.
	if res := d.call("session/compact", obj{"sessionId": sid}); !strings.Contains(res.Get("summary").String(), "summary of the search") {
		t.Fatalf("session/compact: %s", res.Raw)
	}
	if e := d.call("tools/list", obj{"sessionId": sid}).Get(`tools.#(name=="mcp__t__echo")`); !e.Get("active").Bool() {
		t.Errorf("mcp__t__echo after the compaction: %s", e.Raw)
	}
	msgs = promptAnswering(t, d, sid, "echo again", allowAll(&asked)).Get("messages").Array()
	if call := msgs[2]; call.Get("isError").Bool() || call.Get("content.0.text").String() != "after the compaction" {
		t.Errorf("mcp__t__echo after the compaction: %s", call.Raw)
	}
	stopDaemon(t, d)
}

// A prompt sent while the server still starts is offered tool_search, whose search waits
// for the server (held at a gate here) and then finds its tool.
func TestMCPToolSearchWaitsForStartingServer(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startProcess(t, processOptions{})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("s1", "tool_search", obj{"query": "echo text back"})),
		turn(toolCall("e1", "mcp__t__echo", obj{"text": "hello"})),
		turn(text("done")),
	)
	sid := d.newSession(obj{"model": model, "mcpServers": testServers(obj{"args": []string{"-gate", gate}}),
		"permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	id := d.request("session/prompt", obj{"sessionId": sid, "text": "echo hello"})
	// The search has started and waits: the server is held at its gate.
	d.notification("toolExecutionStart", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "s1" })
	if st := d.call("mcp/servers", obj{}).Get(`servers.#(name=="t").status`).String(); st != "starting" {
		t.Fatalf("server status while gated: %q", st)
	}
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	msgs := d.result(id).Get("messages").Array()
	if search := msgs[2]; search.Get("addedToolNames.0").String() != "mcp__t__echo" {
		t.Fatalf("tool_search result: %s", search.Raw)
	}
	if call := msgs[4]; call.Get("isError").Bool() || call.Get("content.0.text").String() != "hello" {
		t.Errorf("mcp__t__echo result: %s", call.Raw)
	}
	stopDaemon(t, d)
}

// A server whose config sets sampling gets the session's model (here a scripted turn); one
// without is declined with the setting to change, as an error result.
func TestMCPSampling(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	d := startProcess(t, processOptions{})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(
		turn(toolCall("m1", "mcp__t__sample", obj{"text": "Answer yes."})),
		turn(text("yes, from the session's model")),
		turn(text("done")),
	)
	allow := obj{"tools": obj{"mcp__t__*": "allow"}}
	sid := d.newSession(obj{"model": model, "mcpServers": testServers(obj{"load": "eager", "sampling": true}), "permissions": allow})
	awaitServer(t, d, "t")
	msgs := d.call("session/prompt", obj{"sessionId": sid, "text": "sample"}).Get("messages").Array()
	if r := msgs[2]; r.Get("isError").Bool() || r.Get("content.0.text").String() != "yes, from the session's model" {
		t.Errorf("sampled result: %s", r.Raw)
	}
	if got := msgs[len(msgs)-1].Get("content.0.text").String(); got != "done" {
		t.Errorf("the model's last answer %q: the sampling call took its own turn", got)
	}
	// Another config of the server (another process), sampling off.
	start := len(d.snapshot())
	sid2 := d.newSession(obj{"mcpServers": obj{"t": obj{"command": "pidtestmcp", "load": "eager", "env": obj{"X": "2"}}}, "permissions": allow})
	d.await("the second server ready", func(m *wireMsg) bool {
		return m.seq >= start && m.method() == "mcp/serverStatus" && m.get("params.status").String() == "ready"
	})
	b := wsExecute(t, d, sid2, "", nil, wsCall("m2", "mcp__t__sample", obj{"text": "Answer yes."}))
	if text := b.res.Get("messages.0.content.0.text").String(); !b.res.Get("messages.0.isError").Bool() || !strings.Contains(text, `"sampling": true`) {
		t.Errorf("sampling off: %s", b.res.Raw)
	}
	stopDaemon(t, d)
}

// roots/list answers the workspace folders; every kind of content maps onto pid's result
// (structuredContent in details); the server's annotations reach beforeToolCall, and a
// readOnlyHint does not skip the question.
func TestMCPRootsContentAndAnnotations(t *testing.T) {
	d, sid, ws := eagerSession(t, obj{"beforeToolCall": true}, obj{"mcpServers": testServers(obj{"load": "eager"}), "permissions": obj{"tools": obj{"mcp__t__roots": "allow", "mcp__t__rich": "allow"}}})
	b := wsExecute(t, d, sid, "", nil, wsCall("r1", "mcp__t__roots", obj{}))
	if got, want := wsText(b.msg(t, "r1")), wsFileURI(ws); got != want {
		t.Errorf("roots: %q, want %q", got, want)
	}
	b = wsExecute(t, d, sid, "", nil, wsCall("x1", "mcp__t__rich", obj{}))
	m := b.msg(t, "x1")
	var kinds []string
	for _, c := range m.Get("content").Array() {
		kinds = append(kinds, c.Get("type").String())
	}
	if strings.Join(kinds, ",") != "text,image,text,text,text,text" || m.Get("content.1.mimeType").String() != "image/png" {
		t.Errorf("rich content kinds %v: %s", kinds, m.Raw)
	}
	text := wsText(m)
	for _, want := range []string{"plain text", "audio/wav", "file:///srv/notes.md", "embedded text", "file:///srv/b.bin"} {
		if !strings.Contains(text, want) {
			t.Errorf("rich text lacks %q: %s", want, text)
		}
	}
	if m.Get("details.count").Int() != 6 || !m.Get("details.ok").Bool() {
		t.Errorf("structuredContent is not in details: %s", m.Get("details").Raw)
	}
	var asked []*wireMsg
	b = wsExecute(t, d, sid, "", func(m *wireMsg) any { asked = append(asked, m); return obj{"decision": "allow"} },
		wsCall("p1", "mcp__t__peek", obj{"text": "k"}))
	if len(asked) != 1 || !asked[0].get("params.annotations.readOnlyHint").Bool() || asked[0].get("params.annotations.title").String() != "Peek" {
		t.Errorf("peek was not asked about with its annotations: %v", asked)
	}
	if wsText(b.msg(t, "p1")) != "k" {
		t.Errorf("peek: %s", b.res.Raw)
	}
	stopDaemon(t, d)
}

// The showMessageRequest fallback says what an MCP server claims about its tool, as a claim.
func TestMCPFallbackQuestionNamesTheHint(t *testing.T) {
	d, sid, _ := eagerSession(t, obj{}, obj{"mcpServers": testServers(obj{"load": "eager"})}) // no beforeToolCall: questions come as window/showMessageRequest
	var question string
	b := wsExecute(t, d, sid, "", func(m *wireMsg) any {
		question = m.get("params.message").String()
		return obj{"title": "Allow"}
	}, wsCall("p1", "mcp__t__peek", obj{"text": "k"}), wsCall("e1", "mcp__t__echo", obj{"text": "e"}))
	if !strings.Contains(question, "pid wants to run mcp__t__") {
		t.Fatalf("question %q", question)
	}
	if len(b.requests) != 2 {
		t.Fatalf("%d questions, want 2", len(b.requests))
	}
	for _, r := range b.requests {
		msg := r.get("params.message").String()
		peek := strings.Contains(msg, "mcp__t__peek")
		if claims := strings.HasSuffix(msg, "(its MCP server says it only reads)"); claims != peek {
			t.Errorf("question %q: the read-only claim shown = %v, want %v", msg, claims, peek)
		}
	}
	stopDaemon(t, d)
}

// Progress becomes $/toolUpdate; $/cancelRequest cancels the MCP request (the server sees it).
func TestMCPProgressAndCancel(t *testing.T) {
	d, sid, _ := eagerSession(t, obj{"beforeToolCall": true}, obj{"mcpServers": testServers(obj{"load": "eager"}), "permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	id := d.request("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{wsCall("h1", "mcp__t__hang", obj{})}})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "h1" })
	d.cancel(id)
	res := d.result(id)
	if !res.Get("aborted").Bool() || !res.Get("messages.0.isError").Bool() {
		t.Errorf("cancelled call: %s", res.Raw)
	}
	// The server saw the cancellation: its cancelled tool says how many hang calls did.
	b := wsExecute(t, d, sid, "", nil, wsCall("c1", "mcp__t__cancelled", obj{}))
	if got := b.res.Get("messages.0.content.0.text").String(); !strings.Contains(got, "1") {
		t.Errorf("the server did not see the cancel: %q", got)
	}
	// Progress through a plain call.
	b = wsExecute(t, d, sid, "", nil, wsCall("p1", "mcp__t__progress", obj{"count": 3}))
	// Throttled as bash's output is: the first at once, the final state before toolEnd.
	n, last := 0, ""
	for _, m := range d.notes(sid) {
		if m.method() == "$/toolUpdate" && m.get("params.toolCallId").String() == "p1" {
			n++
			last = m.get("params.partialResult.content.0.text").String()
		}
	}
	if n < 1 || n > 3 || last != "3/3: step 3\n" || b.res.Get("messages.0.isError").Bool() {
		t.Errorf("progress: %d updates, the last %q, result %s", n, last, b.res.Raw)
	}
	stopDaemon(t, d)
}

// A server that crashes fails the call in flight with its name and stderr; the next call
// restarts it.
func TestMCPCrashAndRestart(t *testing.T) {
	d, sid, _ := eagerSession(t, obj{"beforeToolCall": true}, obj{"mcpServers": testServers(obj{"load": "eager"}), "permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	b := wsExecute(t, d, sid, "", nil, wsCall("x1", "mcp__t__crash", obj{"text": "the disk is on fire"}))
	if text := b.res.Get("messages.0.content.0.text").String(); !b.res.Get("messages.0.isError").Bool() || !strings.Contains(text, "t") || !strings.Contains(text, "the disk is on fire") {
		t.Errorf("call during a crash: %s", b.res.Raw)
	}
	b = wsExecute(t, d, sid, "", nil, wsCall("e2", "mcp__t__echo", obj{"text": "back"}))
	if b.res.Get("messages.0.content.0.text").String() != "back" {
		t.Errorf("call after the crash: %s", b.res.Raw)
	}
	stopDaemon(t, d)
}

// A server's changed tool list shows in tools/list; elicitation goes to the editor.
func TestMCPListChangedAndElicitation(t *testing.T) {
	d, sid, _ := eagerSession(t, obj{"beforeToolCall": true}, obj{"mcpServers": testServers(obj{"load": "eager"}), "permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	wsExecute(t, d, sid, "", nil, wsCall("g1", "mcp__t__grow", obj{"name": "newcomer"}))
	proctest.WaitUntil(t, pollDeadline, "the tool grow added to show in tools/list", func() bool {
		return d.call("tools/list", obj{"sessionId": sid}).Get(`tools.#(name=="mcp__t__newcomer")`).Exists()
	})
	res := executeAnswering(t, d, sid, []obj{wsCall("a1", "mcp__t__ask", obj{"text": "Your name?"})}, func(m *wireMsg) any {
		if m.method() != "elicitation/create" {
			return obj{"decision": "allow"}
		}
		if m.get("params._meta.pid.sessionId").String() != sid || m.get("params._meta.pid.server").String() != "t" ||
			m.get("params._meta.pid.toolCallId").String() != "a1" || m.get("params.message").String() != "Your name?" {
			t.Errorf("elicitation/create params: %s", m.get("params").Raw)
		}
		return obj{"action": "accept", "content": obj{"answer": "Ada"}}
	})
	if got := res.Get("messages.0.content.0.text").String(); !strings.Contains(got, "action=accept") || !strings.Contains(got, "Ada") {
		t.Errorf("ask: %s", res.Raw)
	}
	// An editor that cannot answer declines.
	res = executeAnswering(t, d, sid, []obj{wsCall("a2", "mcp__t__ask", obj{"text": "Again?"})}, nil)
	if got := res.Get("messages.0.content.0.text").String(); !strings.Contains(got, "decline") {
		t.Errorf("ask without an answer: %s", res.Raw)
	}
	stopDaemon(t, d)
}

// An untrusted workspace's servers are listed as untrusted and never start; a reloaded
// session has the MCP tools its transcript activated; no server outlives pid.
func TestMCPUntrustedReloadAndNoOrphans(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, map[string]string{".pid/settings.json": mustJSON(obj{"mcpServers": obj{"shipped": obj{"command": "pidtestmcp"}}})})
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	model := scriptModel(turn(toolCall("s1", "tool_search", obj{"query": "echo"})), turn(text("found")), turn(text("again")))
	sid := d.newSession(obj{"model": model, "mcpServers": testServers(nil)})
	awaitServer(t, d, "t")
	if s := d.call("mcp/servers", obj{}).Get(`servers.#(name=="shipped")`); s.Get("status").String() != "untrusted" {
		t.Errorf("the workspace's server: %s", s.Raw)
	}
	promptAnswering(t, d, sid, "find echo", func(*wireMsg) any { return obj{"decision": "allow"} })
	pids := mcpServerPids(t, d)
	if len(pids) != 1 {
		t.Fatalf("%d pidtestmcp processes, want 1 (the untrusted one must not start)", len(pids))
	}
	stopDaemon(t, d)
	for _, p := range pids {
		if processAlive(p) {
			t.Errorf("the MCP server %d outlived pid", p)
		}
	}
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{"beforeToolCall": true}, ws)
	res := d2.call("session/load", obj{"sessionId": sid})
	if e := res.Get(`tools.#(name=="mcp__t__echo")`); !e.Exists() || !e.Get("active").Bool() {
		t.Errorf("after load mcp__t__echo is %s; want it active, as the transcript activated it", e.Raw)
	}
	awaitServer(t, d2, "t")
	if e := d2.call("tools/list", obj{"sessionId": sid}).Get(`tools.#(name=="mcp__t__echo")`); e.Get("unavailable").Exists() {
		t.Errorf("mcp__t__echo still unavailable once its server is ready: %s", e.Raw)
	}
	stopDaemon(t, d2)
}

// A session's own servers are saved without the literal values of their env: a load
// without mcpServers runs the server with pid's variable of that name; a load that gives
// mcpServers again runs them as given. The token never reaches the session's file.
func TestMCPSavedServersKeepNoSecrets(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	const token = "tok-5f1c0e9a7d2b4c68"
	servers := obj{"t": obj{"command": "pidtestmcp", "load": "eager", "env": obj{"PID_TEST_TOKEN": token, "PID_TEST_REF": "${PID_TEST_REF_SRC:-fallback}"}}}
	allow := obj{"tools": obj{"mcp__t__*": "allow"}}
	whoami := func(d *daemon, sid, id, name string) string {
		t.Helper()
		b := wsExecute(t, d, sid, "", nil, wsCall(id, "mcp__t__whoami", obj{"env": name}))
		return b.msg(t, id).Get("details.env").String()
	}
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{"mcpServers": servers, "permissions": allow, "model": scriptModel(turn(text("hi")))})
	awaitServer(t, d, "t")
	if got := whoami(d, sid, "w1", "PID_TEST_TOKEN"); got != token {
		t.Fatalf("the server's env in its first session: %q", got)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "hello"}) // the file is made at the first message
	stopDaemon(t, d)
	var saved []byte
	filepath.WalkDir(strings.TrimPrefix(env[1], "XDG_STATE_HOME="), func(path string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".jsonl") {
			saved, _ = os.ReadFile(path)
		}
		return nil
	})
	if len(saved) == 0 {
		t.Fatal("no session file")
	}
	if strings.Contains(string(saved), token) || !strings.Contains(string(saved), `${PID_TEST_TOKEN}`) || !strings.Contains(string(saved), `${PID_TEST_REF_SRC:-fallback}`) {
		t.Errorf("the session file keeps the token, or lost the references:\n%s", saved)
	}
	// Loaded without mcpServers: the variable of the same name in pid's environment.
	d2 := startProcess(t, processOptions{Env: append(env, "PID_TEST_TOKEN=from-pids-environment")})
	initWorkspace(d2, obj{"beforeToolCall": true}, ws)
	d2.call("session/load", obj{"sessionId": sid})
	awaitServer(t, d2, "t")
	if got := whoami(d2, sid, "w2", "PID_TEST_TOKEN"); got != "from-pids-environment" {
		t.Errorf("after a load without mcpServers: %q", got)
	}
	if got := whoami(d2, sid, "w3", "PID_TEST_REF"); got != "fallback" {
		t.Errorf("a reference after the load: %q", got)
	}
	stopDaemon(t, d2)
	// Loaded with mcpServers: those, secrets included.
	d3 := startProcess(t, processOptions{Env: env})
	initWorkspace(d3, obj{"beforeToolCall": true}, ws)
	d3.call("session/load", obj{"sessionId": sid, "mcpServers": servers})
	awaitServer(t, d3, "t")
	if got := whoami(d3, sid, "w4", "PID_TEST_TOKEN"); got != token {
		t.Errorf("after a load with mcpServers: %q", got)
	}
	stopDaemon(t, d3)
}

// mcpServerPids returns the pidtestmcp processes whose parent is the daemon.
func mcpServerPids(t *testing.T, d *daemon) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), "pidtestmcp") && processAlive(pid) && parentOf(pid) == d.pid {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf returns the id of a process's parent (0 when it is gone).
func parentOf(pid int) int {
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// processAlive reports whether a process exists and is not a zombie.
func processAlive(pid int) bool {
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// session/close stops the MCP servers of the session that no other session uses: they do
// not run on until pid exits (issue 33). A server another session holds keeps running
// until that session closes too.
func TestMCPServersStopAtSessionClose(t *testing.T) {
	d, first, _ := eagerSession(t, obj{}, obj{"mcpServers": testServers(nil)})
	second := d.newSession(obj{"mcpServers": testServers(nil)})
	pids := mcpServerPids(t, d)
	if len(pids) != 1 {
		t.Fatalf("%d pidtestmcp processes for two sessions naming one server, want 1", len(pids))
	}
	d.call("session/close", obj{"sessionId": first})
	if !processAlive(pids[0]) {
		t.Errorf("closing one of two sessions stopped the server the other one uses")
	}
	d.call("session/close", obj{"sessionId": second})
	proctest.WaitUntil(t, 10*time.Second, "the MCP server of the closed sessions to stop", func() bool { return !processAlive(pids[0]) })
	stopDaemon(t, d)
}

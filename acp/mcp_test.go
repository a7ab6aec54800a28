// Tests of MCP servers over ACP, against package mcp's real test server (pidtestmcp, built
// by TestMain): a stdio server from session/new's mcpServers found with tool_search and
// called (approval, tool_call updates, the server's text in the result, env and cwd), an
// HTTP one with its headers, bad entries refused with invalid params naming them, servers
// shared between sessions, a loaded session running the servers of its load request,
// elicitation through a client that declared it (accept, decline, cancel; two questions of
// one parallel batch, each naming its call) and a decline for one that did not, a client
// gone mid-question, tool hints shown as kind and title but never deciding, sampling for a
// server of _meta.pid.mcpServers, and no server process left once the face has ended.

package acp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/session"
)

// needMCP fails the test when TestMain could not build the test server.
func needMCP(t *testing.T) {
	t.Helper()
	if testMCP == "" {
		t.Fatalf("the test MCP server is missing: %v", testMCPErr)
	}
}

// stdioEntry is an ACP McpServerStdio entry running the test server; env is name, value
// pairs.
func stdioEntry(name string, env ...string) map[string]any {
	vars := []any{}
	for i := 0; i+1 < len(env); i += 2 {
		vars = append(vars, map[string]any{"name": env[i], "value": env[i+1]})
	}
	return map[string]any{"name": name, "command": testMCP, "args": []any{}, "env": vars}
}

// newSessionWith makes a session in cwd with _meta.pid cfg and the given mcpServers.
func (c *client) newSessionWith(cwd, cfg string, servers ...any) string {
	c.t.Helper()
	p := map[string]any{"cwd": cwd, "mcpServers": append([]any{}, servers...)}
	if cfg != "" {
		p["_meta"] = map[string]any{"pid": json.RawMessage(cfg)}
	}
	res, _ := c.result(c.request("session/new", p), nil)
	id := res.Get("sessionId").String()
	if id == "" {
		c.t.Fatalf("session/new gave no sessionId: %s", res.Raw)
	}
	return id
}

// watchReady returns a function that waits until the MCP server name has next become
// ready and the sessions have been told (its tools are then in the catalogs of the sessions
// that use it). Call it before the request that starts the server (session/new, or a load
// with another configuration).
//
// A prompt sent before that can miss the server's tools: tool_search waits for a server
// that is starting, but one whose status has just turned ready, before package mcp's
// OnStatus has reached the sessions, is not waited for, and the search reads the catalog
// of before (the session layer's cache, keyed by a version that OnStatus bumps).
func (c *client) watchReady(name string) func() {
	c.t.Helper()
	ready := make(chan struct{})
	var once sync.Once
	c.srv.mmu.Lock()
	prev := c.srv.mcpSeen
	c.srv.mcpSeen = func(st session.ServerInfo) {
		if prev != nil {
			prev(st)
		}
		if st.Name == name && st.Status == "ready" {
			once.Do(func() { close(ready) })
		}
	}
	c.srv.mmu.Unlock()
	return func() {
		c.t.Helper()
		select {
		case <-ready:
		case <-time.After(hangGuard):
			c.t.Fatalf("the MCP server %s never became ready", name)
		}
	}
}

// allowOnce answers a permission request with allow_once.
func (c *client) allowOnce(m *msg) {
	c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
}

// allowMCP is _meta.pid permissions that let every tool of server t run without asking.
const allowMCP = `"permissions":{"tools":{"mcp__t__*":"allow"}}`

// whoami is what the test server's whoami tool returns.
type whoami struct {
	PID    int    `json:"pid"`
	Cwd    string `json:"cwd"`
	Env    string `json:"env"`
	Header string `json:"header"`
}

// whoamiOf decodes the text of a call's final update.
func whoamiOf(t *testing.T, final gjson.Result) whoami {
	t.Helper()
	var w whoami
	if err := json.Unmarshal([]byte(final.Get("content.0.content.text").String()), &w); err != nil || w.PID == 0 {
		t.Fatalf("whoami result %s: %v", final.Raw, err)
	}
	return w
}

// testServerPids returns the live processes running TestMain's test server binary.
func testServerPids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(string(cmdline), testMCP+"\x00") && processAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
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

// noServersLeft checks, after Serve returned, that the given server processes and every
// other one of the test binary (but those in keep) are gone.
func noServersLeft(t *testing.T, pids []int, keep ...int) {
	t.Helper()
	for _, p := range pids {
		if processAlive(p) {
			t.Errorf("the MCP server process %d outlived the face", p)
		}
	}
	for _, p := range testServerPids() {
		if !containsInt(keep, p) {
			t.Errorf("an MCP server process (%d) outlived the face", p)
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

func TestMCPStdioServerThroughToolSearch(t *testing.T) {
	needMCP(t)
	c := start(t)
	res := c.initialize(nil)
	if res.Get("agentCapabilities.mcpCapabilities").Raw != `{"http":true,"sse":false}` {
		t.Errorf("mcpCapabilities %s", res.Get("agentCapabilities.mcpCapabilities").Raw)
	}
	dir := t.TempDir()
	ready := c.watchReady("t")
	sid := c.newSessionWith(dir, script("",
		toolTurn(call("s1", "tool_search", `{"query":"echo text back"}`), call("s2", "tool_search", `{"query":"whoami"}`)),
		toolTurn(call("e1", "mcp__t__echo", `{"text":"hello from MCP"}`), call("w1", "mcp__t__whoami", `{"env":"PID_ACP_TEST_VAR"}`)),
		textTurn("done")),
		stdioEntry("t", "PID_ACP_TEST_VAR", "set by the editor"))
	ready()
	var asked []*msg
	out, before := c.result(c.prompt(sid, "echo it"), func(m *msg) {
		if m.Method != "session/request_permission" {
			t.Fatalf("unexpected request %s", m.raw)
		}
		asked = append(asked, m)
		c.allowOnce(m)
	})
	if out.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", out.Raw)
	}
	us := updates(t, sid, before)
	// tool_search: a search, found the tool, and asked nobody.
	if s := startOf(us, "s1"); s.Get("kind").String() != "search" || s.Get("title").String() != "Find MCP tools: `echo text back`" {
		t.Errorf("tool_search's tool_call: %s", s.Raw)
	}
	if f := finalOf(us, "s1"); f.Get("status").String() != "completed" || !strings.Contains(f.Get("content.0.content.text").String(), "mcp__t__echo") {
		t.Errorf("tool_search's result: %s", f.Raw)
	}
	// The MCP tool shows as other tools do, and its result carries the server's text.
	e := startOf(us, "e1")
	if e.Get("kind").String() != "other" || e.Get("title").String() != "echo (MCP server t)" || e.Get("rawInput.text").String() != "hello from MCP" {
		t.Errorf("echo's tool_call: %s", e.Raw)
	}
	if got := describeAll(callUpdates(us, "e1")); strings.Join(got, ",") != "tool_call e1 pending,tool_call_update e1 in_progress,tool_call_update e1 completed" {
		t.Errorf("echo's updates: %v", got)
	}
	f := finalOf(us, "e1")
	if f.Get("content.0.content.text").String() != "hello from MCP" || f.Get("rawOutput.content.0.text").String() != "hello from MCP" {
		t.Errorf("echo's result: %s", f.Raw)
	}
	// The server runs in the session's cwd with the entry's env on top of pid's.
	w := whoamiOf(t, finalOf(us, "w1"))
	if w.Env != "set by the editor" || !sameDir(t, w.Cwd, dir) {
		t.Errorf("whoami: %+v, want env %q and cwd %s", w, "set by the editor", dir)
	}
	// Both MCP calls asked, as MCP tools do by default, in source order; tool_search did not.
	var ids []string
	for _, m := range asked {
		ids = append(ids, m.get("params.toolCall.toolCallId").String())
	}
	if strings.Join(ids, ",") != "e1,w1" {
		t.Errorf("permission requests for %v, want e1,w1", ids)
	}
	if len(asked) > 0 && (asked[0].get("params.toolCall.title").String() != "echo (MCP server t)" || asked[0].get("params.toolCall.kind").String() != "other") {
		t.Errorf("permission request: %s", asked[0].raw)
	}
	c.stop()
	noServersLeft(t, []int{w.PID})
}

// callUpdates returns the tool_call and tool_call_update updates of call id.
func callUpdates(us []gjson.Result, id string) []gjson.Result {
	var out []gjson.Result
	for _, u := range us {
		if k := u.Get("sessionUpdate").String(); (k == "tool_call" || k == "tool_call_update") && u.Get("toolCallId").String() == id {
			out = append(out, u)
		}
	}
	return out
}

// startHTTPServer runs the test server over streamable HTTP and returns its URL and
// process id; the test's cleanup stops it.
func startHTTPServer(t *testing.T) (string, int) {
	t.Helper()
	cmd := exec.Command(testMCP, "-http")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		t.Fatalf("the HTTP test server printed %q: %v", line, err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

func TestMCPHTTPServerWithHeaders(t *testing.T) {
	needMCP(t)
	url, httpPid := startHTTPServer(t)
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	ready := c.watchReady("web")
	sid := c.newSessionWith(dir, script("",
		toolTurn(call("s1", "tool_search", `{"query":"whoami"}`)),
		toolTurn(call("w1", "mcp__web__whoami", `{"header":"X-Pid-Token"}`)),
		textTurn("done")),
		map[string]any{"type": "http", "name": "web", "url": url, "headers": []any{map[string]any{"name": "X-Pid-Token", "value": "sesame"}}})
	ready()
	var titles []string
	out, before := c.result(c.prompt(sid, "who are you"), func(m *msg) {
		titles = append(titles, m.get("params.toolCall.title").String())
		c.allowOnce(m)
	})
	if out.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", out.Raw)
	}
	us := updates(t, sid, before)
	w := whoamiOf(t, finalOf(us, "w1"))
	if w.Header != "sesame" || w.PID != httpPid {
		t.Errorf("whoami over HTTP: %+v, want header sesame from process %d", w, httpPid)
	}
	if strings.Join(titles, "|") != "whoami (MCP server web)" {
		t.Errorf("permission requests: %q", titles)
	}
	c.stop()
	noServersLeft(t, nil, httpPid)
}

func TestMCPBadEntriesAreInvalidParams(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	cases := []struct {
		servers []any
		meta    string
		want    []string // in the error message
	}{
		{[]any{map[string]any{"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []any{}}},
			"", []string{`mcpServers[0] ("old")`, `"sse"`, `"http"`}},
		{[]any{stdioEntry("")}, "", []string{"mcpServers[0]", "needs a name"}},
		{[]any{stdioEntry(" ")}, "", []string{"mcpServers[0]", "needs a name"}},
		{[]any{stdioEntry("t"), stdioEntry("u"), stdioEntry("t")}, "", []string{`mcpServers[2] ("t")`, "mcpServers[0] has the same name"}},
		{[]any{map[string]any{"name": "ghost", "command": "pid-no-such-mcp-server", "args": []any{}, "env": []any{}}},
			"", []string{`mcpServers[0] ("ghost")`, "not on pid's PATH"}},
		{[]any{map[string]any{"name": "gone", "command": filepath.Join(dir, "missing"), "args": []any{}, "env": []any{}}},
			"", []string{`mcpServers[0] ("gone")`, "cannot be run"}},
		{[]any{map[string]any{"name": "rel", "command": "./bin/server", "args": []any{}, "env": []any{}}},
			"", []string{`mcpServers[0] ("rel")`, `"./bin/server" cannot be run`}},
		{[]any{map[string]any{"type": "http", "name": "web", "url": "ftp://example.com/mcp", "headers": []any{}}},
			"", []string{`mcpServers[0] ("web")`, "http:// or https://"}},
		{[]any{map[string]any{"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []any{map[string]any{"name": "", "value": "x"}}}},
			"", []string{`mcpServers[0] ("web")`, "headers[0]"}},
		{[]any{stdioEntry("t", "", "x")}, "", []string{`mcpServers[0] ("t")`, "env[0]"}},
		{[]any{map[string]any{"type": "websocket", "name": "ws", "command": testMCP, "args": []any{}, "env": []any{}}},
			"", []string{`mcpServers[0] ("ws")`, `"websocket"`}},
		{[]any{stdioEntry("t")}, `{"mcpServers":{"t":{"command":"pidtestmcp"}}}`, []string{`mcpServers[0] ("t")`, "_meta.pid.mcpServers"}},
	}
	for i, tc := range cases {
		p := map[string]any{"cwd": dir, "mcpServers": tc.servers}
		if tc.meta != "" {
			p["_meta"] = map[string]any{"pid": json.RawMessage(tc.meta)}
		}
		m := c.wantError(c.request("session/new", p), codeInvalidParams)
		for _, w := range tc.want {
			if !strings.Contains(m.Error.Message, w) {
				t.Errorf("case %d: error %q does not say %q", i, m.Error.Message, w)
			}
		}
	}
	// Not an object: the schema forbids it, pid answers it.
	c.requestID(`"x"`, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{"pidtestmcp"}})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams || !strings.Contains(m.Error.Message, "mcpServers[0] must be an object") {
		t.Errorf("a string entry: %s", m.raw)
	}
	// session/load and session/resume check their entries the same way.
	for _, method := range []string{"session/load", "session/resume"} {
		p := map[string]any{"sessionId": "0mx4y7xftz50k0wsj8es1k90m", "cwd": dir,
			"mcpServers": []any{map[string]any{"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []any{}}}}
		if m := c.wantError(c.request(method, p), codeInvalidParams); !strings.Contains(m.Error.Message, `mcpServers[0] ("old")`) {
			t.Errorf("%s: %s", method, m.Error.Message)
		}
	}
	// A relative command found from the session's cwd is fine.
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.Symlink(testMCP, filepath.Join(dir, "bin", "server")); err != nil {
		t.Fatal(err)
	}
	c.newSessionWith(dir, "", map[string]any{"name": "rel", "command": "./bin/server", "args": []any{}, "env": []any{}})
}

// Sessions that name the same server with the same configuration share one process; a
// stdio server of another cwd is another process, running there.
func TestMCPServersSharedAcrossSessions(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(nil)
	dirA, dirB := t.TempDir(), t.TempDir()
	cfg := script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"whoami"}`)),
		toolTurn(call("w1", "mcp__t__whoami", `{}`)),
		textTurn("done"))
	var got []whoami
	for i, dir := range []string{dirA, dirA, dirB} {
		ready := func() {} // the second session finds the first one's server ready
		if i != 1 {
			ready = c.watchReady("t")
		}
		sid := c.newSessionWith(dir, cfg, stdioEntry("t"))
		ready()
		_, before := c.result(c.prompt(sid, "who"), func(m *msg) { t.Fatalf("unexpected request %s", m.raw) })
		got = append(got, whoamiOf(t, finalOf(updates(t, sid, before), "w1")))
	}
	if got[0].PID != got[1].PID {
		t.Errorf("two sessions in one cwd with the same server: processes %d and %d, want one", got[0].PID, got[1].PID)
	}
	if got[2].PID == got[0].PID || !sameDir(t, got[2].Cwd, dirB) {
		t.Errorf("the session in another cwd: %+v, want a process of its own in %s", got[2], dirB)
	}
	c.stop()
	noServersLeft(t, []int{got[0].PID, got[2].PID})
}

// A loaded or resumed session runs the MCP servers of the request (mcpServers and
// _meta.pid.mcpServers), with the env values the client gives now, in place of those saved
// with it (its file keeps no env value); an empty list runs none of its own. A session live
// in this pid already keeps its servers, and a request naming others is told so.
func TestMCPLoadedSessionRunsTheRequestsServers(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	dir := t.TempDir()
	ready := c.watchReady("t")
	sid := c.newSessionWith(dir, script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"whoami"}`)),
		toolTurn(call("w1", "mcp__t__whoami", `{"env":"PID_ACP_TEST_VAR"}`)),
		textTurn("one"),
		toolTurn(call("s2", "tool_search", `{"query":"whoami"}`)),
		toolTurn(call("w2", "mcp__t__whoami", `{"env":"PID_ACP_TEST_VAR"}`)),
		textTurn("two"),
		toolTurn(call("w3", "mcp__t__whoami", `{"env":"PID_ACP_TEST_VAR"}`)),
		textTurn("three")),
		stdioEntry("t", "PID_ACP_TEST_VAR", "the first token"))
	ready()
	_, before := c.result(c.prompt(sid, "who"), nil)
	first := whoamiOf(t, finalOf(updates(t, sid, before), "w1"))
	if first.Env != "the first token" {
		t.Errorf("whoami in the new session: %+v", first)
	}
	// The session file's header keeps the server without the env value.
	files, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "pid", "sessions", "*", sid+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files of %s: %v", sid, files)
	}
	b, _ := os.ReadFile(files[0])
	header, _, _ := strings.Cut(string(b), "\n")
	if saved := gjson.Get(header, "mcpServers.t.env.PID_ACP_TEST_VAR").String(); saved != "${PID_ACP_TEST_VAR}" || strings.Contains(header, "the first token") {
		t.Errorf("the session file's header keeps the env value as %q, want a reference to the variable:\n%s", saved, header)
	}
	noticesOf := func(before []*msg) string {
		var out []string
		for _, u := range updates(t, sid, before) {
			if u.Get("sessionUpdate").String() == "notice" {
				out = append(out, u.Get("title").String())
			}
		}
		return strings.Join(out, "|")
	}

	// Loaded with the editor's servers of now: t runs with the new value (another process:
	// another configuration), and nothing is said about it.
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	p := loadParams(sid, dir)
	p["mcpServers"] = []any{stdioEntry("t", "PID_ACP_TEST_VAR", "the second token")}
	ready = c.watchReady("t")
	if _, before := c.result(c.request("session/load", p), nil); noticesOf(before) != "" {
		t.Errorf("load with servers: notices %q", noticesOf(before))
	}
	ready()
	_, before = c.result(c.prompt(sid, "who now"), nil)
	second := whoamiOf(t, finalOf(updates(t, sid, before), "w2"))
	if second.Env != "the second token" || second.PID == first.PID {
		t.Errorf("whoami after the load: %+v, want the second token from a new process (the first was %d)", second, first.PID)
	}

	// Resumed with no servers: the session has none of its own, and the tool its
	// transcript activated fails, saying why.
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	c.result(c.request("session/resume", loadParams(sid, dir)), nil)
	if got := c.serverStatuses(sid); got != "" {
		t.Errorf("servers after a resume without any: %q", got)
	}
	_, before = c.result(c.prompt(sid, "who then"), nil)
	if f := finalOf(updates(t, sid, before), "w3"); f.Get("status").String() != "failed" || !strings.Contains(f.Get("content.0.content.text").String(), "no MCP server of this session offers it") {
		t.Errorf("w3 without servers: %s", f.Raw)
	}

	// _meta.pid.mcpServers count as in session/new.
	c.result(c.request("session/close", map[string]any{"sessionId": sid}), nil)
	p = loadParams(sid, dir)
	p["_meta"] = map[string]any{"pid": map[string]any{"mcpServers": map[string]any{"u": map[string]any{"command": testMCP}}}}
	c.result(c.request("session/resume", p), nil)
	if got := c.serverStatuses(sid); !strings.HasPrefix(got, "u=") || strings.Contains(got, " ") {
		t.Errorf("servers after a resume with _meta.pid.mcpServers: %q, want u alone", got)
	}

	// Live already: taken as it is, and the other servers of the request are not used.
	p = loadParams(sid, dir)
	p["mcpServers"] = []any{stdioEntry("t")}
	_, before = c.result(c.request("session/resume", p), nil)
	if n := noticesOf(before); !strings.Contains(n, "already active in this pid and keeps its MCP servers (u)") || !strings.Contains(n, "this request (t)") {
		t.Errorf("resume of a live session with other servers: notice %q", n)
	}
	if got := c.serverStatuses(sid); !strings.HasPrefix(got, "u=") {
		t.Errorf("servers after that resume: %q", got)
	}
	c.stop()
	noServersLeft(t, []int{first.PID, second.PID})
}

// askScript is a session whose model finds the ask tool in its first prompt, then calls it
// once per prompt (a1, a2, a3), with MCP tools allowed.
func askScript() string {
	return script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"ask"}`)),
		textTurn("found"),
		toolTurn(call("a1", "mcp__t__ask", `{"text":"Your name?"}`)),
		textTurn("asked"),
		toolTurn(call("a2", "mcp__t__ask", `{"text":"Your age?"}`)),
		textTurn("asked again"),
		toolTurn(call("a3", "mcp__t__ask", `{"text":"Once more?"}`)),
		textTurn("never"))
}

func TestMCPElicitationRoundTrip(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	ready := c.watchReady("t")
	sid := c.newSessionWith(t.TempDir(), askScript(), stdioEntry("t"))
	ready()
	c.result(c.prompt(sid, "find the tool"), func(m *msg) { t.Fatalf("unexpected request %s", m.raw) })
	var questions []*msg
	out, before := c.result(c.prompt(sid, "ask me"), func(m *msg) {
		if m.Method != "elicitation/create" {
			t.Fatalf("unexpected request %s", m.raw)
		}
		questions = append(questions, m)
		c.respond(m, map[string]any{"action": "accept", "content": map[string]any{"answer": "Ada"}})
	})
	if out.Get("stopReason").String() != "end_turn" || len(questions) != 1 {
		t.Fatalf("stopReason %s, %d questions", out.Raw, len(questions))
	}
	q := questions[0]
	for path, want := range map[string]string{
		"params.sessionId": sid, "params.toolCallId": "a1", "params.mode": "form", "params.message": "Your name?",
		"params.requestedSchema.properties.answer.type": "string", "params._meta.pid.server": "t",
	} {
		if got := q.get(path).String(); got != want {
			t.Errorf("elicitation/create %s = %q, want %q", path, got, want)
		}
	}
	if got := finalOf(updates(t, sid, before), "a1").Get("content.0.content.text").String(); got != "action=accept answer=Ada" {
		t.Errorf("the tool's result after accept: %q", got)
	}

	// The client declines.
	_, before = c.result(c.prompt(sid, "ask again"), func(m *msg) {
		c.respond(m, map[string]any{"action": "decline"})
	})
	if got := finalOf(updates(t, sid, before), "a2").Get("content.0.content.text").String(); got != "action=decline answer=<nil>" {
		t.Errorf("the tool's result after decline: %q", got)
	}

	// A prompt cancelled while the question is open: the client is told the request is
	// given up, the tool gets cancel, and the prompt answers cancelled.
	id := c.prompt(sid, "once more")
	var asked *msg
	for asked == nil {
		if m := c.next(); m.Method == "elicitation/create" {
			asked = m
		} else if m.isRequest() || m.Method == "" {
			t.Fatalf("unexpected message %s", m.raw)
		}
	}
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	r, rest := c.until(id, nil)
	if r.Error != nil || gjson.GetBytes(r.Result, "stopReason").String() != "cancelled" {
		t.Errorf("cancelled prompt: %s", r.raw)
	}
	// The question is given up on its own goroutine: its $/cancel_request may come before
	// or after the prompt's answer (nothing else may follow that answer).
	gaveUp := func(m *msg) bool {
		return m.Method == "$/cancel_request" && idKey(json.RawMessage(m.get("params.requestId").Raw)) == idKey(asked.ID)
	}
	found := false
	for _, m := range rest {
		found = found || gaveUp(m)
	}
	for !found {
		m := c.next()
		if !gaveUp(m) {
			t.Fatalf("after the cancelled prompt's answer, waiting for the $/cancel_request of question %s: %s", asked.ID, m.raw)
		}
		found = true
	}
	if f := finalOf(updates(t, sid, rest), "a3"); f.Get("status").String() != "failed" {
		t.Errorf("a3 after the cancel: %s", f.Raw)
	}
}

func TestMCPElicitationDeclinedWithoutCapability(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	ready := c.watchReady("t")
	sid := c.newSessionWith(t.TempDir(), askScript(), stdioEntry("t"))
	ready()
	c.result(c.prompt(sid, "find the tool"), nil)
	// The harness fails the test if pid sends elicitation/create to this client.
	_, before := c.result(c.prompt(sid, "ask me"), func(m *msg) { t.Fatalf("unexpected request %s", m.raw) })
	us := updates(t, sid, before)
	if got := finalOf(us, "a1").Get("content.0.content.text").String(); !strings.HasPrefix(got, "action=decline") {
		t.Errorf("the tool's result without the capability: %q", got)
	}
	var said string
	for _, u := range us {
		if u.Get("sessionUpdate").String() == "notice" {
			said += u.Get("title").String()
		}
	}
	if !strings.Contains(said, "the editor cannot answer questions from MCP servers") || !strings.Contains(said, "MCP server t") {
		t.Errorf("notice %q", said)
	}
}

// A client that goes away while a question is open: nothing hangs, no server is left.
func TestMCPClientGoneMidElicitation(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	ready := c.watchReady("t")
	sid := c.newSessionWith(t.TempDir(), script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"ask"}`)),
		toolTurn(call("w1", "mcp__t__whoami", `{}`), call("a1", "mcp__t__ask", `{"text":"Still there?"}`)),
		textTurn("never")), stdioEntry("t"))
	ready()
	c.prompt(sid, "ask me")
	for {
		m := c.next()
		if m.Method == "elicitation/create" {
			if m.get("params.message").String() != "Still there?" {
				t.Errorf("question %s", m.raw)
			}
			break
		}
		if m.isRequest() || m.Method == "" {
			t.Fatalf("unexpected message %s", m.raw)
		}
	}
	pids := testServerPids()
	if len(pids) != 1 {
		t.Errorf("%d test server processes while the question is open, want 1", len(pids))
	}
	c.stop() // fails the test if Serve does not return
	noServersLeft(t, pids)
}

// Two calls of one server in a parallel batch both ask: the questions come one at a time (a
// server has one open at a time), each names its own call, and each answer reaches the call
// that asked.
func TestMCPElicitationNamesItsCallInABatch(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	ready := c.watchReady("t")
	sid := c.newSessionWith(t.TempDir(), script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"ask"}`)),
		toolTurn(call("a1", "mcp__t__ask", `{"text":"Your name?"}`), call("a2", "mcp__t__ask", `{"text":"Your age?"}`)),
		textTurn("done")), stdioEntry("t"))
	ready()
	answers := map[string]string{"Your name?": "Ada", "Your age?": "36"}
	var open []*msg
	out, before := c.result(c.prompt(sid, "ask twice"), func(m *msg) {
		if m.Method != "elicitation/create" {
			t.Fatalf("unexpected request %s", m.raw)
		}
		// The second question is asked only once the first is answered: answering each as
		// it comes is what lets the second come at all.
		open = append(open, m)
		c.respond(m, map[string]any{"action": "accept", "content": map[string]any{"answer": answers[m.get("params.message").String()]}})
	})
	if out.Get("stopReason").String() != "end_turn" || len(open) != 2 {
		t.Fatalf("stopReason %s, %d questions", out.Raw, len(open))
	}
	byMessage := map[string]string{}
	for _, q := range open {
		byMessage[q.get("params.message").String()] = q.get("params.toolCallId").String()
	}
	if byMessage["Your name?"] != "a1" || byMessage["Your age?"] != "a2" {
		t.Errorf("questions tied to calls %v, want Your name? to a1 and Your age? to a2", byMessage)
	}
	us := updates(t, sid, before)
	for id, want := range map[string]string{"a1": "action=accept answer=Ada", "a2": "action=accept answer=36"} {
		if got := finalOf(us, id).Get("content.0.content.text").String(); got != want {
			t.Errorf("%s's result %q, want %q", id, got, want)
		}
	}
}

// A tool whose server says it is read-only shows as a read, titled as the server says, and
// still asks first: the hints never decide.
func TestMCPToolHintsShowButDoNotDecide(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(nil)
	ready := c.watchReady("t")
	sid := c.newSessionWith(t.TempDir(), script("",
		toolTurn(call("s1", "tool_search", `{"query":"peek"}`)),
		toolTurn(call("p1", "mcp__t__peek", `{"text":"k"}`)),
		textTurn("done")), stdioEntry("t"))
	ready()
	var asked []*msg
	_, before := c.result(c.prompt(sid, "peek"), func(m *msg) {
		if m.Method != "session/request_permission" {
			t.Fatalf("unexpected request %s", m.raw)
		}
		asked = append(asked, m)
		c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}})
	})
	var got []string
	for _, m := range asked {
		got = append(got, m.get("params.toolCall.toolCallId").String()+" "+m.get("params.toolCall.kind").String()+" "+m.get("params.toolCall.title").String())
	}
	if want := "p1 read Peek (MCP server t)"; strings.Join(got, "|") != want {
		t.Errorf("permission requests %q, want %q", got, want)
	}
	us := updates(t, sid, before)
	if p := startOf(us, "p1"); p.Get("kind").String() != "read" || p.Get("title").String() != "Peek (MCP server t)" {
		t.Errorf("peek's tool_call: %s", p.Raw)
	}
	if f := finalOf(us, "p1"); f.Get("status").String() != "failed" {
		t.Errorf("peek ran though the person rejected it: %s", f.Raw)
	}
}

// A server of _meta.pid.mcpServers with "sampling": true gets the session's model (its next
// scripted turn answers); the same server from an ACP entry, which cannot say sampling, is
// declined with the setting to change.
func TestMCPSamplingFromMeta(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	meta := fmt.Sprintf(`"mcpServers":{"t":{"command":%q,"sampling":true}},%s`, testMCP, allowMCP)
	ready := c.watchReady("t")
	sid := c.newSessionWith(dir, script(meta,
		toolTurn(call("s1", "tool_search", `{"query":"sample"}`)),
		toolTurn(call("m1", "mcp__t__sample", `{"text":"Answer yes."}`)),
		textTurn("yes, from the session's model"),
		textTurn("done")))
	ready()
	out, before := c.result(c.prompt(sid, "sample"), func(m *msg) { t.Fatalf("unexpected request %s", m.raw) })
	if out.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", out.Raw)
	}
	us := updates(t, sid, before)
	if f := finalOf(us, "m1"); f.Get("status").String() != "completed" || f.Get("content.0.content.text").String() != "yes, from the session's model" {
		t.Errorf("the sampled result: %s", f.Raw)
	}
	var said []string
	for _, u := range us {
		if u.Get("sessionUpdate").String() == "agent_message_chunk" {
			said = append(said, u.Get("content.text").String())
		}
	}
	if strings.Join(said, "") != "done" {
		t.Errorf("the model said %q, want only its last turn (the sampling answer is the tool's)", said)
	}

	ready = c.watchReady("t") // another configuration: another process
	sid = c.newSessionWith(dir, script(allowMCP,
		toolTurn(call("s1", "tool_search", `{"query":"sample"}`)),
		toolTurn(call("m2", "mcp__t__sample", `{"text":"Answer yes."}`)),
		textTurn("done")), stdioEntry("t"))
	ready()
	_, before = c.result(c.prompt(sid, "sample"), nil)
	if f := finalOf(updates(t, sid, before), "m2"); f.Get("status").String() != "failed" || !strings.Contains(f.Get("content.0.content.text").String(), `"sampling": true`) {
		t.Errorf("sampling from an ACP entry: %s", f.Raw)
	}
}

func TestMCPServersConfigShape(t *testing.T) {
	needMCP(t)
	raw, err := mcpServersConfig([]json.RawMessage{
		json.RawMessage(fmt.Sprintf(`{"name":"t","command":%q,"args":["-x"],"env":[{"name":"A","value":"1"}],"_meta":{"x":1}}`, testMCP)),
		json.RawMessage(`{"type":"http","name":"web","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"Bearer k"}]}`),
	}, json.RawMessage(`{"extra":{"command":"pidtestmcp","load":"eager"}}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"extra":{"command":"pidtestmcp","load":"eager"},"t":{"command":%q,"args":["-x"],"env":{"A":"1"}},"web":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer k"}}}`, testMCP)
	if !sameJSON(gjson.ParseBytes(raw), gjson.Parse(want)) {
		t.Errorf("mcpServers %s\nwant %s", raw, want)
	}
	if raw, err := mcpServersConfig(nil, nil, "/"); raw != nil || err != nil {
		t.Errorf("no servers: %s, %v", raw, err)
	}
}

// serverStatuses returns "name=status" of a live session's MCP servers, sorted by name.
func (c *client) serverStatuses(sid string) string {
	c.t.Helper()
	c.srv.mu.Lock()
	st := c.srv.sessions[sid]
	c.srv.mu.Unlock()
	if st == nil {
		c.t.Fatalf("no live session %s", sid)
	}
	var out []string
	for _, si := range st.ss.MCPServers() {
		out = append(out, si.Name+"="+si.Status)
	}
	return strings.Join(out, " ")
}

// The editor's servers run whatever the cwd's trust; the cwd's own settings' servers only
// once the folder is trusted.
func TestMCPWorkspaceServersFollowTrust(t *testing.T) {
	needMCP(t)
	config := filepath.Join(t.TempDir(), "config")
	t.Setenv("XDG_CONFIG_HOME", config)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".pid"), 0o755)
	shipped := fmt.Sprintf(`{"mcpServers":{"shipped":{"command":%q},"t":{"command":%q,"args":["-stderr","the workspace's t"]}}}`, testMCP, testMCP)
	os.WriteFile(filepath.Join(dir, ".pid", "settings.json"), []byte(shipped), 0o644)

	c := start(t)
	c.initialize(nil)
	ready := c.watchReady("t")
	sid := c.newSessionWith(dir, "", stdioEntry("t"))
	ready()
	if got := c.serverStatuses(sid); got != "shipped=untrusted t=ready" {
		t.Errorf("untrusted cwd: servers %s, want the workspace's not started and the editor's running", got)
	}
	if pids := testServerPids(); len(pids) != 1 {
		t.Errorf("%d server processes in an untrusted cwd, want 1 (the editor's)", len(pids))
	}
	c.stop()

	os.MkdirAll(filepath.Join(config, "pid"), 0o755)
	os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(`{"trustedFolders":["`+dir+`"]}`), 0o644)
	c2 := start(t)
	c2.initialize(nil)
	ready, readyT := c2.watchReady("shipped"), c2.watchReady("t")
	sid = c2.newSessionWith(dir, "", stdioEntry("t"))
	ready()
	readyT()
	if got := c2.serverStatuses(sid); got != "shipped=ready t=ready" {
		t.Errorf("trusted cwd: servers %s, want the workspace's started", got)
	}
	// The editor's t replaces the workspace's t: one process each, and t is the editor's
	// (its command line has no -stderr).
	pids := testServerPids()
	if len(pids) != 2 {
		t.Errorf("%d server processes in a trusted cwd, want 2", len(pids))
	}
	for _, p := range pids {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if strings.Contains(string(cmdline), "-stderr") {
			t.Errorf("the workspace's t runs (process %d) though the editor named a server t", p)
		}
	}
	c2.stop()
	noServersLeft(t, nil)
}

// session/close stops the MCP servers of the session that no other session uses: they do
// not run on until the face ends (issue 33). A server another session holds keeps running
// until that session closes too.
func TestMCPServersStopAtSessionClose(t *testing.T) {
	needMCP(t)
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	before := testServerPids()
	ready := c.watchReady("t")
	first := c.newSessionWith(dir, "", stdioEntry("t"))
	ready()
	second := c.newSessionWith(dir, "", stdioEntry("t"))
	var pids []int
	for _, p := range testServerPids() {
		if !containsInt(before, p) {
			pids = append(pids, p)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d test server processes for two sessions naming one server, want 1", len(pids))
	}
	c.result(c.request("session/close", map[string]any{"sessionId": first}), nil)
	if !processAlive(pids[0]) {
		t.Errorf("closing one of two sessions stopped the server the other one uses")
	}
	c.result(c.request("session/close", map[string]any{"sessionId": second}), nil)
	proctest.WaitUntil(t, 10*time.Second, "the MCP server of the closed sessions to stop", func() bool { return !processAlive(pids[0]) })
	c.stop()
}

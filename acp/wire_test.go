// Tests of the wire rules and the lifecycle: ids echoed exactly, parse errors, unknown and
// extension methods, every method's params decoded by the same rules, notifications never
// answered, initialize's versions and capabilities, session/new's errors.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ping sends a request that is answered at once (an unknown extension method) and returns
// its response, proving that nothing was written between the previous line and it.
func ping(c *client) *msg {
	c.t.Helper()
	id := c.request("_pid/ping", map[string]any{})
	m := c.next()
	if idKey(m.ID) != idKey(id) || m.Error == nil || m.Error.Code != codeMethodNotFound {
		c.t.Fatalf("want the -32601 answer to the ping next, got %s", m.raw)
	}
	return m
}

func TestWireIDsEchoedExactly(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	for _, id := range []string{`7`, `"seven"`, `9007199254740993`, `""`, `"with \"quotes\" and é"`, `-3`, `0`} {
		c.requestID(id, "_pid/nothing", map[string]any{})
		m := c.next()
		if string(m.ID) != id {
			t.Errorf("id %s came back as %s", id, m.ID)
		}
		if m.Error == nil || m.Error.Code != codeMethodNotFound {
			t.Errorf("unknown _ method with id %s: want -32601, got %s", id, m.raw)
		}
	}
	// A known method answers with the same id too, integer or string.
	c.requestID(`"init-2"`, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	if m := c.next(); string(m.ID) != `"init-2"` || m.Error != nil {
		t.Errorf("session/new with a string id: %s", m.raw)
	}
}

func TestWireParseErrorsAndInvalidMessages(t *testing.T) {
	c := start(t)
	for _, tc := range []struct {
		line string
		code int64
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, codeParseError, "null"},
		{`not json at all`, codeParseError, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, codeInvalidRequest, "null"},
		{`42`, codeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":5}`, codeInvalidRequest, "5"},
		{`{"jsonrpc":"1.0","id":6,"method":"initialize","params":{"protocolVersion":1}}`, codeInvalidRequest, "6"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, codeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"initialize"}`, codeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"initialize"}`, codeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":8,"method":12}`, codeInvalidRequest, "8"},
	} {
		c.send(tc.line)
		m := c.next()
		if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id {
			t.Errorf("%s: want error %d with id %s, got %s", tc.line, tc.code, tc.id, m.raw)
		}
	}
	// Blank lines are skipped, and pid keeps reading after all of the above.
	c.send("")
	c.send("   ")
	c.initialize(nil)
}

func TestWireNotificationsAreNeverAnswered(t *testing.T) {
	c := start(t)
	// Before and after initialize: unknown, extension and ACP notifications, for unknown
	// sessions too, and malformed ones.
	lines := []string{
		`{"jsonrpc":"2.0","method":"_pid/hello","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":"bad"}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","method":"unknown/notification"}`,
		`{"jsonrpc":"1.0","method":"session/cancel","params":{}}`,
	}
	for _, l := range lines {
		c.send(l)
	}
	ping(c)
	c.initialize(nil)
	for _, l := range lines {
		c.send(l)
	}
	ping(c)
	// A response nobody waits for is not answered either.
	c.send(`{"jsonrpc":"2.0","id":12345,"result":{}}`)
	ping(c)
}

func TestWireExtensionAndUnknownMethods(t *testing.T) {
	c := start(t)
	// Before initialize, unknown methods are still "method not found".
	c.wantError(c.request("_zed/whatever", map[string]any{"x": 1}), codeMethodNotFound)
	c.initialize(nil)
	for _, m := range []string{"_pid/ping", "_", "session/branch", "nope"} {
		c.wantError(c.request(m, map[string]any{}), codeMethodNotFound)
	}
	// A client's method sent to pid (terminal/create is pid's to send).
	c.wantError(c.request("terminal/create", map[string]any{"sessionId": "s", "command": "/bin/true"}), codeMethodNotFound)
	// authenticate exists; a method pid does not offer is invalid.
	c.wantError(c.request("authenticate", map[string]any{"methodId": "x"}), codeInvalidParams)
}

// Every method's params are decoded by ACP's one rule (decodeParams, the face's Decode), the
// same for each method of the table: params that are no object are -32602 "params must be an
// object", a member of the wrong type is -32602 naming it, and absent or null params are {}
// (the method's own check answers). A notification's bad params are dropped unanswered.
func TestWireParamsDecodedAlike(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	// A member of the wrong type for each method, and how the answer names it.
	wrongType := map[string][2]string{
		"initialize":   {`{"protocolVersion":1,"clientCapabilities":{"terminal":"yes"}}`, "clientCapabilities.terminal must not be a JSON string"},
		"authenticate": {`{"methodId":1}`, "methodId must not be a JSON number"},
		"session/new":  {`{"cwd":1}`, "cwd must not be a JSON number"},
		"session/list": {`{"cwd":true}`, "cwd must not be a JSON bool"},
	}
	names := slices.Sorted(maps.Keys(methodTable))
	if len(names) < 18 {
		t.Fatalf("the method table has %d methods: %v", len(names), names)
	}
	n := 0
	for _, name := range names {
		for _, bad := range []string{`[]`, `[{"sessionId":"x"}]`, `"x"`, `7`, `true`} {
			n++
			id := strconv.Itoa(1000 + n)
			c.requestID(id, name, json.RawMessage(bad))
			if m, _ := c.until(json.RawMessage(id), nil); m.Error == nil || m.Error.Code != codeInvalidParams || m.Error.Message != "Invalid params: params must be an object" {
				t.Errorf("%s with params %s: want -32602 \"Invalid params: params must be an object\", got %s", name, bad, m.raw)
			}
		}
		wt, ok := wrongType[name]
		if !ok {
			wt = [2]string{`{"sessionId":1}`, "sessionId must not be a JSON number"}
		}
		n++
		id := strconv.Itoa(1000 + n)
		c.requestID(id, name, json.RawMessage(wt[0]))
		if m, _ := c.until(json.RawMessage(id), nil); m.Error == nil || m.Error.Code != codeInvalidParams || m.Error.Message != "Invalid params: "+wt[1] {
			t.Errorf("%s with params %s: want -32602 \"Invalid params: %s\", got %s", name, wt[0], wt[1], m.raw)
		}
	}
	// Absent and null params are {}: session/prompt's own check answers.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"absent","method":"session/prompt"}`,
		`{"jsonrpc":"2.0","id":"null","method":"session/prompt","params":null}`,
	} {
		c.send(line)
		if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams || m.Error.Message != "Invalid params: sessionId is required" {
			t.Errorf("%s: want -32602 \"Invalid params: sessionId is required\", got %s", line, m.raw)
		}
	}
	// Notifications with params that are no object, or of the wrong type: dropped, never
	// answered, and the connection serves on.
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/cancel","params":[1]}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":1}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":"x"}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}`,
	} {
		c.send(line)
	}
	ping(c)
}

func TestInitializeVersionsAndCapabilities(t *testing.T) {
	for _, v := range []int{1, 2, 99, 65535, 0} {
		c := start(t)
		res, _ := c.result(c.request("initialize", map[string]any{"protocolVersion": v, "clientCapabilities": map[string]any{}}), nil)
		if got := res.Get("protocolVersion"); got.Raw != "1" {
			t.Errorf("client version %d: protocolVersion %s, want the integer 1", v, got.Raw)
		}
		if v != 1 {
			continue
		}
		checks := map[string]string{
			"agentInfo.name": "pid", "agentInfo.version": "test", "agentCapabilities.loadSession": "true",
			"agentCapabilities.promptCapabilities.audio": "false", "agentCapabilities.mcpCapabilities.http": "true",
			"agentCapabilities.mcpCapabilities.sse": "false", "authMethods.#": "1", "authMethods.0.type": "agent",
		}
		for path, want := range checks {
			if got := res.Get(path).String(); got != want {
				t.Errorf("%s = %q, want %q", path, got, want)
			}
		}
		// Saved sessions: list, resume, close and delete; fork (unstable) and
		// additionalDirectories.
		if got := res.Get("agentCapabilities.sessionCapabilities").Raw; got != `{"list":{},"resume":{},"close":{},"delete":{},"fork":{},"additionalDirectories":{}}` {
			t.Errorf("sessionCapabilities %s", got)
		}
		// initialize again (as the SDK's agents allow) gives the same answer.
		again, _ := c.result(c.request("initialize", map[string]any{"protocolVersion": 1}), nil)
		if again.Raw != res.Raw {
			t.Errorf("second initialize: %s, first: %s", again.Raw, res.Raw)
		}
	}
	c := start(t)
	c.wantError(c.request("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}), codeInvalidRequest)
	c.requestID("1", "initialize", map[string]any{})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("initialize without protocolVersion: %s", m.raw)
	}
	c.requestID("2", "initialize", map[string]any{"protocolVersion": "1.0"})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("initialize with a string version: %s", m.raw)
	}
	c.initialize(nil)
}

func TestSessionNew(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	dir := t.TempDir()
	// The answer is the session id, its modes and the config options (select ones only: no
	// boolean option, which a client must declare it takes).
	res, _ := c.result(c.request("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}), nil)
	if keys := res.Get("@keys").String(); keys != `["sessionId","modes","configOptions"]` || res.Get(`configOptions.#(type!="select")`).Exists() {
		t.Errorf("session/new answered %s", res.Raw)
	}
	ids := map[string]bool{res.Get("sessionId").String(): true}
	for range 3 {
		id := c.newSession(dir, "")
		if ids[id] {
			t.Errorf("session id %q given twice", id)
		}
		ids[id] = true
	}
	bad := []map[string]any{
		{"mcpServers": []any{}},
		{"cwd": "", "mcpServers": []any{}},
		{"cwd": "relative/dir", "mcpServers": []any{}},
		{"cwd": dir + "/does-not-exist", "mcpServers": []any{}},
		{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"pid": map[string]any{"toolExecution": "sideways"}}},
		{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"pid": map[string]any{"model": "not an object"}}},
		{"cwd": 12, "mcpServers": []any{}},
	}
	for _, p := range bad {
		b, _ := json.Marshal(p)
		c.requestID(`"bad"`, "session/new", p)
		m := c.next()
		if m.Error == nil || m.Error.Code != codeInvalidParams {
			t.Errorf("session/new %s: want -32602, got %s", b, m.raw)
		}
	}
	c.requestID(`"params"`, "session/new", []any{})
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("session/new with array params: %s", m.raw)
	}
}

func TestServeEndsWhenInputCloses(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	c.closeInput()
	select {
	case code := <-c.exit:
		c.exit <- code // for the cleanup
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	case <-time.After(hangGuard):
		t.Fatal("Serve did not return")
	}
}

func TestWireOutputIsValidUTF8(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	// Invalid UTF-8 inside a JSON string reaches the tool call's raw arguments unchanged
	// (they are kept as raw JSON); pid must still write valid UTF-8.
	cfg := script(`"scriptedTools":[{"name":"echo","steps":[{"result":{"content":[{"type":"text","text":"ok"}]}}]}]`,
		toolTurn(call("u1", "echo", "{\"s\":\"bad \xff\xfe bytes\"}")), textTurn("done"))
	p := `{"jsonrpc":"2.0","id":"s","method":"session/new","params":{"cwd":` + quote(t.TempDir()) + `,"mcpServers":[],"_meta":{"pid":` + cfg + `}}}`
	c.mu.Lock()
	c.ours[idKey(json.RawMessage(`"s"`))] = "session/new"
	c.mu.Unlock()
	c.send(p)
	m := c.next()
	if m.Error != nil {
		t.Fatalf("session/new: %s", m.raw)
	}
	sid := m.get("result.sessionId").String()
	res, before := c.result(c.prompt(sid, "go"), nil)
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("stopReason %s", res.Raw)
	}
	found := false
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() == "tool_call" {
			found = strings.Contains(u.Get("rawInput.s").String(), "\uFFFD")
		}
	}
	if !found {
		t.Errorf("the tool call's rawInput did not carry U+FFFD for the bad bytes")
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeExitCodes(t *testing.T) {
	if code := Serve(context.Background(), brokenReader{}, io.Discard, Options{}); code != 1 {
		t.Errorf("a failing input: exit code %d, want 1", code)
	}
	if code := Serve(context.Background(), strings.NewReader(`{"jsonrpc":"2.0","method":"x"}`), io.Discard, Options{}); code != 0 {
		t.Errorf("an input that ends: exit code %d, want 0", code)
	}
	// Cancelling ctx closes the input (a pipe here, stdin in the daemon) and ends Serve.
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Serve(ctx, r, io.Discard, Options{}) }()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("cancelled: exit code %d, want 0", code)
		}
	case <-time.After(hangGuard):
		t.Fatal("Serve did not return after its context ended")
	}
}

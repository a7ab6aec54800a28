// This file is the test harness: an ACP client that talks to Serve in process over pipes
// (internal/pidtest's Conn, in lines), checks the wire rules on every line pid writes and
// validates every message of both directions against the $defs of ACP's v1 schema
// (testdata/schema-v1.json, the SDK's own).
// It also holds the package's TestMain (goleak; settings and remembered answers in a temp
// folder).

package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/pidtest"
)

// hangGuard bounds every wait. It is not a timed assertion: a test that hits it has hung.
const hangGuard = 20 * time.Second

// testMCP is the path of package mcp's test MCP server (pidtestmcp), which TestMain builds
// into its temp folder; "" when the build failed (testMCPErr says why).
var (
	testMCP    string
	testMCPErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-acp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp tests: temp dir:", err)
		os.Exit(2)
	}
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	bin := filepath.Join(dir, "bin", "pidtestmcp")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp").CombinedOutput(); err != nil {
		testMCPErr = fmt.Errorf("go build pidtestmcp: %v\n%s", err, out)
	} else {
		testMCP = bin
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

var (
	schemaOnce sync.Once
	schemaErr  error
	schemaDefs = map[string]*jsonschema.Schema{}
	schemaMu   sync.Mutex
	schemaComp *jsonschema.Compiler
)

const schemaURL = "mem://acp/schema-v1.json"

// def returns the compiled $defs/name of ACP's v1 schema.
func def(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		f, err := os.Open("testdata/schema-v1.json")
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		schemaComp = jsonschema.NewCompiler()
		schemaErr = schemaComp.AddResource(schemaURL, doc)
	})
	if schemaErr != nil {
		t.Fatalf("ACP schema: %v", schemaErr)
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemaDefs[name]; s != nil {
		return s
	}
	s, err := schemaComp.Compile(schemaURL + "#/$defs/" + name)
	if err != nil {
		t.Fatalf("ACP schema: $defs/%s: %v", name, err)
	}
	schemaDefs[name] = s
	return s
}

// validate checks raw JSON against $defs/name.
func validate(t testing.TB, name string, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := def(t, name).Validate(v); err != nil {
		return fmt.Errorf("not a valid %s: %v\n%s", name, err, raw)
	}
	return nil
}

// Which $defs the params and results of each method must satisfy.
var (
	requestDefs = map[string]string{
		"initialize": "InitializeRequest", "authenticate": "AuthenticateRequest", "session/new": "NewSessionRequest", "session/prompt": "PromptRequest",
		"session/load": "LoadSessionRequest", "session/resume": "ResumeSessionRequest", "session/list": "ListSessionsRequest",
		"session/close": "CloseSessionRequest", "session/delete": "DeleteSessionRequest",
		"session/request_permission": "RequestPermissionRequest",
		"fs/read_text_file":          "ReadTextFileRequest", "fs/write_text_file": "WriteTextFileRequest",
		"elicitation/create": "CreateElicitationRequest",
		"terminal/create":    "CreateTerminalRequest", "terminal/output": "TerminalOutputRequest",
		"terminal/wait_for_exit": "WaitForTerminalExitRequest", "terminal/kill": "KillTerminalRequest",
		"terminal/release":          "ReleaseTerminalRequest",
		"session/set_config_option": "SetSessionConfigOptionRequest",
		"session/set_mode":          "SetSessionModeRequest",
		// session/fork is unstable: the stable schema has no $defs for it. Its request has
		// the members of ResumeSessionRequest (sessionId, cwd, additionalDirectories,
		// mcpServers, _meta), its response those of NewSessionResponse.
		"session/fork": "ResumeSessionRequest",
	}
	responseDefs = map[string]string{
		"initialize": "InitializeResponse", "authenticate": "AuthenticateResponse", "session/new": "NewSessionResponse", "session/prompt": "PromptResponse",
		"session/load": "LoadSessionResponse", "session/resume": "ResumeSessionResponse", "session/list": "ListSessionsResponse",
		"session/close": "CloseSessionResponse", "session/delete": "DeleteSessionResponse",
		"session/request_permission": "RequestPermissionResponse",
		"fs/read_text_file":          "ReadTextFileResponse", "fs/write_text_file": "WriteTextFileResponse",
		"elicitation/create": "CreateElicitationResponse",
		"terminal/create":    "CreateTerminalResponse", "terminal/output": "TerminalOutputResponse",
		"terminal/wait_for_exit": "WaitForTerminalExitResponse", "terminal/kill": "KillTerminalResponse",
		"terminal/release":          "ReleaseTerminalResponse",
		"session/set_config_option": "SetSessionConfigOptionResponse",
		"session/set_mode":          "SetSessionModeResponse",
		"session/fork":              "NewSessionResponse",
	}
	notificationDefs = map[string]string{
		"session/update": "SessionNotification", "session/cancel": "CancelNotification",
		"$/cancel_request": "CancelRequestNotification",
	}
)

// msg is one line pid wrote.
type msg struct {
	raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m *msg) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *msg) isNotification() bool { return m.Method != "" && m.ID == nil }
func (m *msg) get(path string) gjson.Result {
	return gjson.Get(m.raw, path)
}

// update returns the session/update's update member ("" kind when m is no update).
func (m *msg) update() (kind string, u gjson.Result) {
	if m.Method != "session/update" {
		return "", gjson.Result{}
	}
	u = m.get("params.update")
	return u.Get("sessionUpdate").String(), u
}

// client is an ACP client over pipes to Serve, running in process. Its reading is a
// pidtest.Conn in lines, which runs check on every line in the order pid wrote them.
type client struct {
	t      *testing.T
	w      *io.PipeWriter
	conn   *pidtest.Conn
	exit   chan int
	stderr *syncBuffer
	srv    *server // the server Serve would run, for tests of its parts

	mu     sync.Mutex
	nextID int
	ours   map[string]string // ids of our requests -> method
	theirs map[string]string // ids of pid's requests -> method
	closed bool
	read   int // the Seq of the next message next returns
	// declared holds the client methods this client declared in initialize (fs/*,
	// elicitation/create).
	declared map[string]bool
	// commands makes next return available_commands_update; by default it skips them
	// (pid sends them after session/new, load and resume: commands_test.go checks them).
	commands bool
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer = pidtest.Buffer

// start runs Serve on pipes and returns the client. The test's cleanup closes the input
// and waits for Serve to return.
func start(t *testing.T) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, w: inW, exit: make(chan int, 1), stderr: &syncBuffer{},
		ours: map[string]string{}, theirs: map[string]string{}}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c.srv = newServer(inR, outW, Options{Version: "test", Log: log})
	go func() {
		code := c.srv.serve(context.Background(), inR)
		outW.Close()
		c.exit <- code
	}()
	c.conn = pidtest.NewConn(inW, outR, pidtest.ConnOptions{Framing: pidtest.Lines, HangGuard: hangGuard,
		Check: func(line []byte) error {
			_, err := c.check(line)
			return err
		}})
	t.Cleanup(func() {
		c.closeInput()
		select {
		case <-c.exit:
		case <-time.After(hangGuard):
			t.Errorf("Serve did not return after its input closed")
		}
		<-c.conn.Done()
		if err := c.conn.Err(); err != nil {
			t.Errorf("wire: %v", err)
		}
		if t.Failed() {
			t.Logf("pid's log:\n%s", c.stderr.String())
		}
	})
	return c
}

// stop ends the connection as a client that quits does (pid's input closes) and waits
// until Serve has returned: its sessions are closed and their locks released, as when the
// process ends. The test's cleanup still sees the exit.
func (c *client) stop() {
	c.t.Helper()
	c.closeInput()
	select {
	case code := <-c.exit:
		c.exit <- code
	case <-time.After(hangGuard):
		c.t.Fatalf("Serve did not return after its input closed")
	}
}

func (c *client) closeInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.w.Close()
	}
}

// check applies the wire rules to one line pid wrote and validates it against the schema.
func (c *client) check(line []byte) (*msg, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("a line is not valid UTF-8: %q", line)
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("a line is not one JSON object: %v: %s", err, line)
	}
	m.raw = string(line)
	var members map[string]json.RawMessage
	json.Unmarshal(line, &members)
	if string(members["jsonrpc"]) != `"2.0"` {
		return &m, fmt.Errorf(`jsonrpc is not "2.0": %s`, line)
	}
	switch {
	case m.isRequest():
		c.mu.Lock()
		c.theirs[idKey(m.ID)] = m.Method
		c.mu.Unlock()
		d, ok := requestDefs[m.Method]
		c.mu.Lock()
		declared := c.declared[m.Method]
		c.mu.Unlock()
		if !ok || (strings.HasPrefix(m.Method, "fs/") || m.Method == "elicitation/create") && !declared {
			return &m, fmt.Errorf("pid sent a request it must not send (not declared by the client): %s", line)
		}
		return &m, validate(c.t, d, m.Params)
	case m.isNotification():
		d, ok := notificationDefs[m.Method]
		if !ok || m.Method != "session/update" && m.Method != "$/cancel_request" {
			return &m, fmt.Errorf("pid sent an unexpected notification: %s", line)
		}
		if m.Method == "$/cancel_request" {
			// pid gives up only a request of its own.
			c.mu.Lock()
			_, ours := c.theirs[idKey(json.RawMessage(m.get("params.requestId").Raw))]
			c.mu.Unlock()
			if !ours {
				return &m, fmt.Errorf("pid cancelled a request it never sent: %s", line)
			}
		}
		return &m, validate(c.t, d, m.Params)
	}
	_, hasResult := members["result"]
	_, hasError := members["error"]
	_, hasID := members["id"]
	if !hasID || hasResult == hasError {
		return &m, fmt.Errorf("a response must have an id and exactly one of result and error: %s", line)
	}
	if hasError {
		if err := validate(c.t, "Error", members["error"]); err != nil {
			return &m, err
		}
		if gjson.GetBytes(line, "error.code").Type != gjson.Number || gjson.GetBytes(line, "error.message").Type != gjson.String {
			return &m, fmt.Errorf("an error needs an integer code and a string message: %s", line)
		}
		return &m, nil
	}
	c.mu.Lock()
	method := c.ours[idKey(m.ID)]
	c.mu.Unlock()
	d, ok := responseDefs[method]
	if !ok && strings.HasPrefix(method, "_pid/") {
		// pid's extension methods: the schema has no $defs for them; a result is an object.
		if !gjson.GetBytes(line, "result").IsObject() {
			return &m, fmt.Errorf("an extension method's result must be an object: %s", line)
		}
		return &m, nil
	}
	if !ok {
		return &m, fmt.Errorf("a result for a request that cannot succeed (%q): %s", method, line)
	}
	return &m, validate(c.t, d, m.Result)
}

// send writes one raw line.
func (c *client) send(line string) {
	c.t.Helper()
	if err := c.conn.Send([]byte(line)); err != nil {
		c.t.Fatalf("writing to pid: %v", err)
	}
}

// sendJSON writes v as one line, validated against $defs/name when name is set.
func (c *client) sendJSON(name string, v any, params any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if name != "" {
		p, _ := json.Marshal(params)
		if err := validate(c.t, name, p); err != nil {
			c.t.Fatalf("the test sends an invalid message: %v", err)
		}
	}
	c.send(string(b))
}

// request sends a request with a fresh integer id and returns the id. Params of ACP's own
// methods are validated first.
func (c *client) request(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := json.RawMessage(strconv.Itoa(c.nextID))
	c.ours[idKey(id)] = method
	c.mu.Unlock()
	c.sendJSON(requestDefs[method], map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, params)
	return id
}

// requestID sends a request with the given raw id (not validated).
func (c *client) requestID(id, method string, params any) {
	c.t.Helper()
	c.mu.Lock()
	c.ours[idKey(json.RawMessage(id))] = method
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, p))
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	c.sendJSON(notificationDefs[method], map[string]any{"jsonrpc": "2.0", "method": method, "params": params}, params)
}

// respond answers one of pid's requests, validated against its response $defs.
func (c *client) respond(m *msg, result any) {
	c.t.Helper()
	c.sendJSON(responseDefs[m.Method], map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}, result)
}

// next returns the next line pid wrote, failing the test if none comes.
func (c *client) next() *msg {
	c.t.Helper()
	for {
		m := c.nextAny()
		c.mu.Lock()
		keep := c.commands
		c.mu.Unlock()
		if kind, _ := m.update(); kind != "available_commands_update" || keep {
			return m
		}
	}
}

// nextAny returns pid's next message, whatever it is.
func (c *client) nextAny() *msg {
	c.t.Helper()
	c.mu.Lock()
	i := c.read
	c.mu.Unlock()
	raw, err := c.conn.Message(i)
	if errors.Is(err, pidtest.ErrEnded) {
		c.t.Fatalf("pid closed its output")
	}
	if err != nil {
		c.t.Fatalf("timed out waiting for a message from pid: %v", err)
	}
	c.mu.Lock()
	c.read = i + 1
	c.mu.Unlock()
	var m msg
	json.Unmarshal(raw.Raw, &m) // the Conn keeps JSON only
	m.raw = string(raw.Raw)
	return &m
}

// quiet asserts that pid writes nothing for a while (used after a response, where a line
// would be an update after the prompt's answer).
func (c *client) quiet(d time.Duration) {
	c.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		changed := c.conn.Changed()
		c.mu.Lock()
		i := c.read
		keep := c.commands
		c.mu.Unlock()
		msgs := c.conn.Messages()
		for _, raw := range msgs[min(i, len(msgs)):] {
			var m msg
			json.Unmarshal(raw.Raw, &m)
			m.raw = string(raw.Raw)
			if kind, _ := m.update(); kind != "available_commands_update" || keep {
				c.t.Fatalf("pid wrote after the point where nothing may follow: %s", raw)
			}
		}
		if c.conn.Ended() {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		}
	}
}

// until collects pid's messages up to the response to id, which it returns with what came
// before it. pid's requests are passed to onRequest (nil: not answered now).
func (c *client) until(id json.RawMessage, onRequest func(*msg)) (*msg, []*msg) {
	c.t.Helper()
	var before []*msg
	for {
		m := c.next()
		if m.Method == "" && idKey(m.ID) == idKey(id) {
			return m, before
		}
		before = append(before, m)
		if m.isRequest() && onRequest != nil {
			onRequest(m)
		}
	}
}

// result returns the result of the response to id, failing on an error response.
func (c *client) result(id json.RawMessage, onRequest func(*msg)) (gjson.Result, []*msg) {
	c.t.Helper()
	r, before := c.until(id, onRequest)
	if r.Error != nil {
		c.t.Fatalf("request %s failed: %s", id, r.raw)
	}
	return gjson.Parse(string(r.Result)), before
}

// wantError waits for the response to id and checks its code.
func (c *client) wantError(id json.RawMessage, code int64) *msg {
	c.t.Helper()
	r, _ := c.until(id, nil)
	if r.Error == nil || r.Error.Code != code {
		c.t.Fatalf("want error %d for request %s, got %s", code, id, r.raw)
	}
	return r
}

// initialize runs initialize with the given client capabilities.
func (c *client) initialize(caps map[string]any) gjson.Result {
	c.t.Helper()
	p := map[string]any{"protocolVersion": 1}
	if caps != nil {
		p["clientCapabilities"] = caps
		fs, _ := caps["fs"].(map[string]any)
		el, _ := caps["elicitation"].(map[string]any)
		c.mu.Lock()
		c.declared = map[string]bool{"fs/read_text_file": fs["readTextFile"] == true, "fs/write_text_file": fs["writeTextFile"] == true,
			"elicitation/create": el["form"] != nil}
		c.mu.Unlock()
	}
	res, _ := c.result(c.request("initialize", p), nil)
	return res
}

// newSession makes a session in cwd with _meta.pid set to cfg (a JSON object).
func (c *client) newSession(cwd, cfg string) string {
	c.t.Helper()
	p := map[string]any{"cwd": cwd, "mcpServers": []any{}}
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

// prompt sends a text prompt and returns its id.
func (c *client) prompt(sessionID, text string) json.RawMessage {
	c.t.Helper()
	return c.request("session/prompt", map[string]any{"sessionId": sessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

// updates returns the session/update messages among ms, checking their sessionId; the
// usage_update after each model call is left out (usageUpdates has them).
func updates(t *testing.T, sessionID string, ms []*msg) []gjson.Result {
	t.Helper()
	var out []gjson.Result
	for _, m := range ms {
		if kind, u := m.update(); kind != "" && kind != "usage_update" {
			if got := m.get("params.sessionId").String(); got != sessionID {
				t.Errorf("update for session %q carries sessionId %q", sessionID, got)
			}
			out = append(out, u)
		}
	}
	return out
}

// script returns a session config with a scripted model playing turns (JSON objects) and
// the given extra members (JSON object members, e.g. `"scriptedTools":[...]`).
func script(extra string, turns ...string) string {
	cfg := `{"model":{"provider":"script","turns":[` + strings.Join(turns, ",") + `]}`
	if extra != "" {
		cfg += "," + extra
	}
	return cfg + "}"
}

// toolTurn is a scripted turn calling tools; each call is `id name {args}`-shaped JSON.
func toolTurn(calls ...string) string {
	return `{"content":[` + strings.Join(calls, ",") + `]}`
}

func call(id, name, args string) string {
	return fmt.Sprintf(`{"type":"toolCall","id":%q,"name":%q,"arguments":%s}`, id, name, args)
}

func textTurn(text string) string {
	b, _ := json.Marshal(text)
	return `{"content":[{"type":"text","text":` + string(b) + `}]}`
}

// This file tests the daemon's robustness and protocol edge cases in process (rpc.Serve over
// io.Pipe): framing and JSON-RPC errors, the lifecycle, ids and params, concurrency and
// ordering, cancellation, editors that fail, and failing tools. Orders are fixed with gates
// (a scripted tool's waitForEnd step, or an approval request the test holds unanswered),
// never with sleeps.

package rpc

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"
)

// nullIDErrors returns the error responses with id null received before message upTo.
func nullIDErrors(d *daemon, upTo *wireMsg) []*wireMsg {
	var out []*wireMsg
	for _, m := range d.snapshot() {
		if m.seq >= upTo.seq {
			break
		}
		if m.isResponse() && m.id() == "null" && m.get("error").Exists() {
			out = append(out, m)
		}
	}
	return out
}

// responseTo reports whether a response to id was received.
func responseTo(d *daemon, id string) *wireMsg {
	for _, m := range d.snapshot() {
		if m.isResponse() && m.id() == id {
			return m
		}
	}
	return nil
}

// expectFrameErrors sends raw, which must make the daemon answer with -32700 and id null
// (once per frame, or per stretch of data outside a frame), then a session/new that must be
// answered; the request with id 1 that raw may hold must not be.
func expectFrameErrors(t *testing.T, d *daemon, raw string) {
	t.Helper()
	d.write([]byte(raw))
	next := d.requestID("2", "session/new", omit)
	resp := d.response(next)
	if resp.get("error").Exists() {
		t.Fatalf("the request after the bad frame failed: %s", resp)
	}
	errs := nullIDErrors(d, resp)
	if len(errs) == 0 {
		t.Fatalf("want an error response with id null before the next response; received:\n%s", d.dump())
	}
	for i, e := range errs {
		if got := e.get("error.code").Int(); got != codeParseError {
			t.Errorf("error %d: code %d, want %d: %s", i, got, codeParseError, e)
		}
		if e.get("error.message").String() == "" {
			t.Errorf("error %d has no message: %s", i, e)
		}
		if e.get("jsonrpc").String() != "2.0" {
			t.Errorf("error %d lacks jsonrpc 2.0: %s", i, e)
		}
	}
	if m := responseTo(d, "1"); m != nil {
		t.Errorf("the unreadable message was answered: %s", m)
	}
}

func TestFrameBodyNotJSON(t *testing.T) {
	for name, body := range map[string]string{
		"truncated": `{"jsonrpc":"2.0","id":1,"method":"session/new"`,
		"garbage":   `not json at all`,
		"trailing":  `{"jsonrpc":"2.0","id":1,"method":"session/new"} x`,
		"empty":     ``,
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			expectFrameErrors(t, d, "Content-Length: "+itoa(len(body))+"\r\n\r\n"+body)
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestFrameWithoutContentLength(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"session/new"}`
	for name, raw := range map[string]string{
		"other header":          "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body,
		"no header at all":      "\r\nhello\r\n\r\n" + body,
		"bad Content-Length":    "Content-Length: abc\r\n\r\n" + body,
		"negative length":       "Content-Length: -5\r\n\r\n" + body,
		"lower case, bad":       "content-length: 1x\r\n\r\n" + body,
		"garbage then newline":  "}}}garbage{{{\r\n\r\n" + body + "\r\n",
		"body without a header": body,
		"junk line":             "junk\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			expectFrameErrors(t, d, raw)
			// And the connection is still in step: two more requests, answered in order.
			d.call("session/new", omit)
			d.call("session/new", omit)
		})
	}
	t.Run("malformed header line with a length", func(t *testing.T) {
		// The length is known, so the frame is skipped exactly and reported.
		d := startInProcess(t)
		d.initialize(nil)
		expectFrameErrors(t, d, "Content-Length: "+itoa(len(body))+"\r\nthis is no header\r\n\r\n"+body)
	})
	t.Run("lower-case header and bare newlines", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		b := `{"jsonrpc":"2.0","id":"lc","method":"session/new"}`
		d.write([]byte("content-length: " + itoa(len(b)) + "\n\n" + b))
		d.result(`"lc"`)
	})
}

func TestNotARequest(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		id   string // the id the error must carry
	}{
		"object without jsonrpc fields": {`{"foo":1}`, "null"},
		"empty array":                   {`[]`, "null"},
		"batch":                         {`[{"jsonrpc":"2.0","id":1,"method":"session/new"}]`, "null"},
		"batch of two":                  {`[{"jsonrpc":"2.0","id":1,"method":"session/new"},{"jsonrpc":"2.0","method":"initialized"}]`, "null"},
		"number":                        {`42`, "null"},
		"string":                        {`"session/new"`, "null"},
		"null":                          {`null`, "null"},
		"true":                          {`true`, "null"},
		"no jsonrpc member":             {`{"id":7,"method":"session/new"}`, "7"},
		"jsonrpc 1.0":                   {`{"jsonrpc":"1.0","id":"v1","method":"session/new"}`, `"v1"`},
		"neither method nor result":     {`{"jsonrpc":"2.0","id":8}`, "8"},
		"method and result":             {`{"jsonrpc":"2.0","id":9,"method":"session/new","result":1}`, "9"},
		"method not a string":           {`{"jsonrpc":"2.0","id":10,"method":5}`, "10"},
		"params a string":               {`{"jsonrpc":"2.0","id":11,"method":"session/new","params":"x"}`, "11"},
		"id an object":                  {`{"jsonrpc":"2.0","id":{},"method":"session/new"}`, "null"},
		"id true":                       {`{"jsonrpc":"2.0","id":true,"method":"session/new"}`, "null"},
		"id an array":                   {`{"jsonrpc":"2.0","id":[1],"method":"session/new"}`, "null"},
		"odd id, jsonrpc 1.0":           {`{"jsonrpc":"1.0","id":-1.5e3,"method":"session/new"}`, "-1.5e3"},
		"id null":                       {`{"jsonrpc":"2.0","id":null,"method":"session/new"}`, "null"},
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			d.frame(tc.body)
			next := d.requestID("2", "session/new", omit)
			resp := d.response(next)
			var errs []*wireMsg
			for _, m := range d.snapshot() {
				if m.seq < resp.seq && m.isResponse() && m.get("error").Exists() {
					errs = append(errs, m)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("want one error response before the next response, got %d; received:\n%s", len(errs), d.dump())
			}
			e := errs[0]
			if code := e.get("error.code").Int(); code != codeInvalidRequest {
				t.Errorf("code %d, want %d: %s", code, codeInvalidRequest, e)
			}
			if e.id() != tc.id {
				t.Errorf("id %s, want %s: %s", e.id(), tc.id, e)
			}
			if resp.get("error").Exists() {
				t.Errorf("the next request failed: %s", resp)
			}
			// Nothing in a rejected message was run: no other request was answered.
			for _, m := range d.snapshot() {
				if m.seq < resp.seq && m.isResponse() && !m.get("error").Exists() && !m.get("result.serverInfo").Exists() {
					t.Errorf("a rejected message was run: %s", m)
				}
			}
		})
	}
}

func TestUnknownMethod(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	code, msg := d.callErr("session/frobnicate", obj{})
	if code != codeMethodNotFound || !strings.Contains(msg, "session/frobnicate") {
		t.Errorf("got %d %q, want %d naming the method", code, msg, codeMethodNotFound)
	}
	// An unknown notification is ignored, and the daemon keeps serving.
	d.notify("session/frobnicate", obj{})
	d.call("session/new", omit)
}

func TestWrongParams(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{})
	for name, tc := range map[string]struct {
		method string
		params any
		want   string // the message must contain this
	}{
		"sessionId a number":       {"session/prompt", obj{"sessionId": 5, "text": "hi"}, "sessionId"},
		"text an object":           {"session/prompt", obj{"sessionId": sid, "text": obj{}}, "text"},
		"steer sessionId a bool":   {"session/steer", obj{"sessionId": true}, "sessionId"},
		"toolCalls an object":      {"tools/execute", obj{"sessionId": sid, "toolCalls": obj{}}, "toolCalls"},
		"toolCall without an id":   {"tools/execute", obj{"sessionId": sid, "toolCalls": []obj{{"name": "x"}}}, "toolCalls[0]"},
		"toolExecution unknown":    {"tools/execute", obj{"sessionId": sid, "toolExecution": "sideways"}, "toolExecution"},
		"session toolExecution":    {"session/new", obj{"toolExecution": 3}, "toolExecution"},
		"permissions default":      {"session/new", obj{"permissions": obj{"default": "maybe"}}, "permissions.default"},
		"model provider":           {"session/new", obj{"model": obj{"provider": "nope"}}, "provider"},
		"scripted tool step":       {"session/new", obj{"scriptedTools": []obj{{"name": "t", "steps": []obj{{}}}}}, "step 0"},
		"scripted tool nameless":   {"session/new", obj{"scriptedTools": []obj{{"steps": []obj{}}}}, "no name"},
		"params a non-empty array": {"session/prompt", json.RawMessage(`[1]`), "params must be an object"},
		"missing sessionId":        {"session/prompt", obj{"text": "hi"}, "sessionId"},
		"tools/list without id":    {"tools/list", omit, "sessionId"},
	} {
		t.Run(name, func(t *testing.T) {
			code, msg := d.callErr(tc.method, tc.params)
			if code != codeInvalidParams || !strings.Contains(msg, tc.want) {
				t.Errorf("got %d %q, want %d containing %q", code, msg, codeInvalidParams, tc.want)
			}
		})
	}
	// After all that, the session still works.
	d.call("tools/list", obj{"sessionId": sid})
}

func TestParamsDecodedForEveryMethod(t *testing.T) {
	// Every method of the table gets its params through decodeParams before its handler runs:
	// params that are an array (the only other kind the frame check lets through) are answered
	// -32602 with exactly the same message, whatever the method, and nothing runs. The methods
	// that take no params (*noParams) read none, so they answer whatever params come.
	noParams := []string{"lsp/servers", "mcp/servers", "permissions/list", "trust/list"}
	d := startInProcess(t)
	d.initialize(nil)
	var methods []string
	for name := range methodTable {
		// initialize was already received, shutdown would end the connection, and the
		// tests' own methods are not pid's.
		if name != "initialize" && name != "shutdown" && !strings.HasPrefix(name, "test/") {
			methods = append(methods, name)
		}
	}
	slices.Sort(methods)
	if len(methods) < 30 {
		t.Fatalf("only %d methods in the table: %v", len(methods), methods)
	}
	var answered []string
	for _, method := range methods {
		for _, tc := range []struct{ params, want string }{
			{`[1]`, "invalid params: params must be an object"},
			{`[{"sessionId":"s"}]`, "invalid params: params must be an object"},
		} {
			m := d.response(d.request(method, json.RawMessage(tc.params)))
			if !m.get("error").Exists() {
				if tc.params == `[1]` {
					answered = append(answered, method)
				}
				continue
			}
			if slices.Contains(noParams, method) {
				t.Errorf("%s %s: want a result (it reads no params), got %s", method, tc.params, m)
				continue
			}
			if code, msg := m.get("error.code").Int(), m.get("error.message").String(); code != codeInvalidParams || msg != tc.want {
				t.Errorf("%s %s: got %d %q, want %d %q", method, tc.params, code, msg, codeInvalidParams, tc.want)
			}
		}
	}
	if !slices.Equal(answered, noParams) {
		t.Errorf("the methods that answered params [1] with a result: %v, want %v", answered, noParams)
	}
	// A method with a sessionId field refuses a number there, naming the field.
	for _, method := range []string{"session/prompt", "jobs/output", "changes/list", "session/compact", "models/list"} {
		code, msg := d.callErr(method, json.RawMessage(`{"sessionId":5}`))
		if want := `invalid params: field "sessionId" must be a string, not number`; code != codeInvalidParams || msg != want {
			t.Errorf("%s: got %d %q, want %d %q", method, code, msg, codeInvalidParams, want)
		}
	}
	d.call("session/new", omit) // and the daemon serves on
}

func TestUnknownSession(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	for _, method := range []string{"session/prompt", "session/steer", "session/followUp", "tools/list", "tools/execute"} {
		code, msg := d.callErr(method, obj{"sessionId": "nope", "text": "x", "toolCalls": []obj{}})
		if code != codeInvalidParams || !strings.Contains(msg, "nope") {
			t.Errorf("%s: got %d %q, want %d naming the session", method, code, msg, codeInvalidParams)
		}
	}
}

func TestLifecycle(t *testing.T) {
	t.Run("before initialize", func(t *testing.T) {
		d := startInProcess(t)
		for _, method := range []string{"session/new", "tools/list", "session/prompt", "tools/execute", "shutdown", "no/such/method"} {
			if code, msg := d.callErr(method, obj{}); code != codeNotInitialized {
				t.Errorf("%s before initialize: got %d %q, want %d", method, code, msg, codeNotInitialized)
			}
		}
		d.initialize(nil)
		d.call("session/new", omit)
		if code, _ := d.callErr("initialize", obj{}); code != codeInvalidRequest {
			t.Errorf("a second initialize: code %d, want %d", code, codeInvalidRequest)
		}
	})
	t.Run("after shutdown", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		sid := d.newSession(obj{})
		if r := d.call("shutdown", omit); r.Raw != "null" {
			t.Errorf("shutdown result %s, want null", r.Raw)
		}
		for _, method := range []string{"session/new", "tools/list", "initialize", "shutdown", "no/such/method"} {
			if code, msg := d.callErr(method, obj{"sessionId": sid}); code != codeInvalidRequest {
				t.Errorf("%s after shutdown: got %d %q, want %d", method, code, msg, codeInvalidRequest)
			}
		}
		d.notify("exit", omit)
		if code := d.wait(); code != 0 {
			t.Errorf("exit after shutdown: Serve returned %d, want 0", code)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		d.notify("exit", omit)
		if code := d.wait(); code != 1 {
			t.Errorf("exit without shutdown: Serve returned %d, want 1", code)
		}
	})
	t.Run("input ends", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		d.call("shutdown", omit)
		d.closeInput()
		if code := d.wait(); code != 1 {
			t.Errorf("input ended without exit: Serve returned %d, want 1", code)
		}
	})
}

func TestIDsEchoed(t *testing.T) {
	d := startInProcess(t)
	for _, id := range []string{`0`, `""`, `"abc"`, `"0"`, `"a \"quoted\" id"`, `"ü→ unicode"`, `9007199254740993`} {
		d.requestID(id, "initialize", obj{}) // the first succeeds, the rest fail: both must echo
		m := d.response(id)
		if got := m.get("id"); !got.Exists() || m.id() != compactJSON(id) {
			t.Errorf("request id %s answered with id %s: %s", id, m.id(), m)
		}
	}
	// Responses from the frame layer echo them too.
	d = startInProcess(t)
	for _, id := range []string{`0`, `"x"`} {
		d.frame(`{"jsonrpc":"1.0","id":` + id + `,"method":"tools/list"}`)
		if m := d.response(id); m.get("error.code").Int() != codeInvalidRequest {
			t.Errorf("jsonrpc 1.0 with id %s: %s", id, m)
		}
	}
}

func TestOptionalParams(t *testing.T) {
	for name, p := range map[string]any{
		"missing": omit,
		"null":    json.RawMessage(`null`),
		"[]":      json.RawMessage(`[]`),
		"{}":      json.RawMessage(`{}`),
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			init := d.call("initialize", p)
			if init.Get("serverInfo.name").String() != "pid" {
				t.Errorf("initialize: %s", init.Raw)
			}
			d.notify("initialized", p)
			sid := d.call("session/new", p).Get("sessionId").String()
			if sid == "" {
				t.Fatal("session/new gave no sessionId")
			}
			if tools := d.call("tools/list", obj{"sessionId": sid}).Get("tools"); !tools.IsArray() {
				t.Errorf("tools/list: %s", tools.Raw)
			}
			d.call("shutdown", p)
			d.notify("exit", p)
			if code := d.wait(); code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
		})
	}
}

// approvalSession starts a daemon whose editor answers beforeToolCall, with a session whose
// model calls the tool edit (which needs approval) as call c1, then says the given texts.
func approvalSession(t *testing.T, texts ...string) (*daemon, string) {
	d := startInProcess(t)
	d.initialize(obj{"beforeToolCall": true})
	turns := []obj{turn(toolCall("c1", "edit", obj{"path": "a.txt"}))}
	for _, s := range texts {
		turns = append(turns, turn(text(s)))
	}
	sid := d.newSession(obj{
		"model":         scriptModel(turns...),
		"scriptedTools": []obj{needsApproval(tool("edit", resultStep("edited")))},
	})
	return d, sid
}

func roles(msgs []gjson.Result) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Get("role").String())
	}
	return out
}

func TestServedWhileApprovalPending(t *testing.T) {
	d, s1 := approvalSession(t, "done")
	p := d.request("session/prompt", obj{"sessionId": s1, "text": "go"})
	req := d.serverRequest("beforeToolCall", "c1")
	if req.get("params.sessionId").String() != s1 || req.get("params.toolName").String() != "edit" || req.get("params.args.path").String() != "a.txt" {
		t.Errorf("beforeToolCall params: %s", req)
	}

	// The prompt waits on the editor; everything else is served meanwhile.
	if names := toolNames(d.call("tools/list", obj{"sessionId": s1})); !slices.Equal(names, []string{"edit"}) {
		t.Errorf("tools/list: %v", names)
	}
	s2 := d.newSession(obj{"scriptedTools": []obj{tool("slow", updateStep("working"), sleepStep(60000))}})
	x := d.request("tools/execute", obj{"sessionId": s2, "toolCalls": []obj{execCall("x1", "slow")}})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "x1" })
	d.cancel(x)
	res := d.result(x)
	if !res.Get("aborted").Bool() || res.Get("terminate").Bool() || res.Get("messages.0.content.0.text").String() != "Operation aborted" {
		t.Errorf("cancelled tools/execute: %s", res.Raw)
	}
	d.call("session/followUp", obj{"sessionId": s2, "text": "later"})
	if m := responseTo(d, p); m != nil {
		t.Fatalf("the prompt was answered before its approval: %s", m)
	}

	d.answer(req, obj{"decision": "allow"})
	out := d.result(p)
	if out.Get("stopReason").String() != "stop" {
		t.Errorf("stopReason %s", out.Get("stopReason"))
	}
	msgs := out.Get("messages").Array()
	if got := roles(msgs); !slices.Equal(got, []string{"user", "assistant", "toolResult", "assistant"}) {
		t.Fatalf("roles %v", got)
	}
	if msgs[2].Get("content.0.text").String() != "edited" || msgs[2].Get("isError").Bool() {
		t.Errorf("tool result %s", msgs[2].Raw)
	}
}

// toolNames lists the active scripted tools of a tools result (every session also has the
// built-in tools, which these tests do not look at; scripted tools keep their default
// description, "Scripted tool NAME"; tools/list lists inactive tools too, active: false).
func toolNames(r gjson.Result) []string {
	var out []string
	for _, t := range r.Get("tools").Array() {
		if strings.HasPrefix(t.Get("description").String(), "Scripted tool ") && t.Get("active").Bool() {
			out = append(out, t.Get("name").String())
		}
	}
	return out
}

func TestSecondPromptWhileRunning(t *testing.T) {
	d, sid := approvalSession(t, "after steering", "third")
	p := d.request("session/prompt", obj{"sessionId": sid, "text": "first"})
	req := d.serverRequest("beforeToolCall", "c1")

	code, msg := d.callErr("session/prompt", obj{"sessionId": sid, "text": "second"})
	if code != codeRequestFailed || !strings.Contains(msg, "session/steer") || !strings.Contains(msg, "session/followUp") {
		t.Errorf("second prompt: got %d %q, want %d pointing to session/steer and session/followUp", code, msg, codeRequestFailed)
	}
	d.call("session/steer", obj{"sessionId": sid, "text": "steered"})

	d.answer(req, obj{"decision": "allow"})
	out := d.result(p)
	msgs := out.Get("messages").Array()
	if got := roles(msgs); !slices.Equal(got, []string{"user", "assistant", "toolResult", "user", "assistant"}) {
		t.Fatalf("roles %v", got)
	}
	if msgs[3].Get("content.0.text").String() != "steered" {
		t.Errorf("steering message %s", msgs[3].Raw)
	}
	for _, m := range msgs {
		if strings.Contains(m.Raw, `"second"`) {
			t.Errorf("the refused prompt reached the transcript: %s", m.Raw)
		}
	}
	// The session takes a prompt again once the first is done.
	if r := d.call("session/prompt", obj{"sessionId": sid, "text": "third"}); r.Get("messages.1.content.0.text").String() != "third" {
		t.Errorf("third prompt: %s", r.Raw)
	}
}

func TestNotificationOrder(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{
		"model": scriptModel(turn(toolCall("ca", "a", nil), toolCall("cb", "b", nil)), turn(text("end"))),
		"scriptedTools": []obj{
			tool("a", updateStep("a working"), waitForEnd("cb"), resultStep("A")),
			tool("b", updateStep("b working"), resultStep("B")),
		},
	})
	p := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	resp := d.response(p)
	out := resp.get("result")
	notes := d.notes(sid)

	pos := map[string]int{}
	count := map[string]int{}
	for i, m := range notes {
		if m.seq > resp.seq {
			t.Errorf("notification after the prompt's response: %s", m)
		}
		key := m.method()
		if id := m.get("params.toolCallId").String(); id != "" {
			key += " " + id
		}
		if r := m.get("params.message"); r.Get("role").String() == "toolResult" {
			key += " " + r.Get("toolCallId").String()
		}
		count[key]++
		if _, ok := pos[key]; !ok {
			pos[key] = i
		}
	}
	if notes[0].method() != "agentStart" || notes[len(notes)-1].method() != "agentEnd" {
		t.Errorf("first %s, last %s", notes[0].method(), notes[len(notes)-1].method())
	}
	before := func(a, b string) {
		t.Helper()
		pa, oka := pos[a]
		pb, okb := pos[b]
		if !oka || !okb || pa >= pb {
			t.Errorf("want %q before %q (positions %d %v, %d %v)", a, b, pa, oka, pb, okb)
		}
	}
	before("toolStart ca", "toolStart cb")
	before("toolEnd cb", "toolEnd ca") // completion order: a waited for b's end
	before("$/toolUpdate ca", "toolEnd ca")
	before("$/toolUpdate cb", "toolEnd cb")
	before("toolEnd ca", "messageStart ca")
	before("messageStart ca", "messageEnd ca")
	before("messageEnd ca", "messageStart cb")
	before("messageEnd cb", "turnEnd")
	for _, k := range []string{"toolStart ca", "toolStart cb", "toolEnd ca", "toolEnd cb", "$/toolUpdate ca", "$/toolUpdate cb", "agentStart", "agentEnd"} {
		if count[k] != 1 {
			t.Errorf("%q sent %d times, want once", k, count[k])
		}
	}
	// The results are in source order in the response, and the events agree with it.
	msgs := out.Get("messages").Array()
	if got := roles(msgs); !slices.Equal(got, []string{"user", "assistant", "toolResult", "toolResult", "assistant"}) {
		t.Fatalf("roles %v", got)
	}
	if msgs[2].Get("toolCallId").String() != "ca" || msgs[3].Get("toolCallId").String() != "cb" {
		t.Errorf("results not in source order: %s %s", msgs[2].Raw, msgs[3].Raw)
	}
	end := notes[len(notes)-1].get("params.messages")
	if len(end.Array()) != len(msgs) {
		t.Errorf("agentEnd has %d messages, the response %d", len(end.Array()), len(msgs))
	}
}

func TestCancelPromptDuringTool(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{
		"model": scriptModel(
			turn(toolCall("c1", "slow", nil), toolCall("c2", "quick", nil)),
			turn(text("MUST NOT APPEAR")),
		),
		"scriptedTools": []obj{
			tool("slow", waitForEnd("c2"), updateStep("sleeping"), sleepStep(60000), resultStep("woke")),
			tool("quick", resultStep("q")),
		},
	})
	const id = `"prompt-1"`
	d.requestID(id, "session/prompt", obj{"sessionId": sid, "text": "go"})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "c1" })
	d.cancel(id)
	resp := d.response(id)
	if resp.get("error").Exists() {
		t.Fatalf("a cancelled prompt must answer with a result: %s", resp)
	}
	out := resp.get("result")
	if out.Get("stopReason").String() != "aborted" {
		t.Errorf("stopReason %s, want aborted", out.Get("stopReason"))
	}
	msgs := out.Get("messages").Array()
	if got := roles(msgs); !slices.Equal(got, []string{"user", "assistant", "toolResult", "toolResult"}) {
		t.Fatalf("roles %v (the messages must end with the tool results)", got)
	}
	if r := msgs[2]; r.Get("toolCallId").String() != "c1" || !r.Get("isError").Bool() || !strings.HasPrefix(r.Get("content.0.text").String(), "Operation aborted") {
		t.Errorf("c1 result %s", r.Raw)
	}
	if r := msgs[3]; r.Get("toolCallId").String() != "c2" || r.Get("isError").Bool() || r.Get("content.0.text").String() != "q" {
		t.Errorf("c2 result %s", r.Raw)
	}
	for _, m := range d.snapshot() {
		if m.seq <= resp.seq && strings.Contains(m.String(), "MUST NOT APPEAR") {
			t.Errorf("a model call was made after the cancel: %s", m)
		}
	}
	starts, ends := 0, 0
	for _, m := range d.notes(sid) {
		switch m.method() {
		case "toolStart":
			starts++
		case "toolEnd":
			ends++
		}
		if m.seq > resp.seq {
			t.Errorf("notification after the response: %s", m)
		}
	}
	if starts != 2 || ends != 2 {
		t.Errorf("%d toolStart and %d toolEnd, want 2 each", starts, ends)
	}
	// The session is free again, and the model's next turn is still unplayed: the cancelled
	// run made no model call after the cancel.
	again := d.call("session/prompt", obj{"sessionId": sid, "text": "again"})
	if again.Get("messages.1.content.0.text").String() != "MUST NOT APPEAR" {
		t.Errorf("the next prompt got %s, want the script's second turn", again.Raw)
	}
}

func TestCancelPromptDuringApproval(t *testing.T) {
	d, sid := approvalSession(t, "MUST NOT APPEAR")
	d.requestID("0", "session/prompt", obj{"sessionId": sid, "text": "go"})
	req := d.serverRequest("beforeToolCall", "c1")
	d.cancel("0")
	out := d.result("0")
	if out.Get("stopReason").String() != "aborted" {
		t.Errorf("stopReason %s, want aborted", out.Get("stopReason"))
	}
	msgs := out.Get("messages").Array()
	if got := roles(msgs); !slices.Equal(got, []string{"user", "assistant", "toolResult"}) {
		t.Fatalf("roles %v", got)
	}
	if r := msgs[2]; r.Get("content.0.text").String() != "Operation aborted" || !r.Get("isError").Bool() {
		t.Errorf("result %s, want the error Operation aborted", r.Raw)
	}
	// The daemon tells the editor it no longer waits for that answer.
	d.notification("$/cancelRequest", func(m *wireMsg) bool { return compactJSON(m.get("params.id").Raw) == req.id() })
	// A late answer is dropped, and the daemon keeps serving.
	d.answer(req, obj{"decision": "allow"})
	d.call("tools/list", obj{"sessionId": sid})
	for _, m := range d.snapshot() {
		if strings.Contains(m.String(), "edited") || strings.Contains(m.String(), "MUST NOT APPEAR") {
			t.Errorf("the tool or the model ran after the cancel: %s", m)
		}
	}
}

func TestCancelToolsExecute(t *testing.T) {
	for _, mode := range []string{"parallel", "sequential"} {
		t.Run(mode, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(nil)
			sid := d.newSession(obj{"scriptedTools": []obj{
				tool("slow", updateStep("sleeping"), sleepStep(60000)),
				tool("quick", resultStep("q")),
			}})
			x := d.request("tools/execute", obj{"sessionId": sid, "toolExecution": mode, "toolCalls": []obj{execCall("s1", "slow"), execCall("q1", "quick")}})
			d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "s1" })
			d.cancel(x)
			res := d.result(x)
			var keys []string
			res.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.String()); return true })
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"aborted", "messages", "terminate"}) || !res.Get("aborted").Bool() || res.Get("terminate").Bool() {
				t.Errorf("result %s, want {messages, terminate:false, aborted:true}", res.Raw)
			}
			msgs := res.Get("messages").Array()
			if len(msgs) != 2 || msgs[0].Get("toolCallId").String() != "s1" || msgs[1].Get("toolCallId").String() != "q1" {
				t.Fatalf("messages %s", res.Get("messages").Raw)
			}
			if !msgs[0].Get("isError").Bool() || msgs[0].Get("content.0.text").String() != "Operation aborted" {
				t.Errorf("s1 %s", msgs[0].Raw)
			}
			if mode == "sequential" && msgs[1].Get("content.0.text").String() != "Operation aborted" {
				t.Errorf("sequential: q1 ran after the cancel: %s", msgs[1].Raw)
			}
			ends := 0
			for _, m := range d.notes(sid) {
				if m.method() == "toolEnd" {
					ends++
				}
			}
			if ends != 2 {
				t.Errorf("%d toolEnd, want 2", ends)
			}
		})
	}
}

func TestCancelUnknownRequest(t *testing.T) {
	// Cancelling something that is not running (or never was) is harmless.
	d := startInProcess(t)
	d.initialize(nil)
	id := d.request("session/new", omit)
	d.result(id)
	d.cancel(id)
	d.cancel(`"never"`)
	d.notify("$/cancelRequest", omit)
	d.notify("$/cancelRequest", obj{"id": obj{}})
	d.call("session/new", omit)
}

func TestBeforeToolCallAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		answer  func(d *daemon, req *wireMsg)
		want    string // the tool result's text must contain this
		logged  bool   // a window/logMessage must be sent
		logWant string
	}{
		"error": {
			answer:  func(d *daemon, req *wireMsg) { d.answerError(req, -32000, "approval panel crashed") },
			want:    "editor",
			logged:  true,
			logWant: "approval panel crashed",
		},
		"null": {
			answer: func(d *daemon, req *wireMsg) { d.answer(req, nil) },
			want:   "denied",
		},
		"deny with reason": {
			answer: func(d *daemon, req *wireMsg) { d.answer(req, obj{"decision": "deny", "reason": "not today"}) },
			want:   "not today",
		},
		"unknown decision": {
			answer: func(d *daemon, req *wireMsg) { d.answer(req, obj{"decision": "perhaps"}) },
			want:   "perhaps",
		},
		"wrong shape": {
			answer: func(d *daemon, req *wireMsg) { d.answer(req, "allow") },
			want:   "editor",
			logged: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			d, sid := approvalSession(t, "ok")
			p := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
			req := d.serverRequest("beforeToolCall", "c1")
			tc.answer(d, req)
			out := d.result(p)
			if out.Get("stopReason").String() != "stop" {
				t.Errorf("stopReason %s: the run must go on after a denial", out.Get("stopReason"))
			}
			r := out.Get("messages.2")
			if !r.Get("isError").Bool() || !strings.Contains(r.Get("content.0.text").String(), tc.want) {
				t.Errorf("tool result %s, want an error mentioning %q", r.Raw, tc.want)
			}
			for _, m := range d.snapshot() {
				if strings.Contains(m.String(), "edited") {
					t.Errorf("the denied tool ran: %s", m)
				}
			}
			logs := d.logMessages()
			if tc.logged {
				if len(logs) == 0 || !strings.Contains(logs[0].get("params.message").String(), tc.logWant) || logs[0].get("params.type").Int() != 2 {
					t.Errorf("want a warning window/logMessage mentioning %q, got %v", tc.logWant, logs)
				}
			} else if len(logs) != 0 {
				t.Errorf("unexpected window/logMessage: %v", logs)
			}
			d.call("tools/list", obj{"sessionId": sid})
		})
	}
}

func TestAfterToolCall(t *testing.T) {
	detailed := obj{"result": obj{"content": []obj{text("orig")}, "details": obj{"k": "v"}}}
	for name, tc := range map[string]struct {
		answer                func(d *daemon, req *wireMsg)
		content, details      string
		isError, logged       bool
		logWant, terminateSet string
	}{
		"error keeps the result": {
			answer:  func(d *daemon, req *wireMsg) { d.answerError(req, -32000, "hook exploded") },
			content: "orig", details: `{"k":"v"}`, logged: true, logWant: "hook exploded",
		},
		"content replaces only content": {
			answer:  func(d *daemon, req *wireMsg) { d.answer(req, obj{"content": []obj{text("new")}}) },
			content: "new", details: `{"k":"v"}`,
		},
		"null fields are absent": {
			answer: func(d *daemon, req *wireMsg) {
				d.answer(req, obj{"content": nil, "details": nil, "isError": nil, "terminate": nil})
			},
			content: "orig", details: `{"k":"v"}`,
		},
		"null answer": {
			answer:  func(d *daemon, req *wireMsg) { d.answer(req, nil) },
			content: "orig", details: `{"k":"v"}`,
		},
		"isError and details": {
			answer:  func(d *daemon, req *wireMsg) { d.answer(req, obj{"isError": true, "details": obj{"n": 1}}) },
			content: "orig", details: `{"n":1}`, isError: true,
		},
		"wrong shape keeps the result": {
			answer:  func(d *daemon, req *wireMsg) { d.answer(req, []int{1}) },
			content: "orig", details: `{"k":"v"}`, logged: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := startInProcess(t)
			d.initialize(obj{"afterToolCall": true})
			sid := d.newSession(obj{"scriptedTools": []obj{{"name": "t", "steps": []obj{detailed}}}})
			x := d.request("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("u1", "nosuch"), execCall("c1", "t")}})
			req := d.serverRequest("afterToolCall", "c1")
			if req.get("params.result.content.0.text").String() != "orig" || req.get("params.isError").Bool() || req.get("params.toolName").String() != "t" || req.get("params.sessionId").String() != sid {
				t.Errorf("afterToolCall params: %s", req)
			}
			tc.answer(d, req)
			res := d.result(x)
			// Not sent for the immediate outcome of the unknown tool.
			for _, m := range d.snapshot() {
				if m.isRequest() && m.method() == "afterToolCall" && m.get("params.toolCallId").String() != "c1" {
					t.Errorf("afterToolCall sent for an immediate outcome: %s", m)
				}
			}
			if u := res.Get("messages.0"); !u.Get("isError").Bool() || !strings.Contains(u.Get("content.0.text").String(), "nosuch") {
				t.Errorf("unknown tool result %s", u.Raw)
			}
			r := res.Get("messages.1")
			if r.Get("content.0.text").String() != tc.content || compactJSON(r.Get("details").Raw) != tc.details || r.Get("isError").Bool() != tc.isError {
				t.Errorf("result %s, want content %q details %s isError %v", r.Raw, tc.content, tc.details, tc.isError)
			}
			end := d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "c1" })
			if end.get("params.result.content.0.text").String() != tc.content || end.get("params.isError").Bool() != tc.isError {
				t.Errorf("toolEnd %s disagrees with the result", end)
			}
			logs := d.logMessages()
			if tc.logged {
				if len(logs) == 0 || !strings.Contains(logs[0].get("params.message").String(), tc.logWant) {
					t.Errorf("want a window/logMessage mentioning %q, got %v", tc.logWant, logs)
				}
			} else if len(logs) != 0 {
				t.Errorf("unexpected window/logMessage: %v", logs)
			}
			d.call("tools/list", obj{"sessionId": sid})
		})
	}
}

func TestAfterToolCallNotDeclared(t *testing.T) {
	// Without the capability the daemon never sends afterToolCall.
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{"scriptedTools": []obj{tool("t", resultStep("r"))}})
	res := d.call("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("c1", "t")}})
	if res.Get("messages.0.content.0.text").String() != "r" {
		t.Errorf("result %s", res.Raw)
	}
	for _, m := range d.snapshot() {
		if m.isRequest() {
			t.Errorf("unexpected request to the editor: %s", m)
		}
	}
}

func TestPanickingTool(t *testing.T) {
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{
		"model":         scriptModel(turn(toolCall("m1", "boom", nil)), turn(text("survived"))),
		"scriptedTools": []obj{tool("boom", panicStep("kaboom")), tool("ok", resultStep("fine"))},
	})
	res := d.call("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("p1", "boom"), execCall("o1", "ok")}})
	r := res.Get("messages.0")
	if !r.Get("isError").Bool() || !strings.Contains(r.Get("content.0.text").String(), "panic") || !strings.Contains(r.Get("content.0.text").String(), "kaboom") {
		t.Errorf("panicking tool's result %s, want an error naming the panic", r.Raw)
	}
	if o := res.Get("messages.1"); o.Get("content.0.text").String() != "fine" || o.Get("isError").Bool() {
		t.Errorf("the other call of the batch: %s", o.Raw)
	}
	logs := d.logMessages()
	if len(logs) != 1 || logs[0].get("params.type").Int() != 2 || !strings.Contains(logs[0].get("params.message").String(), "kaboom") {
		t.Errorf("want one warning window/logMessage naming the panic, got %v", logs)
	}
	// The daemon keeps serving, prompts included.
	out := d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	if out.Get("stopReason").String() != "stop" || !strings.Contains(out.Get("messages.2.content.0.text").String(), "kaboom") {
		t.Errorf("prompt after a panic: %s", out.Raw)
	}
}

func TestUnknownAddedToolNames(t *testing.T) {
	adder := obj{"name": "adder", "steps": []obj{{"result": obj{"content": []obj{text("added")}, "addedToolNames": []string{"ghost", "later"}}}}}
	cfg := func(model obj) obj {
		c := obj{"scriptedTools": []obj{adder, inactive(tool("later", resultStep("l")))}}
		if model != nil {
			c["model"] = model
		}
		return c
	}
	t.Run("tools/execute", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		sid := d.newSession(cfg(nil))
		if names := toolNames(d.call("tools/list", obj{"sessionId": sid})); !slices.Equal(names, []string{"adder"}) {
			t.Errorf("tools before: %v", names)
		}
		d.call("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{execCall("a1", "adder")}})
		logs := d.logMessages()
		if len(logs) != 1 || !strings.Contains(logs[0].get("params.message").String(), "ghost") || logs[0].get("params.type").Int() != 2 {
			t.Errorf("want one warning naming ghost, got %v", logs)
		}
		if names := toolNames(d.call("tools/list", obj{"sessionId": sid})); !slices.Equal(names, []string{"adder", "later"}) {
			t.Errorf("tools after: %v", names)
		}
	})
	t.Run("prompt", func(t *testing.T) {
		d := startInProcess(t)
		d.initialize(nil)
		sid := d.newSession(cfg(scriptModel(turn(toolCall("a1", "adder", nil)), turn(toolCall("l1", "later", nil)), turn(text("done")))))
		out := d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
		if out.Get("stopReason").String() != "stop" {
			t.Errorf("stopReason %s", out.Get("stopReason"))
		}
		if r := out.Get(`messages.#(toolCallId=="l1")`); r.Get("content.0.text").String() != "l" {
			t.Errorf("the added tool did not run: %s", r.Raw)
		}
		logs := d.logMessages()
		if len(logs) != 1 || !strings.Contains(logs[0].get("params.message").String(), "ghost") {
			t.Errorf("want one warning naming ghost, got %v", logs)
		}
		if names := toolNames(d.call("tools/list", obj{"sessionId": sid})); !slices.Equal(names, []string{"adder", "later"}) {
			t.Errorf("tools after: %v", names)
		}
	})
}

func TestStdinClosedMidPrompt(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	d := startInProcess(t)
	d.initialize(obj{"beforeToolCall": true})
	sid := d.newSession(obj{
		"model": scriptModel(turn(toolCall("c1", "slow", nil), toolCall("c2", "edit", nil))),
		"scriptedTools": []obj{
			tool("slow", updateStep("sleeping"), sleepStep(60000)),
			needsApproval(tool("edit", resultStep("edited"))),
		},
	})
	d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	s2 := d.newSession(obj{"scriptedTools": []obj{tool("slow", updateStep("sleeping"), sleepStep(60000))}})
	d.request("tools/execute", obj{"sessionId": s2, "toolCalls": []obj{execCall("x1", "slow")}})
	// One tool sleeps, an approval is pending, and a batch of another session sleeps too.
	d.serverRequest("beforeToolCall", "c2")
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "x1" })
	d.closeInput()
	if code := d.wait(); code != 1 {
		t.Errorf("Serve returned %d, want 1", code)
	}
	goleak.VerifyNone(t, ignore)
}

func TestExitMidPrompt(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{
		"model":         scriptModel(turn(toolCall("c1", "slow", nil))),
		"scriptedTools": []obj{tool("slow", updateStep("sleeping"), sleepStep(60000))},
	})
	d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	d.notification("$/toolUpdate", nil)
	d.notify("exit", omit)
	if code := d.wait(); code != 1 {
		t.Errorf("Serve returned %d, want 1", code)
	}
	goleak.VerifyNone(t, ignore)
}

// Handlers that panic, registered for this test binary only (before any test runs).
func init() {
	methodTable["test/panicQuick"] = quick(func(*Server, *noParams) (any, error) { panic("quick boom") })
	methodTable["test/panicLong"] = long(func(*Server, *noParams) (work, error) {
		return func(context.Context) (any, error) { panic("long boom") }, nil
	})
}

func TestPanickingHandler(t *testing.T) {
	// A handler's panic is answered with an error (never a result), and the daemon goes on.
	d := startInProcess(t)
	d.initialize(nil)
	for _, method := range []string{"test/panicQuick", "test/panicLong"} {
		if code, msg := d.callErr(method, omit); code == 0 || !strings.Contains(msg, method) {
			t.Errorf("%s: got %d %q, want an error naming the method", method, code, msg)
		}
	}
	d.call("session/new", omit)
}

func TestShutdownWhileRunning(t *testing.T) {
	// shutdown ends what runs: the prompt waiting on an approval still answers (aborted).
	d, sid := approvalSession(t, "MUST NOT APPEAR")
	p := d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	d.serverRequest("beforeToolCall", "c1")
	d.call("shutdown", omit)
	out := d.result(p)
	if out.Get("stopReason").String() != "aborted" || out.Get("messages.2.content.0.text").String() != "Operation aborted" {
		t.Errorf("prompt after shutdown: %s", out.Raw)
	}
	d.notify("exit", omit)
	if code := d.wait(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

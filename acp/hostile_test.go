// This file tests the line reader against hostile and careless clients: nesting no parser
// may recurse into, a line over the limit (answered before it ends, and not kept), every id
// JSON-RPC allows, and an id reused while its request runs.

package acp

import (
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/rpcwire"
)

func nested(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// slowSession makes a session whose scripted model calls the tool wait, which reports
// progress and then sleeps until cancelled.
func slowSession(t *testing.T, c *client) string {
	tools := `"scriptedTools":[{"name":"wait","steps":[{"update":{"content":[{"type":"text","text":"started"}]}},{"sleepMs":60000}]}]`
	return c.newSession(t.TempDir(), script(tools, toolTurn(call("a1", "wait", `{}`)), textTurn("after")))
}

// waitInProgress reads pid's messages until a tool call is in progress.
func waitInProgress(c *client) {
	c.t.Helper()
	for {
		if k, u := c.next().update(); k == "tool_call_update" && u.Get("status").String() == "in_progress" {
			return
		}
	}
}

func TestWireDeepNesting(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	c.send(strings.Repeat("[", 10_000_000))
	if m := c.next(); m.Error == nil || m.Error.Code != codeParseError || string(m.ID) != "null" {
		t.Errorf("10 M '[': want -32700 with id null, got %s", m.raw)
	}
	// Valid JSON deeper than the limit: refused with the request's id; dropped for a
	// notification (never answered).
	c.send(`{"jsonrpc":"2.0","id":"deep","method":"initialize","params":{"protocolVersion":1,"x":` + nested(rpcwire.MaxDepth-1) + `}}`)
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidRequest || string(m.ID) != `"deep"` || !strings.Contains(m.Error.Message, "10000") {
		t.Errorf("too deep: want -32600 with id \"deep\" naming the limit, got %s", m.raw)
	}
	c.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x","y":` + nested(rpcwire.MaxDepth) + `}}`)
	ping(c)
	// At the limit: served.
	c.requestID(`"limit"`, "initialize", json.RawMessage(`{"protocolVersion":1,"x":`+nested(rpcwire.MaxDepth-2)+`}`))
	if m := c.next(); m.Error != nil || string(m.ID) != `"limit"` {
		t.Errorf("a request nested exactly %d deep: %s", rpcwire.MaxDepth, m.raw)
	}
}

// allocatedDuring returns the bytes the process allocated while f ran.
func allocatedDuring(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestWireLongLineAnsweredAtOnce(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	// A line over the limit is answered as soon as it is over, before its end comes...
	if _, err := io.WriteString(c.w, strings.Repeat("x", maxLine+1)); err != nil {
		t.Fatal(err)
	}
	m := c.next()
	if m.Error == nil || m.Error.Code != codeParseError || string(m.ID) != "null" || !strings.Contains(m.Error.Message, "longer than") {
		t.Fatalf("a line over the limit: want -32700 with id null, got %s", m.raw)
	}
	// ...and the rest of it is skipped without being kept; the next line is read.
	rest := []byte(strings.Repeat("y", 16<<20) + "\n")
	if got := allocatedDuring(func() { c.w.Write(rest) }); got > 1<<20 {
		t.Errorf("skipping 16 MB of an overlong line allocated %d KB, want next to nothing", got>>10)
	}
	ping(c)
	// A line of exactly the limit, its line end included, is read (and is no request here).
	c.send(strings.Repeat(" ", maxLine-4) + "[1]")
	if m := c.next(); m.Error == nil || m.Error.Code != codeInvalidRequest {
		t.Errorf("a line of exactly %d bytes: want -32600 (not an object), got %s", maxLine, m.raw)
	}
}

func TestWireIDsAnyNumber(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	for _, id := range []string{`-1`, `1.5`, `1e2`, `1E+2`, `-0`, `18446744073709551616`, `1e400`, `null`} {
		c.requestID(id, "_pid/nothing", map[string]any{})
		if m := c.next(); string(m.ID) != id || m.Error == nil || m.Error.Code != codeMethodNotFound {
			t.Errorf("id %s: want -32601 echoing the id exactly, got %s", id, m.raw)
		}
		c.requestID(id, "initialize", map[string]any{"protocolVersion": 1})
		if m := c.next(); string(m.ID) != id || m.Error != nil {
			t.Errorf("id %s: want a result echoing the id exactly, got %s", id, m.raw)
		}
	}
}

func TestWireCancelOddIDs(t *testing.T) {
	for _, tc := range []struct{ id, cancel string }{
		{`1.5`, `1.5`},
		{`18446744073709551616`, `18446744073709551616`},
		{`100`, `1e2`}, // one number, two spellings
	} {
		t.Run(tc.id, func(t *testing.T) {
			c := start(t)
			c.initialize(nil)
			sid := slowSession(t, c)
			c.requestID(tc.id, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
			waitInProgress(c)
			c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + tc.cancel + `}}`)
			resp, _ := c.until(json.RawMessage(tc.id), nil)
			if string(resp.ID) != tc.id || resp.get("result.stopReason").String() != "cancelled" {
				t.Errorf("want the prompt cancelled and answered with id %s, got %s", tc.id, resp.raw)
			}
		})
	}
}

func TestWireDuplicateRunningID(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	sid := slowSession(t, c)
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}
	c.requestID(`5`, "session/prompt", prompt)
	waitInProgress(c)
	for _, dup := range []string{`5`, `5.0`} {
		// Sent raw: the harness keys its requests by id, which these reuse.
		c.send(`{"jsonrpc":"2.0","id":` + dup + `,"method":"session/new","params":{"cwd":` + quote(t.TempDir()) + `,"mcpServers":[]}}`)
		m := c.next()
		for m.Method != "" { // the prompt's updates
			m = c.next()
		}
		if string(m.ID) != dup || m.Error == nil || m.Error.Code != codeInvalidRequest || !strings.Contains(m.Error.Message, "still running") {
			t.Errorf("session/new with the id %s of a running prompt: %s", dup, m.raw)
		}
	}
	// The cancel reaches the one request with that id.
	c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}`)
	resp, _ := c.until(json.RawMessage(`5`), nil)
	if resp.get("result.stopReason").String() != "cancelled" {
		t.Fatalf("the cancelled prompt: %s", resp.raw)
	}
	// Once answered, the id is free again.
	c.requestID(`5`, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	if m := c.next(); m.Error != nil {
		t.Errorf("reusing an answered id: %s", m.raw)
	}
}

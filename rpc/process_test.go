// This file tests the real pid binary as a child process over real pipes, as an editor runs
// it: exit codes, stdin closing mid-prompt, and a session that survives malformed input.
// TestMain (helpers_test.go) builds the binary once.

package rpc

import (
	"strings"
	"testing"
)

func TestProcessExitCodes(t *testing.T) {
	t.Run("exit after shutdown", func(t *testing.T) {
		d := startProcess(t, processOptions{})
		d.initialize(nil)
		if r := d.call("shutdown", omit); r.Raw != "null" {
			t.Errorf("shutdown result %s, want null", r.Raw)
		}
		if code, _ := d.callErr("session/new", omit); code != codeInvalidRequest {
			t.Errorf("session/new after shutdown: code %d, want %d", code, codeInvalidRequest)
		}
		d.notify("exit", omit)
		if code := d.wait(); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		d := startProcess(t, processOptions{})
		d.initialize(nil)
		d.notify("exit", omit)
		if code := d.wait(); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("exit before initialize", func(t *testing.T) {
		d := startProcess(t, processOptions{})
		d.notify("exit", omit)
		if code := d.wait(); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("stdin closed after shutdown", func(t *testing.T) {
		d := startProcess(t, processOptions{})
		d.initialize(nil)
		d.call("shutdown", omit)
		d.closeInput()
		if code := d.wait(); code != 1 {
			t.Errorf("exit code %d, want 1 (no exit was sent)", code)
		}
	})
}

func TestProcessStdinClosedMidPrompt(t *testing.T) {
	d := startProcess(t, processOptions{})
	d.initialize(obj{"beforeToolCall": true})
	sid := d.newSession(obj{
		"model": scriptModel(turn(toolCall("c1", "slow", nil), toolCall("c2", "edit", nil))),
		"scriptedTools": []obj{
			tool("slow", updateStep("sleeping"), sleepStep(60000)),
			needsApproval(tool("edit", resultStep("edited"))),
		},
	})
	d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	// An approval is pending; once it is answered the slow tool sleeps.
	req := d.serverRequest("beforeToolCall", "c2")
	d.answer(req, obj{"decision": "allow"})
	d.notification("$/toolUpdate", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "c1" })
	d.closeInput()
	// wait fails the test if pid outlives the hang guard (a hang, not a timing assertion).
	if code := d.wait(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestProcessKeepsServing(t *testing.T) {
	d := startProcess(t, processOptions{})
	// Garbage before initialize is answered too, and does not count as initialize.
	d.frame(`{"jsonrpc":"2.0","id":1,`)
	d.write([]byte("X-Nonsense: yes\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}"))
	if code, _ := d.callErr("session/new", omit); code != codeNotInitialized {
		t.Errorf("session/new before initialize: code %d, want %d", code, codeNotInitialized)
	}
	d.initialize(obj{"beforeToolCall": true})
	d.frame(`[{"jsonrpc":"2.0","id":3,"method":"session/new"}]`)
	d.frame(`{"foo":1}`)
	if code, _ := d.callErr("no/such/method", omit); code != codeMethodNotFound {
		t.Errorf("unknown method: code %d", code)
	}
	if code, msg := d.callErr("session/prompt", obj{"sessionId": 5}); code != codeInvalidParams || !strings.Contains(msg, "sessionId") {
		t.Errorf("wrong params: %d %q", code, msg)
	}

	// A whole prompt with a parallel batch, progress and an approval, over real pipes.
	sid := d.newSession(obj{
		"model": scriptModel(turn(toolCall("c1", "read", nil), toolCall("c2", "edit", nil)), turn(text("all done"))),
		"scriptedTools": []obj{
			tool("read", updateStep("reading"), waitForEnd("c2"), resultStep("content")),
			needsApproval(tool("edit", resultStep("edited"))),
		},
	})
	p := d.requestID(`"prompt"`, "session/prompt", obj{"sessionId": sid, "text": "go"})
	d.answer(d.serverRequest("beforeToolCall", "c2"), obj{"decision": "allow"})
	out := d.result(p)
	if out.Get("stopReason").String() != "stop" || out.Get("messages.#").Int() != 5 ||
		out.Get("messages.2.content.0.text").String() != "content" || out.Get("messages.3.content.0.text").String() != "edited" {
		t.Errorf("prompt result %s", out.Raw)
	}
	var parseErrs, invalid int
	for _, m := range d.snapshot() {
		if m.isResponse() && m.id() == "null" {
			switch m.get("error.code").Int() {
			case codeParseError:
				parseErrs++
			case codeInvalidRequest:
				invalid++
			}
		}
	}
	if parseErrs < 2 || invalid != 2 {
		t.Errorf("%d parse errors (want 2 or more) and %d invalid requests (want 2):\n%s", parseErrs, invalid, d.dump())
	}
	d.call("shutdown", omit)
	d.notify("exit", omit)
	if code := d.wait(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	// Everything pid wrote on stdout was a frame holding JSON (the client checks it).
	if err := d.Err(); err != nil {
		t.Errorf("stdout carried something other than protocol: %v", err)
	}
}

func TestProcessHostileFrames(t *testing.T) {
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Stderr: stderr})
	d.initialize(nil)
	// Ten million '[' once killed pid (a recursive validator ran out of stack): now they are
	// answered like any other broken frame, and pid serves on.
	mark := len(d.snapshot())
	d.frame(strings.Repeat("[", 10_000_000))
	if m := d.await("the answer to the frame of '['", func(m *wireMsg) bool { return m.seq >= mark }); m.id() != "null" || m.get("error.code").Int() != codeParseError {
		t.Errorf("10 M '[': %s", m)
	}
	d.call("session/new", omit)
	// A length pid will not read is answered at once, and ends the connection with a log
	// line saying why.
	d.write([]byte("Content-Length: 4611686018427387904\r\n\r\n"))
	m := d.await("the answer to the oversized frame", func(m *wireMsg) bool { return m.isResponse() && m.id() == "null" && m.seq > mark+1 })
	if m.get("error.code").Int() != codeParseError {
		t.Errorf("oversized frame: %s", m)
	}
	if code := d.wait(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "closing the connection") {
		t.Errorf("pid's stderr does not say why it closed the connection:\n%s", stderr)
	}
}

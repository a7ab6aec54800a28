// This file tests the problems after an edit (issue 26): an editor that answers
// editor/diagnostics, one that never answers, one that answers an error, and pid's own
// language-server client with the test server (testdata/lspserver), its crash and restart,
// lsp/servers, and the diagnostics tool.

package rpc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/proctest"
)

// diagSession starts a daemon whose editor declares diagnostics, in a folder with a.txt,
// with a model that reads a.txt, then in one batch edits it and writes c.txt, then stops.
// The editor may wait waitMs for a report, a language's first report included (firstWaitMs).
func diagSession(t *testing.T, waitMs int) (d *daemon, dir, sid, promptID string, sent time.Time) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = startInProcess(t)
	d.initialize(obj{"diagnostics": true})
	sid = d.newSession(obj{"cwd": dir, "permissions": obj{"default": "allow"}, "diagnostics": obj{"waitMs": waitMs, "firstWaitMs": waitMs}, "model": scriptModel(
		turn(toolCall("r1", "read", obj{"path": "a.txt"})),
		turn(toolCall("e1", "edit", obj{"path": "a.txt", "edits": []obj{{"oldText": "two", "newText": "2"}}}),
			toolCall("w1", "write", obj{"path": "c.txt", "content": "new\n"}),
			toolCall("g1", "grep", obj{"pattern": "one"})),
		turn(text("done")))})
	sent = time.Now()
	promptID = d.request("session/prompt", obj{"sessionId": sid, "text": "go"})
	return d, dir, sid, promptID, sent
}

// toolEnded reports whether the daemon has sent the toolEnd of call id.
func toolEnded(d *daemon, id string) bool {
	for _, m := range d.snapshot() {
		if m.isNotification() && m.method() == "toolEnd" && m.get("params.toolCallId").String() == id {
			return true
		}
	}
	return false
}

// The editor is asked once for both files the batch changed (absolute paths, waitMs from
// the settings) and its errors land in each call's result after the tool's text, 1-based,
// with the whole list (a warning too) in details.diagnostics; another file's problem is
// left out; the grep of the same batch does not wait for the answer.
func TestEditorDiagnosticsAnswered(t *testing.T) {
	d, dir, _, promptID, _ := diagSession(t, 700)
	req := d.await("editor/diagnostics", func(m *wireMsg) bool { return m.isRequest() && m.method() == "editor/diagnostics" })
	a, c := filepath.Join(dir, "a.txt"), filepath.Join(dir, "c.txt")
	if got := req.get("params.paths").Raw; got != `["`+a+`","`+c+`"]` {
		t.Fatalf("paths = %s, want a.txt and c.txt in source order", got)
	}
	if req.get("params.waitMs").Int() != 700 || req.get("params.firstWaitMs").Int() != 700 || req.get("params.sessionId").String() == "" {
		t.Errorf("params = %s", req.get("params").Raw)
	}
	if toolEnded(d, "e1") || toolEnded(d, "w1") {
		t.Fatalf("an edit ended before the editor answered:\n%s", d.dump())
	}
	d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "g1" })
	rng := func(line, char int) obj {
		return obj{"start": obj{"line": line, "character": char}, "end": obj{"line": line, "character": char + 1}}
	}
	d.answer(req, obj{"diagnostics": []obj{
		{"path": a, "range": rng(11, 4), "severity": 1, "message": "undefined: x", "source": "compiler", "code": "UndeclaredName"},
		{"path": a, "range": rng(0, 0), "severity": 2, "message": "unused"},
		{"path": c, "range": rng(0, 0), "severity": 1, "message": "syntax error\nnear new"},
		{"path": filepath.Join(dir, "z.txt"), "range": rng(0, 0), "severity": 1, "message": "elsewhere"},
	}})
	msgs := d.result(promptID).Get("messages").Array()
	byID := map[string]int{}
	for i, m := range msgs {
		byID[m.Get("toolCallId").String()] = i
	}
	e1, w1 := msgs[byID["e1"]], msgs[byID["w1"]]
	if got := e1.Get("content.1.text").String(); got != "Problems the editor reports in a.txt after this change:\nL12:5 undefined: x (compiler)" {
		t.Errorf("edit's problems = %q", got)
	}
	if !strings.HasPrefix(e1.Get("content.0.text").String(), "Edited a.txt") {
		t.Errorf("the tool's own text is not first: %s", e1.Get("content").Raw)
	}
	if n := len(e1.Get("details.diagnostics").Array()); n != 2 || e1.Get("details.diagnostics.0.code").String() != "UndeclaredName" {
		t.Errorf("edit's details.diagnostics = %s", e1.Get("details.diagnostics").Raw)
	}
	if got := w1.Get("content.1.text").String(); got != "Problems the editor reports in c.txt after this change:\nL1:1 syntax error near new" {
		t.Errorf("write's problems = %q", got)
	}
	if strings.Contains(msgs[byID["g1"]].Raw, "Problems") {
		t.Errorf("grep's result got problems: %s", msgs[byID["g1"]].Raw)
	}
	n := 0
	for _, m := range d.snapshot() {
		if m.isRequest() && m.method() == "editor/diagnostics" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d editor/diagnostics requests, want 1", n)
	}
}

// An editor whose language server for a.txt was still starting says so (starting): the
// edit's result tells the model its problems may come later and to call diagnostics before
// it finishes; the write's file, reported on, gets no such line; a path the batch did not
// change is ignored.
func TestEditorDiagnosticsStarting(t *testing.T) {
	d, dir, _, promptID, _ := diagSession(t, 700)
	req := d.await("editor/diagnostics", func(m *wireMsg) bool { return m.isRequest() && m.method() == "editor/diagnostics" })
	a := filepath.Join(dir, "a.txt")
	d.answer(req, obj{"diagnostics": []obj{}, "starting": []string{a, filepath.Join(dir, "z.txt")}})
	msgs := d.result(promptID).Get("messages").Array()
	byID := map[string]gjson.Result{}
	for _, m := range msgs {
		byID[m.Get("toolCallId").String()] = m
	}
	if got := byID["e1"].Get("content.1.text").String(); got != "The language server for a.txt was still starting: problems may come later; call diagnostics before you finish." {
		t.Errorf("edit's second block = %q (content %s)", got, byID["e1"].Get("content").Raw)
	}
	if got := byID["w1"].Get("content.#").Int(); got != 1 {
		t.Errorf("the write's result has %d blocks, want its own text alone: %s", got, byID["w1"].Get("content").Raw)
	}
}

// An editor that never answers: the edit's result comes waitMs plus a second after the
// request (so at least that long after the prompt), without problems; pid withdraws its
// request and logs why.
func TestEditorDiagnosticsNeverAnswered(t *testing.T) {
	d, _, _, promptID, sent := diagSession(t, 100)
	req := d.await("editor/diagnostics", func(m *wireMsg) bool { return m.isRequest() && m.method() == "editor/diagnostics" })
	end := d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "e1" })
	if waited := time.Since(sent); waited < 1100*time.Millisecond {
		t.Errorf("the edit ended %v after the prompt was sent, before waitMs + 1 s", waited)
	}
	if got := end.get("params.result.content.#").Int(); got != 1 || end.get("params.result.details.diagnostics").Exists() {
		t.Errorf("result = %s, want the tool's text alone and no details.diagnostics", end.get("params.result").Raw)
	}
	d.await("$/cancelRequest for editor/diagnostics", func(m *wireMsg) bool {
		return m.method() == "$/cancelRequest" && m.get("params.id").Raw == req.get("id").Raw
	})
	d.notification("window/logMessage", func(m *wireMsg) bool {
		return strings.Contains(m.get("params.message").String(), "did not answer editor/diagnostics within 1.1s")
	})
	d.result(promptID)
}

// An editor that answers with an error adds nothing; the error is logged.
func TestEditorDiagnosticsError(t *testing.T) {
	d, _, _, promptID, _ := diagSession(t, 100)
	req := d.await("editor/diagnostics", func(m *wireMsg) bool { return m.isRequest() && m.method() == "editor/diagnostics" })
	d.answerError(req, -32603, "no language server")
	end := d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "e1" })
	if end.get("params.result.content.#").Int() != 1 {
		t.Errorf("result = %s", end.get("params.result").Raw)
	}
	d.notification("window/logMessage", func(m *wireMsg) bool {
		return strings.Contains(m.get("params.message").String(), "no language server")
	})
	d.result(promptID)
}

// lspConfig is a session's "lsp" naming the test server for .tst files.
var lspConfig = obj{"test": obj{"command": []string{"lspserver"}, "extensions": []string{".tst"}}}

// waitServer polls lsp/servers until the test server is in state with at least restarts.
func waitServer(t *testing.T, d *daemon, state string, restarts int64) string {
	t.Helper()
	var s gjson.Result
	proctest.WaitUntilState(t, 15*time.Second, fmt.Sprintf("lsp/servers to show the server %s, restarted %d times", state, restarts), func() (bool, string) {
		s = d.call("lsp/servers", obj{}).Get("servers.0")
		return s.Get("state").String() == state && s.Get("restarts").Int() >= restarts, s.Raw
	})
	return s.Raw
}

// Without the editor's capability pid starts its own server for a matching extension: the
// write's result names the BROKEN line; lsp/servers shows the server ready in the folder;
// the diagnostics tool lists the file's problems; a crash (a file containing CRASH) fails
// the server with its stderr, it restarts after its backoff, and serves the next write.
func TestOwnLanguageServer(t *testing.T) {
	dir := t.TempDir()
	d := startInProcess(t)
	d.initialize(nil)
	if got := d.call("lsp/servers", obj{}).Get("servers").Raw; got != "[]" {
		t.Fatalf("lsp/servers before any need = %s", got)
	}
	sid := d.newSession(obj{"cwd": dir, "permissions": obj{"default": "allow"}, "lsp": lspConfig, "model": scriptModel(
		turn(toolCall("w1", "write", obj{"path": "a.tst", "content": "fine\n  BROKEN\nWARN\n"}), toolCall("w2", "write", obj{"path": "notes.txt", "content": "BROKEN\n"})),
		turn(toolCall("d1", "diagnostics", obj{}), toolCall("d2", "diagnostics", obj{"path": "notes.txt"})),
		turn(text("done")),
		turn(toolCall("w3", "write", obj{"path": "b.tst", "content": "CRASH\n"})),
		turn(text("crashed")),
		turn(toolCall("w4", "write", obj{"path": "c.tst", "content": "BROKEN again\n"})),
		turn(toolCall("r1", "read", obj{"path": "a.tst"})),
		turn(toolCall("e1", "edit", obj{"path": "a.tst", "edits": []obj{{"oldText": "fine", "newText": "fine BROKEN"}}})),
		turn(text("done again")))})
	msgs := d.call("session/prompt", obj{"sessionId": sid, "text": "go"}).Get("messages").Array()
	w1, w2, d1 := msgs[2], msgs[3], msgs[5]
	if got := w1.Get("content.1.text").String(); got != "Problems the language server reports in a.tst after this change:\nL2:3 BROKEN is not allowed here (pidtestlsp)" {
		t.Errorf("write's problems = %q (%s)", got, w1.Raw)
	}
	if n := len(w1.Get("details.diagnostics").Array()); n != 2 {
		t.Errorf("details.diagnostics = %s, want the error and the warning", w1.Get("details.diagnostics").Raw)
	}
	if w2.Get("content.#").Int() != 1 || w2.Get("details.diagnostics").Exists() {
		t.Errorf("a file no server is for got problems: %s", w2.Raw)
	}
	if got := d1.Get("content.0.text").String(); got != "a.tst: 1 errors, 1 warnings\nL2:3 error: BROKEN is not allowed here (pidtestlsp)\nL3:1 warning: WARN is discouraged (pidtestlsp)" {
		t.Errorf("diagnostics tool = %q", got)
	}
	if got := msgs[6].Get("content.0.text").String(); !strings.HasPrefix(got, "No language server is set up for notes.txt") {
		t.Errorf("diagnostics tool on a file no server is for = %q", got)
	}
	st := waitServer(t, d, "ready", 0)
	if !strings.Contains(st, `"name":"test"`) || !strings.Contains(st, `"folder":"`+dir+`"`) {
		t.Errorf("lsp/servers = %s", st)
	}
	// The crash.
	msgs = d.call("session/prompt", obj{"sessionId": sid, "text": "crash"}).Get("messages").Array()
	if w3 := msgs[len(msgs)-2]; w3.Get("content.#").Int() != 1 || w3.Get("details.diagnostics").Exists() {
		t.Errorf("the write that crashed the server got problems: %s", w3.Raw)
	}
	waitServer(t, d, "ready", 1)
	msgs = d.call("session/prompt", obj{"sessionId": sid, "text": "again"}).Get("messages").Array()
	if got := msgs[2].Get("content.1.text").String(); !strings.Contains(got, "in c.tst after this change:\nL1:1 BROKEN") {
		t.Errorf("after the restart: %q", got)
	}
	// An edit: the server (restarted, so told the file anew) reports both BROKEN lines of
	// the new text.
	e1 := msgs[len(msgs)-2]
	if got := e1.Get("content.1.text").String(); got != "Problems the language server reports in a.tst after this change:\nL1:6 BROKEN is not allowed here (pidtestlsp)\nL2:3 BROKEN is not allowed here (pidtestlsp)" {
		t.Errorf("the edit's problems = %q (%s)", got, e1.Raw)
	}
}

// The server's stderr is kept in lsp/servers' error after a crash.
func TestOwnLanguageServerCrashError(t *testing.T) {
	dir := t.TempDir()
	d := startInProcess(t)
	d.initialize(nil)
	sid := d.newSession(obj{"cwd": dir, "permissions": obj{"default": "allow"}, "lsp": lspConfig, "model": scriptModel(
		turn(toolCall("w1", "write", obj{"path": "b.tst", "content": "CRASH\n"})), turn(text("done")))})
	d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
	// Whichever state the restart has reached, the last failure's error stays until the
	// server is ready again; poll for a state that shows it.
	proctest.WaitUntilState(t, 15*time.Second, "lsp/servers to show the server's stderr", func() (bool, string) {
		s := d.call("lsp/servers", obj{}).Get("servers.0")
		return strings.Contains(s.Get("error").String(), "crashing as asked"), s.Raw
	})
}

// A workspace's own lsp starts nothing until the folder is trusted: the trust question lists
// it, a session there has no diagnostics tool and its writes get no problems; once trusted,
// a new session's server starts and reports.
func TestWorkspaceLSPNeedsTrust(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{".pid/settings.json": `{"lsp":{"test":{"command":["lspserver"],"extensions":[".tst"]}}}`})
	d := startInProcess(t)
	initWorkspace(d, obj{"trust": true}, ws)
	model := func(file string) obj {
		return scriptModel(turn(toolCall("w1", "write", obj{"path": file, "content": "BROKEN\n"})), turn(text("done")))
	}
	newID := d.request("session/new", obj{"permissions": obj{"default": "allow"}, "model": model("a.tst")})
	req := d.await("workspace/requestTrust", func(m *wireMsg) bool { return m.isRequest() && m.method() == "workspace/requestTrust" })
	if !strings.Contains(req.get("params.ignored").Raw, `"lsp"`) {
		t.Errorf("requestTrust's ignored = %s, want lsp listed", req.get("params.ignored").Raw)
	}
	d.answer(req, obj{"trusted": false})
	res := d.result(newID)
	if strings.Contains(res.Get("tools").Raw, `"diagnostics"`) {
		t.Errorf("a session with only an untrusted workspace's servers has the diagnostics tool")
	}
	sid := res.Get("sessionId").String()
	msgs := d.call("session/prompt", obj{"sessionId": sid, "text": "go"}).Get("messages").Array()
	if w1 := msgs[2]; w1.Get("content.#").Int() != 1 || w1.Get("details.diagnostics").Exists() {
		t.Errorf("untrusted: the write got problems: %s", w1.Raw)
	}
	if got := d.call("lsp/servers", obj{}).Get("servers").Raw; got != "[]" {
		t.Fatalf("untrusted: lsp/servers = %s, want none started", got)
	}
	d.call("trust/grant", obj{"folder": ws})
	sid = d.newSession(obj{"permissions": obj{"default": "allow"}, "model": model("b.tst")})
	msgs = d.call("session/prompt", obj{"sessionId": sid, "text": "go"}).Get("messages").Array()
	if got := msgs[2].Get("content.1.text").String(); !strings.Contains(got, "L1:1 BROKEN is not allowed here") {
		t.Errorf("trusted: the write's problems = %q", got)
	}
	if got := d.call("lsp/servers", obj{}).Get("servers.0.state").String(); got != "ready" {
		t.Errorf("trusted: server state %q", got)
	}
}

// running returns the ids of the processes whose program is bin.
func running(bin string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if prog, _, _ := strings.Cut(string(cmd), "\x00"); prog == bin {
			out = append(out, e.Name())
		}
	}
	return out
}

// pid's language servers stop with the daemon, whether it exits after shutdown or is killed
// with SIGKILL.
func TestLanguageServersStopWithTheDaemon(t *testing.T) {
	src, err := exec.LookPath("lspserver")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"exit", "kill"} {
		t.Run(how, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "lspserver-"+how)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			d := startProcess(t, processOptions{})
			d.initialize(nil)
			sid := d.newSession(obj{"cwd": dir, "permissions": obj{"default": "allow"}, "lsp": obj{"test": obj{"command": []string{bin}, "extensions": []string{".tst"}}},
				"model": scriptModel(turn(toolCall("w1", "write", obj{"path": "a.tst", "content": "BROKEN\n"})), turn(text("done")))})
			d.call("session/prompt", obj{"sessionId": sid, "text": "go"})
			if got := d.call("lsp/servers", obj{}).Get("servers.0.state").String(); got != "ready" || len(running(bin)) != 1 {
				t.Fatalf("server state %q, %d processes of it; want ready and one", got, len(running(bin)))
			}
			if how == "exit" {
				d.call("shutdown", nil)
				d.notify("exit", nil)
				if code := d.wait(); code != 0 {
					t.Errorf("exit code %d", code)
				}
			} else {
				d.kill()
			}
			proctest.WaitUntilState(t, 5*time.Second, "the language server to end with the daemon", func() (bool, string) {
				ps := running(bin)
				return len(ps) == 0, fmt.Sprint(ps)
			})
		})
	}
}

// A prompt cancelled while pid waits for editor/diagnostics withdraws the request at once
// (long before waitMs), and the edits keep their own results, nothing added.
func TestEditorDiagnosticsCancelled(t *testing.T) {
	d, _, _, promptID, _ := diagSession(t, 60000)
	req := d.await("editor/diagnostics", func(m *wireMsg) bool { return m.isRequest() && m.method() == "editor/diagnostics" })
	d.cancel(promptID)
	d.await("$/cancelRequest for editor/diagnostics", func(m *wireMsg) bool {
		return m.method() == "$/cancelRequest" && m.get("params.id").Raw == req.get("id").Raw
	})
	res := d.result(promptID)
	if res.Get("stopReason").String() != "aborted" {
		t.Errorf("stopReason = %s", res.Get("stopReason").Raw)
	}
	for _, m := range res.Get("messages").Array() {
		if id := m.Get("toolCallId").String(); id == "e1" || id == "w1" {
			if m.Get("content.#").Int() != 1 || m.Get("details.diagnostics").Exists() || m.Get("isError").Bool() {
				t.Errorf("%s after the cancel: %s", id, m.Raw)
			}
		}
	}
	for _, m := range d.logMessages() {
		if strings.Contains(m.get("params.message").String(), "editor/diagnostics") {
			t.Errorf("a cancel is not a failure to log: %s", m)
		}
	}
}

package acp

// Issue 26 on the ACP face: without an editor to ask, pid's own language server (the
// session's lsp, here through _meta.pid) reports on what an edit wrote, and it reads the text
// the tools wrote where they wrote it: the client's buffer (fs/write_text_file), not the disk.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	lspOnce sync.Once
	lspBin  string
	lspErr  error
)

// testLSP builds testdata/lspserver once per test run.
func testLSP(t *testing.T) string {
	t.Helper()
	lspOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pid-acp-lsp-")
		if err != nil {
			lspErr = err
			return
		}
		lspBin = filepath.Join(dir, "lspserver")
		if out, err := exec.Command("go", "build", "-o", lspBin, "github.com/pid-agent/pid/testdata/lspserver").CombinedOutput(); err != nil {
			lspErr = err
			t.Logf("%s", out)
		}
	})
	if lspErr != nil {
		t.Fatalf("building the test language server: %v", lspErr)
	}
	return lspBin
}

func TestOwnLanguageServerThroughTheClientsBuffers(t *testing.T) {
	bin := testLSP(t)
	c := start(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sid := c.newSession(dir, script(`"permissions":{"default":"allow"},"lsp":{"test":{"command":["`+bin+`"],"extensions":[".tst"]}}`,
		toolTurn(call("w1", "write", `{"path":"a.tst","content":"fine\nBROKEN\n"}`)),
		textTurn("done")))
	buffers := map[string]string{}
	res, ms := c.result(c.prompt(sid, "go"), func(m *msg) {
		switch m.Method {
		case "fs/write_text_file":
			buffers[m.get("params.path").String()] = m.get("params.content").String()
			c.respond(m, map[string]any{})
		case "fs/read_text_file":
			text, ok := buffers[m.get("params.path").String()]
			if !ok {
				c.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32002,"message":"no such buffer"}}`)
				return
			}
			c.respond(m, map[string]any{"content": text})
		default:
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt answered %s", res.Raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.tst")); err == nil {
		t.Fatal("the write reached the disk; the test means the client's buffer alone to hold it")
	}
	var done string
	for _, u := range updates(t, sid, ms) {
		if u.Get("sessionUpdate").String() == "tool_call_update" && u.Get("toolCallId").String() == "w1" && u.Get("status").String() == "completed" {
			done = u.Get("rawOutput").Raw
		}
	}
	if !strings.Contains(done, `Problems the language server reports in a.tst after this change:\nL2:1 BROKEN is not allowed here (pidtestlsp)`) {
		t.Fatalf("the write's completed update does not name the problem: %s", done)
	}
}

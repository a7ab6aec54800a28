// ACP 1.25's session lifecycle additions: additionalDirectories on session/new and
// session/load (extra workspace folders the file tools reach), and session/fork, whole
// or at a message (_meta.pid.messageCount).

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// readStatus returns the final status of tool call id among a prompt's messages, and its text.
func readStatus(t *testing.T, sid string, before []*msg, id string) (status, text string) {
	t.Helper()
	for _, u := range updates(t, sid, before) {
		if u.Get("toolCallId").String() == id && u.Get("sessionUpdate").String() == "tool_call_update" {
			status, text = u.Get("status").String(), u.Get("content.0.content.text").String()
		}
	}
	return status, text
}

func TestAdditionalDirectories(t *testing.T) {
	cwd, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "notes.txt")
	os.WriteFile(file, []byte("from the other root\n"), 0o644)
	read := toolTurn(call("r1", "read", `{"path":"`+file+`"}`))
	c := start(t)
	c.initialize(nil)
	newIn := func(dirs []any, cfg string) gjson.Result {
		res, _ := c.result(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": dirs,
			"_meta": map[string]any{"pid": gjson.Parse(cfg).Value()}}), nil)
		return res
	}
	sid := newIn([]any{other}, script("", read, textTurn("read"), read, textTurn("again"))).Get("sessionId").String()
	_, before := c.result(c.prompt(sid, "read it"), nil)
	if st, text := readStatus(t, sid, before, "r1"); st != "completed" || !strings.Contains(text, "from the other root") {
		t.Errorf("read in an additional directory: %s %q", st, text)
	}
	// Without it, the folder is outside the session's workspace.
	plain := newIn([]any{}, script("", read, textTurn("read"))).Get("sessionId").String()
	_, before = c.result(c.prompt(plain, "read it"), nil)
	if st, _ := readStatus(t, plain, before, "r1"); st != "failed" {
		t.Errorf("read outside the workspace: %s", st)
	}
	// A relative or missing folder is refused.
	for _, bad := range []string{"rel/dir", filepath.Join(other, "missing")} {
		m := c.wantError(c.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []any{bad}}), codeInvalidParams)
		if !strings.Contains(m.Error.Message, bad) {
			t.Errorf("the error does not name %q: %s", bad, m.raw)
		}
	}
	// session/load takes them too: the loaded session reads there again.
	c.stop()
	c2 := start(t)
	c2.initialize(nil)
	p := loadParams(sid, cwd)
	p["additionalDirectories"] = []any{other}
	c2.result(c2.request("session/load", p), nil)
	_, before = c2.result(c2.prompt(sid, "again"), nil)
	if st, text := readStatus(t, sid, before, "r1"); st != "completed" || !strings.Contains(text, "from the other root") {
		t.Errorf("read in an additional directory after session/load: %s %q", st, text)
	}
}

func TestSessionFork(t *testing.T) {
	cwd := t.TempDir()
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(cwd, script("", textTurn("first answer"), textTurn("second answer"), textTurn("third answer")))
	c.result(c.prompt(sid, "one"), nil)
	c.result(c.prompt(sid, "two"), nil)
	fork := func(meta map[string]any) *msg {
		p := map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
		if meta != nil {
			p["_meta"] = map[string]any{"pid": meta}
		}
		r, _ := c.until(c.request("session/fork", p), nil)
		return r
	}
	whole := fork(nil)
	fid := whole.get("result.sessionId").String()
	if whole.Error != nil || fid == "" || fid == sid || !whole.get("result.modes").Exists() || !whole.get("result.configOptions").Exists() {
		t.Fatalf("session/fork: %s", whole.raw)
	}
	// The fork goes on from the whole conversation, with the model where it stood.
	res, before := c.result(c.prompt(fid, "three"), nil)
	if res.Get("stopReason").String() != "end_turn" || !strings.Contains(talk(t, fid, before), "third answer") {
		t.Errorf("the fork's prompt: %s %q", res.Raw, talk(t, fid, before))
	}
	// At a message: the first two items (the first exchange) only.
	at := fork(map[string]any{"messageCount": 2})
	aid := at.get("result.sessionId").String()
	_, replay := c.result(c.request("session/load", loadParams(aid, cwd)), nil)
	if got := talk(t, aid, replay); got != "onefirst answer" {
		t.Errorf("the fork at message 2 replays %q, want the first exchange", got)
	}
	// The original is untouched.
	_, replay = c.result(c.request("session/load", loadParams(sid, cwd)), nil)
	if got := talk(t, sid, replay); got != "onefirst answertwosecond answer" {
		t.Errorf("the original replays %q", got)
	}
	if m := fork(map[string]any{"messageCount": 99}); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("a count out of range: %s", m.raw)
	}
	r, _ := c.until(c.request("session/fork", map[string]any{"sessionId": "0mx4y7xftz50k0wsj8es1k90m", "cwd": cwd}), nil)
	if r.Error == nil || r.Error.Code != codeNotFound {
		t.Errorf("an unknown session: %s", r.raw)
	}
}

// talk joins the text of the user and agent message chunks among ms.
func talk(t *testing.T, sid string, ms []*msg) string {
	t.Helper()
	var b strings.Builder
	for _, u := range updates(t, sid, ms) {
		switch u.Get("sessionUpdate").String() {
		case "user_message_chunk", "agent_message_chunk":
			b.WriteString(u.Get("content.text").String())
		}
	}
	return b.String()
}

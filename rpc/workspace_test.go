// This file tests issue 4's features through the protocol: the built-in tools in a workspace
// named by initialize's workspaceFolders (confinement, stale edits), the permission policy
// and its sources (defaults, the session's rules, a workspace settings file reloaded on
// change), remembered "always" answers across a restart and permissions/list|revoke, the
// redaction and audit afterToolCall rules, and bash's abort. Every test runs with settings,
// remembered answers and the audit log in folders of its own.

package rpc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/proctest"
)

// pollDeadline bounds the polls of this file (a settings reload, a process going away).
// Reaching it is a failure, not a retry.
const pollDeadline = 10 * time.Second

// xdgDirs points XDG_CONFIG_HOME and XDG_STATE_HOME at fresh folders of the test's, for the
// in-process daemon (which reads them at initialize) and for child processes started after.
func xdgDirs(t *testing.T) (config, state string) {
	t.Helper()
	config, state = filepath.Join(t.TempDir(), "config"), filepath.Join(t.TempDir(), "state")
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("XDG_STATE_HOME", state)
	return config, state
}

// blockStateDir points XDG_STATE_HOME at a file, for the length of the test, so that the
// state folder (remembered permissions, the audit log) cannot be made.
func blockStateDir(t *testing.T) {
	t.Helper()
	blocked := filepath.Join(t.TempDir(), "state-is-a-file")
	wsWriteFile(t, blocked, "")
	t.Setenv("XDG_STATE_HOME", blocked)
}

// newWorkspaceDir returns a workspace folder inside a temp folder of the test's (so that
// paths outside the workspace still land in a folder the test owns and checks), holding the
// given files.
func newWorkspaceDir(t *testing.T, files map[string]string) (base, ws string) {
	t.Helper()
	base = t.TempDir()
	ws = filepath.Join(base, "my ws") // a space: the URI is percent-encoded
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		wsWriteFile(t, filepath.Join(ws, name), content)
	}
	return base, ws
}

func wsWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeAtomically replaces path's content by renaming a temporary file over it, as editors
// save, so that a reload never reads a half-written file.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+wsRandomHex(t, 4))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func wsReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wsExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func wsRandomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func wsFileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// initWorkspace sends initialize with capabilities.experimental.pid = pidCaps and the given
// folders as workspaceFolders [{uri, name}], then initialized.
func initWorkspace(d *daemon, pidCaps map[string]any, roots ...string) gjson.Result {
	d.t.Helper()
	folders := []obj{}
	for _, r := range roots {
		folders = append(folders, obj{"uri": wsFileURI(r), "name": filepath.Base(r)})
	}
	params := obj{"capabilities": obj{"experimental": obj{"pid": pidCaps}}, "workspaceFolders": folders}
	res := d.call("initialize", params)
	d.notify("initialized", obj{})
	return res
}

// wsCall is one tool call of a batch.
func wsCall(id, name string, args obj) obj { return obj{"id": id, "name": name, "arguments": args} }

// wsAnswerer answers a request pid sends the editor during a batch (beforeToolCall,
// afterToolCall, or the window/showMessageRequest fallback); nil is sent as JSON null.
type wsAnswerer func(req *wireMsg) any

// wsBatch is what wsExecute saw: the tools/execute result, and the requests pid sent the
// editor for the batch's calls, in order.
type wsBatch struct {
	res      gjson.Result
	requests []*wireMsg
}

// asked returns the toolCallIds the editor was asked to approve (beforeToolCall).
func (b wsBatch) asked() []string {
	var ids []string
	for _, r := range b.requests {
		if r.method() == "beforeToolCall" {
			ids = append(ids, r.get("params.toolCallId").String())
		}
	}
	return ids
}

// msg returns the result message of call id.
func (b wsBatch) msg(t *testing.T, id string) gjson.Result {
	t.Helper()
	for _, m := range b.res.Get("messages").Array() {
		if m.Get("toolCallId").String() == id {
			return m
		}
	}
	t.Fatalf("no result message for %s in %s", id, b.res.Raw)
	return gjson.Result{}
}

// wsText joins the text blocks of a result's content.
func wsText(r gjson.Result) string {
	var sb strings.Builder
	for _, c := range r.Get("content").Array() {
		sb.WriteString(c.Get("text").String())
	}
	return sb.String()
}

// wsExecute runs one tools/execute batch and answers every request pid sends the editor about
// the batch's calls with answer; a nil answer fails the test on any such request (and
// denies it, so the batch still ends).
func wsExecute(t *testing.T, d *daemon, sid string, mode string, answer wsAnswerer, calls ...obj) wsBatch {
	t.Helper()
	ids := map[string]bool{}
	for _, c := range calls {
		ids[c["id"].(string)] = true
	}
	params := obj{"sessionId": sid, "toolCalls": calls}
	if mode != "" {
		params["toolExecution"] = mode
	}
	start := len(d.snapshot()) // requests before this batch belong to earlier ones
	id := d.request("tools/execute", params)
	handled := map[int]bool{}
	var out wsBatch
	for {
		m := d.await("the response to tools/execute "+id+" or a request about its calls", func(m *wireMsg) bool {
			if m.isResponse() && m.id() == id {
				return true
			}
			if !m.isRequest() || handled[m.seq] || m.seq < start {
				return false
			}
			// The showMessageRequest fallback names neither the session nor the call.
			return m.method() == "window/showMessageRequest" ||
				m.get("params.sessionId").String() == sid && ids[m.get("params.toolCallId").String()]
		})
		if m.isResponse() {
			if m.get("error").Exists() {
				t.Fatalf("tools/execute failed: %s", m)
			}
			out.res = m.get("result")
			return out
		}
		handled[m.seq] = true
		out.requests = append(out.requests, m)
		if answer == nil {
			t.Errorf("unexpected request from pid: %s", m)
			d.answer(m, obj{"decision": "deny", "reason": "unexpected"})
			continue
		}
		d.answer(m, answer(m))
	}
}

// wsDecide answers every beforeToolCall with decision (afterToolCall requests with null).
func wsDecide(decision string) wsAnswerer {
	return func(m *wireMsg) any {
		if m.method() == "beforeToolCall" {
			return obj{"decision": decision}
		}
		return nil
	}
}

// wsOne runs a batch of one call and returns its result message.
func wsOne(t *testing.T, d *daemon, sid string, answer wsAnswerer, id, name string, args obj) (gjson.Result, wsBatch) {
	t.Helper()
	b := wsExecute(t, d, sid, "", answer, wsCall(id, name, args))
	return b.msg(t, id), b
}

// wsWantOK fails unless the result message is a success.
func wsWantOK(t *testing.T, m gjson.Result) {
	t.Helper()
	if m.Get("isError").Bool() || !m.Get("isError").Exists() {
		t.Fatalf("want a successful result, got %s", m.Raw)
	}
}

// wsWantError fails unless the result message is an error whose text holds every part.
func wsWantError(t *testing.T, m gjson.Result, parts ...string) {
	t.Helper()
	if !m.Get("isError").Bool() {
		t.Fatalf("want an error result, got %s", m.Raw)
	}
	txt := wsText(m)
	for _, p := range parts {
		if !strings.Contains(txt, p) {
			t.Errorf("error text %q does not contain %q", txt, p)
		}
	}
}

// startWorkspaceDaemon starts an in-process daemon with XDG folders of the test's, declares
// beforeToolCall, and names ws as the only workspace folder.
func startWorkspaceDaemon(t *testing.T, ws string) (*daemon, gjson.Result) {
	t.Helper()
	xdgDirs(t)
	d := startInProcess(t)
	res := initWorkspace(d, obj{"beforeToolCall": true}, ws)
	return d, res
}

// trustWorkspace lists ws in the user settings' trustedFolders (after xdgDirs), so that its
// .pid/settings.json is a full layer; trust_test.go covers untrusted folders.
func trustWorkspace(t *testing.T, ws string, user obj) {
	t.Helper()
	if user == nil {
		user = obj{}
	}
	user["trustedFolders"] = []string{ws}
	writeAtomically(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pid", "settings.json"), mustJSON(user))
}

// startTrustedWorkspaceDaemon is startWorkspaceDaemon with ws trusted.
func startTrustedWorkspaceDaemon(t *testing.T, ws string) (*daemon, gjson.Result) {
	t.Helper()
	xdgDirs(t)
	trustWorkspace(t, ws, nil)
	d := startInProcess(t)
	res := initWorkspace(d, obj{"beforeToolCall": true}, ws)
	return d, res
}

func TestWorkspaceBuiltinTools(t *testing.T) {
	base, ws := newWorkspaceDir(t, map[string]string{"a.txt": "alpha\nbeta\ngamma\n"})
	wsWriteFile(t, filepath.Join(base, "secret.txt"), "s3cret-outside\n")
	if err := os.Mkdir(filepath.Join(base, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outdir"), filepath.Join(ws, "outlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(ws, "secretlink")); err != nil {
		t.Fatal(err)
	}
	d, init := startWorkspaceDaemon(t, ws)
	var names []string
	for _, tl := range init.Get("capabilities.experimental.pid.tools").Array() {
		names = append(names, tl.Get("name").String())
	}
	for _, want := range []string{"read", "write", "edit", "bash", "grep", "find", "ls"} {
		if !slices.Contains(names, want) {
			t.Errorf("initialize lists tools %v, missing %s", names, want)
		}
	}
	// Everything allowed: what is refused below is refused by the tools, not by approvals.
	sid := d.newSession(obj{"permissions": obj{"default": "allow"}})
	var listed []string
	for _, tl := range d.call("tools/list", obj{"sessionId": sid}).Get("tools").Array() {
		listed = append(listed, tl.Get("name").String())
	}
	if !slices.Equal(listed, names) {
		t.Errorf("tools/list = %v, want the built-in tools %v", listed, names)
	}

	t.Run("read", func(t *testing.T) {
		m, _ := wsOne(t, d, sid, nil, "r1", "read", obj{"path": "a.txt"})
		wsWantOK(t, m)
		if got, want := wsText(m), "     1\talpha\n     2\tbeta\n     3\tgamma"; !strings.Contains(got, want) {
			t.Errorf("read text %q, want line numbers %q", got, want)
		}
		if got := m.Get("details.totalLines").Int(); got != 3 {
			t.Errorf("details.totalLines = %d, want 3: %s", got, m.Raw)
		}
	})
	t.Run("write creates a file", func(t *testing.T) {
		m, _ := wsOne(t, d, sid, nil, "w1", "write", obj{"path": "sub/dir/new.txt", "content": "hello\nworld\n"})
		wsWantOK(t, m)
		if got := wsReadFile(t, filepath.Join(ws, "sub", "dir", "new.txt")); got != "hello\nworld\n" {
			t.Errorf("on disk: %q", got)
		}
		if !m.Get("details.created").Bool() || !strings.Contains(m.Get("details.diff").String(), "+hello") {
			t.Errorf("details %s, want created and a diff", m.Get("details").Raw)
		}
	})
	t.Run("edit in the older single form", func(t *testing.T) {
		// The read subtest above read a.txt in this session.
		m, _ := wsOne(t, d, sid, nil, "e1", "edit", obj{"path": "a.txt", "oldText": "beta", "newText": "BETA"})
		wsWantOK(t, m)
		if got := wsReadFile(t, filepath.Join(ws, "a.txt")); got != "alpha\nBETA\ngamma\n" {
			t.Errorf("on disk: %q", got)
		}
		if got := m.Get("details.firstChangedLine").Int(); got != 2 {
			t.Errorf("details.firstChangedLine = %d, want 2: %s", got, m.Raw)
		}
		if !strings.Contains(wsText(m), "Edited a.txt") {
			t.Errorf("text %q", wsText(m))
		}
	})
	t.Run("grep without a match is not an error", func(t *testing.T) {
		m, _ := wsOne(t, d, sid, nil, "g1", "grep", obj{"pattern": "no-such-text-[0-9]{9}"})
		wsWantOK(t, m)
		if !strings.Contains(wsText(m), "No matches") {
			t.Errorf("text %q, want No matches", wsText(m))
		}
		m, _ = wsOne(t, d, sid, nil, "g2", "grep", obj{"pattern": "gamma"})
		wsWantOK(t, m)
		if !strings.Contains(wsText(m), "a.txt:3: gamma") {
			t.Errorf("text %q, want the match", wsText(m))
		}
	})
	t.Run("escapes", func(t *testing.T) {
		for i, tc := range []struct {
			name string
			args obj
		}{
			{"write", obj{"path": "../outside.txt", "content": "x"}},
			{"write", obj{"path": "sub/../../outside2.txt", "content": "x"}},
			{"write", obj{"path": filepath.Join(base, "abs.txt"), "content": "x"}},
			{"write", obj{"path": "outlink/x.txt", "content": "x"}},
			{"write", obj{"path": "secretlink", "content": "overwritten"}},
			{"edit", obj{"path": "secretlink", "oldText": "s3cret", "newText": "changed"}},
			{"edit", obj{"path": "../secret.txt", "edits": []obj{{"oldText": "s3cret", "newText": "changed"}}}},
			{"read", obj{"path": "/etc/passwd"}},
			{"read", obj{"path": "secretlink"}},
			{"read", obj{"path": "../secret.txt"}},
			{"read", obj{"path": "outlink/../../secret.txt"}},
			{"ls", obj{"path": ".."}},
			{"ls", obj{"path": "outlink"}},
			{"grep", obj{"pattern": "s3cret", "path": ".."}},
			{"find", obj{"pattern": "*", "path": "outlink"}},
		} {
			id := fmt.Sprintf("x%d", i)
			m, _ := wsOne(t, d, sid, nil, id, tc.name, tc.args)
			wsWantError(t, m, "outside the workspace folders")
			if strings.Contains(wsText(m), "s3cret-outside") || strings.Contains(wsText(m), "root:") {
				t.Errorf("%s %v leaked content: %s", tc.name, tc.args, m.Raw)
			}
		}
		// Nothing was written outside the workspace.
		entries, err := os.ReadDir(base)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if want := []string{"my ws", "outdir", "secret.txt"}; !slices.Equal(got, want) {
			t.Errorf("outside the workspace: %v, want %v", got, want)
		}
		if out, _ := os.ReadDir(filepath.Join(base, "outdir")); len(out) != 0 {
			t.Errorf("outdir holds %v, want nothing", out)
		}
		if got := wsReadFile(t, filepath.Join(base, "secret.txt")); got != "s3cret-outside\n" {
			t.Errorf("secret.txt changed: %q", got)
		}
		if fi, err := os.Lstat(filepath.Join(ws, "secretlink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("secretlink is no longer a link: %v %v", fi, err)
		}
	})
}

func TestWorkspaceRootURIAndBadFolders(t *testing.T) {
	base, ws := newWorkspaceDir(t, map[string]string{"in.txt": "inside\n"})
	wsWriteFile(t, filepath.Join(base, "out.txt"), "outside\n")
	xdgDirs(t)
	// rootUri when there are no workspaceFolders.
	d := startInProcess(t)
	d.call("initialize", obj{"capabilities": obj{}, "rootUri": wsFileURI(ws)})
	sid := d.newSession(obj{})
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "r1", "read", obj{"path": "in.txt"})))
	wsWantError(t, wsFirst(wsOne(t, d, sid, nil, "r2", "read", obj{"path": "../out.txt"})), "outside the workspace folders", ws)
	// A cwd outside the folders is refused.
	if code, msg := d.callErr("session/new", obj{"cwd": base}); code != -32602 || !strings.Contains(msg, "outside the workspace folders") {
		t.Errorf("session/new with a cwd outside: %d %q, want -32602", code, msg)
	}
	// A folder that is not a file: URI is refused by initialize.
	d2 := startInProcess(t)
	code, msg := d2.callErr("initialize", obj{"capabilities": obj{}, "workspaceFolders": []obj{{"uri": "https://example.com/x", "name": "x"}}})
	if code != -32602 || !strings.Contains(msg, "https://example.com/x") {
		t.Errorf("initialize with an https folder: %d %q, want -32602 naming it", code, msg)
	}
}

func TestWorkspaceStaleEdit(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"f.go": "package f\n\nvar x = 1\n"})
	d, _ := startWorkspaceDaemon(t, ws)
	sid := d.newSession(obj{"permissions": obj{"default": "allow"}})
	path := filepath.Join(ws, "f.go")

	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "r1", "read", obj{"path": "f.go"})))
	// Changed behind pid's back (the user's editor, a formatter).
	wsWriteFile(t, path, "package f\n\nvar x = 2\n")
	m, _ := wsOne(t, d, sid, nil, "e1", "edit", obj{"path": "f.go", "edits": []obj{{"oldText": "var x = 2", "newText": "var x = 3"}}})
	wsWantError(t, m, "changed on disk since you last read it", "read it again")
	if got := wsReadFile(t, path); got != "package f\n\nvar x = 2\n" {
		t.Errorf("the refused edit changed the file: %q", got)
	}
	// write is guarded the same way.
	m, _ = wsOne(t, d, sid, nil, "w1", "write", obj{"path": "f.go", "content": "clobbered\n"})
	wsWantError(t, m, "changed on disk since you last read it")
	if got := wsReadFile(t, path); got != "package f\n\nvar x = 2\n" {
		t.Errorf("the refused write changed the file: %q", got)
	}

	m, _ = wsOne(t, d, sid, nil, "r2", "read", obj{"path": "f.go"})
	wsWantOK(t, m)
	if !strings.Contains(wsText(m), "var x = 2") {
		t.Errorf("the second read shows %q", wsText(m))
	}
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "e2", "edit", obj{"path": "f.go", "edits": []obj{{"oldText": "var x = 2", "newText": "var x = 3"}}})))
	if got := wsReadFile(t, path); got != "package f\n\nvar x = 3\n" {
		t.Errorf("on disk after the edit: %q", got)
	}
	// A file never read cannot be changed either.
	wsWriteFile(t, filepath.Join(ws, "g.go"), "package g\n")
	m, _ = wsOne(t, d, sid, nil, "e3", "edit", obj{"oldText": "g", "newText": "h", "path": "g.go"})
	wsWantError(t, m, "you have not read it")
}

func wsFirst(m gjson.Result, _ wsBatch) gjson.Result { return m }

func TestWorkspaceDefaultPolicy(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "one\ntwo\n"})
	d, _ := startWorkspaceDaemon(t, ws)
	sid := d.newSession(obj{})
	// Sequential, so that the read comes before the edit of the same file.
	b := wsExecute(t, d, sid, "sequential", func(m *wireMsg) any {
		if m.get("params.sessionId").String() != sid || m.get("params.toolName").String() == "" || !m.get("params.args").IsObject() {
			t.Errorf("beforeToolCall params: %s", m)
		}
		return obj{"decision": "allow"}
	},
		wsCall("c1", "read", obj{"path": "a.txt"}),
		wsCall("c2", "grep", obj{"pattern": "two"}),
		wsCall("c3", "find", obj{"pattern": "*.txt"}),
		wsCall("c4", "ls", obj{}),
		wsCall("c5", "write", obj{"path": "b.txt", "content": "new\n"}),
		wsCall("c6", "edit", obj{"path": "a.txt", "oldText": "two", "newText": "TWO"}),
		wsCall("c7", "bash", obj{"command": "echo ran-$((6*7))"}),
	)
	if got, want := b.asked(), []string{"c5", "c6", "c7"}; !slices.Equal(got, want) {
		t.Errorf("asked for %v, want %v (write, edit, bash)", got, want)
	}
	for _, r := range b.requests {
		if r.method() != "beforeToolCall" {
			t.Errorf("unexpected request %s", r)
		}
	}
	for _, id := range []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		wsWantOK(t, b.msg(t, id))
	}
	if got := wsText(b.msg(t, "c7")); !strings.Contains(got, "ran-42") {
		t.Errorf("bash output %q", got)
	}
	if wsReadFile(t, filepath.Join(ws, "b.txt")) != "new\n" || wsReadFile(t, filepath.Join(ws, "a.txt")) != "one\nTWO\n" {
		t.Error("the approved write and edit did not change the files")
	}

	// Denied: nothing runs.
	m, b2 := wsOne(t, d, sid, wsDecide("deny"), "c8", "write", obj{"path": "c.txt", "content": "x"})
	wsWantError(t, m, "denied")
	if !slices.Equal(b2.asked(), []string{"c8"}) || wsExists(filepath.Join(ws, "c.txt")) {
		t.Errorf("a denied write: asked %v, file exists %v", b2.asked(), wsExists(filepath.Join(ws, "c.txt")))
	}
}

func TestWorkspaceSessionBashRules(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"x/keep.txt": "keep\n"})
	d, _ := startWorkspaceDaemon(t, ws)
	sid := d.newSession(obj{"permissions": obj{"tools": obj{"bash": []obj{{"pattern": "git status", "decision": "allow"}}}}})

	m, b := wsOne(t, d, sid, nil, "b1", "bash", obj{"command": "git status --short"})
	if len(b.asked()) != 0 {
		t.Errorf("git status --short was asked about: %v", b.requests)
	}
	// It ran (whether or not the folder is a repository, git is installed): bash reports
	// an exit code.
	if !m.Get("details.exitCode").Exists() && !strings.Contains(wsText(m), "Command exited with code") {
		t.Errorf("git status --short did not run: %s", m.Raw)
	}

	// Metacharacters: the allow rule does not apply, the built-in default asks.
	var params gjson.Result
	m, b = wsOne(t, d, sid, func(r *wireMsg) any {
		params = r.get("params")
		return obj{"decision": "deny", "reason": "not that"}
	}, "b2", "bash", obj{"command": "git status; rm -rf x"})
	if !slices.Equal(b.asked(), []string{"b2"}) {
		t.Fatalf("asked %v, want b2", b.asked())
	}
	if params.Get("toolName").String() != "bash" || params.Get("args.command").String() != "git status; rm -rf x" {
		t.Errorf("beforeToolCall params %s", params.Raw)
	}
	wsWantError(t, m, "not that")
	if !wsExists(filepath.Join(ws, "x", "keep.txt")) {
		t.Error("the denied command ran")
	}
	// Another command falls to the default too.
	_, b = wsOne(t, d, sid, wsDecide("deny"), "b3", "bash", obj{"command": "git statusx"})
	if !slices.Equal(b.asked(), []string{"b3"}) {
		t.Errorf("git statusx: asked %v, want b3", b.asked())
	}
}

func TestWorkspaceSettingsFile(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	settings := filepath.Join(ws, ".pid", "settings.json")
	writeAtomically(t, settings, `{"permissions":{"tools":{"write":"deny"}}}`)
	d, _ := startTrustedWorkspaceDaemon(t, ws)
	sid := d.newSession(obj{})

	m, _ := wsOne(t, d, sid, nil, "w0", "write", obj{"path": "w0.txt", "content": "x"})
	wsWantError(t, m, "denied by the permissions", "workspace settings", settings)
	if wsExists(filepath.Join(ws, "w0.txt")) {
		t.Fatal("the denied write ran")
	}

	// Allowed now: it takes effect without a restart. Until the reload, writes are denied
	// (never asked: no other policy may show in between).
	writeAtomically(t, settings, `{"permissions":{"tools":{"write":"allow"}}}`)
	i := 0
	proctest.WaitUntil(t, pollDeadline, "the changed settings file to apply", func() bool {
		i++
		id := fmt.Sprintf("w%d", i)
		m, _ := wsOne(t, d, sid, nil, id, "write", obj{"path": id + ".txt", "content": "x"})
		if !m.Get("isError").Bool() {
			if !wsExists(filepath.Join(ws, id+".txt")) {
				t.Fatalf("the allowed write did not create its file: %s", m.Raw)
			}
			return true
		}
		wsWantError(t, m, "denied by the permissions")
		return false
	})

	// Broken: reported to the editor with the path, the previous policy stays.
	before := len(d.snapshot())
	writeAtomically(t, settings, `{"permissions": {"tools": {"write": `)
	report := awaitWithin(t, d, "a message about the broken settings file", func(m *wireMsg) bool {
		return m.seq >= before && m.isNotification() &&
			(m.method() == "window/showMessage" || m.method() == "window/logMessage") &&
			strings.Contains(m.get("params.message").String(), settings)
	})
	if typ := report.get("params.type").Int(); typ != 1 && typ != 2 {
		t.Errorf("report type %d, want an error or a warning: %s", typ, report)
	}
	m, _ = wsOne(t, d, sid, nil, "w-after", "write", obj{"path": "after.txt", "content": "x"})
	wsWantOK(t, m)

	// Fixed again, to deny: applied too (the watcher still runs after an error).
	writeAtomically(t, settings, `{"permissions":{"tools":{"write":"deny"}}}`)
	i = 0
	proctest.WaitUntil(t, pollDeadline, "the fixed settings file to apply", func() bool {
		i++
		id := fmt.Sprintf("d%d", i)
		m, _ := wsOne(t, d, sid, nil, id, "write", obj{"path": id + ".txt", "content": "x"})
		if m.Get("isError").Bool() {
			wsWantError(t, m, "denied by the permissions", settings)
			return true
		}
		return false
	})
}

// pollDecision repeats an ls call in session sid until its result is denied (want true) or
// not (want false), failing after pollDeadline. ls is never asked about here.
func pollDecision(t *testing.T, d *daemon, sid, prefix string, want bool) gjson.Result {
	t.Helper()
	var m gjson.Result
	i := 0
	proctest.WaitUntilState(t, pollDeadline, fmt.Sprintf("ls denied=%v", want), func() (bool, string) {
		i++
		m, _ = wsOne(t, d, sid, nil, fmt.Sprintf("%s%d", prefix, i), "ls", obj{})
		denied := m.Get("isError").Bool() && strings.Contains(wsText(m), "denied by the permissions")
		if !denied && m.Get("isError").Bool() {
			t.Fatalf("ls failed: %s", m.Raw)
		}
		return denied == want, m.Raw
	})
	return m
}

func TestWorkspaceSettingsCreatedLater(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"sub/x.txt": "x"})
	_, ws2 := newWorkspaceDir(t, nil)
	xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws, ws2)
	sid := d.newSession(obj{})
	inSub := d.newSession(obj{"cwd": filepath.Join(ws, "sub")})
	inWs2 := d.newSession(obj{"cwd": ws2})
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "l0", "ls", obj{})))

	// .pid/ does not exist yet: the file is picked up when it appears.
	settings := filepath.Join(ws, ".pid", "settings.json")
	writeAtomically(t, settings, `{"permissions":{"tools":{"ls":"deny"}}}`)
	m := pollDecision(t, d, sid, "a", true)
	wsWantError(t, m, settings)
	// A session in a subfolder of the root has the root's settings; another root does not.
	wsWantError(t, wsFirst(wsOne(t, d, inSub, nil, "s1", "ls", obj{})), "denied by the permissions", settings)
	wsWantOK(t, wsFirst(wsOne(t, d, inWs2, nil, "o1", "ls", obj{})))

	// Deleted: its rules are gone.
	if err := os.Remove(settings); err != nil {
		t.Fatal(err)
	}
	pollDecision(t, d, sid, "b", false)
	wsWantOK(t, wsFirst(wsOne(t, d, inSub, nil, "s2", "ls", obj{})))
}

func TestWorkspaceUserSettings(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	config, _ := xdgDirs(t)
	user := filepath.Join(config, "pid", "settings.json")
	trustWorkspace(t, ws, obj{"permissions": obj{"tools": obj{"bash": "deny", "ls": "deny"}}})
	writeAtomically(t, filepath.Join(ws, ".pid", "settings.json"), `{"permissions":{"tools":{"ls":"allow"}}}`)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	sid := d.newSession(obj{})
	m, _ := wsOne(t, d, sid, nil, "u1", "bash", obj{"command": "echo hi"})
	wsWantError(t, m, "denied by the permissions", "user settings", user)
	// The workspace file comes later and wins.
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "u2", "ls", obj{})))
	// The session's own permissions come last.
	sid2 := d.newSession(obj{"permissions": obj{"tools": obj{"bash": "allow"}}})
	wsWantOK(t, wsFirst(wsOne(t, d, sid2, nil, "u3", "bash", obj{"command": "echo hi"})))
}

func TestWorkspaceRememberedAnswers(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	_, ws2 := newWorkspaceDir(t, nil)
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(t.TempDir(), "config"), "XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state")}

	d1 := startProcess(t, processOptions{Env: env})
	initWorkspace(d1, obj{"beforeToolCall": true}, ws)
	sid := d1.newSession(obj{})
	m, b := wsOne(t, d1, sid, wsDecide("allowAlways"), "a1", "bash", obj{"command": "echo hello world"})
	wsWantOK(t, m)
	if !slices.Equal(b.asked(), []string{"a1"}) {
		t.Fatalf("asked %v, want a1", b.asked())
	}
	list := d1.call("permissions/list", obj{}).Get("permissions").Array()
	if len(list) != 1 {
		t.Fatalf("permissions/list = %v, want one entry", list)
	}
	e := list[0]
	id := e.Get("id").String()
	if id == "" || e.Get("tool").String() != "bash" || e.Get("pattern").String() != "echo hello" ||
		e.Get("decision").String() != "allow" || e.Get("scope").String() != "workspace:"+ws {
		t.Errorf("entry %s, want {id, tool: bash, pattern: \"echo hello\", decision: allow, scope: workspace:%s}", e.Raw, ws)
	}
	// A matching call is not asked; one that does not match is.
	m, _ = wsOne(t, d1, sid, nil, "a2", "bash", obj{"command": "echo hello again"})
	wsWantOK(t, m)
	_, b = wsOne(t, d1, sid, wsDecide("deny"), "a3", "bash", obj{"command": "echo goodbye"})
	if !slices.Equal(b.asked(), []string{"a3"}) {
		t.Errorf("echo goodbye: asked %v, want a3", b.asked())
	}
	// Metacharacters: a remembered allow never covers them.
	_, b = wsOne(t, d1, sid, wsDecide("deny"), "a4", "bash", obj{"command": "echo hello; rm -rf /tmp/nothing-" + wsRandomHex(t, 4)})
	if !slices.Equal(b.asked(), []string{"a4"}) {
		t.Errorf("echo hello; rm: asked %v, want a4", b.asked())
	}
	stopDaemon(t, d1)

	// A restart with the same state folder still knows the answer.
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{"beforeToolCall": true}, ws, ws2)
	sid = d2.newSession(obj{})
	if got := d2.call("permissions/list", obj{}).Get("permissions").Array(); len(got) != 1 || got[0].Get("id").String() != id {
		t.Fatalf("after the restart, permissions/list = %v, want the entry %s", got, id)
	}
	wsWantOK(t, wsFirst(wsOne(t, d2, sid, nil, "a5", "bash", obj{"command": "echo hello there"})))
	// A session in a subfolder belongs to the same root.
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	inSub := d2.newSession(obj{"cwd": sub})
	wsWantOK(t, wsFirst(wsOne(t, d2, inSub, nil, "a5b", "bash", obj{"command": "echo hello from sub"})))
	// A remembered allow never overrides a deny of the session's.
	strict := d2.newSession(obj{"permissions": obj{"tools": obj{"bash": "deny"}}})
	wsWantError(t, wsFirst(wsOne(t, d2, strict, nil, "a5c", "bash", obj{"command": "echo hello there"})), "denied by the permissions (session)")
	// Another workspace asks.
	other := d2.newSession(obj{"cwd": ws2})
	_, b = wsOne(t, d2, other, wsDecide("deny"), "a6", "bash", obj{"command": "echo hello there"})
	if !slices.Equal(b.asked(), []string{"a6"}) {
		t.Errorf("in another workspace: asked %v, want a6", b.asked())
	}

	// Revoked: listed no more, and asked again.
	if res := d2.call("permissions/revoke", obj{"id": id}); res.Type != gjson.Null {
		t.Errorf("permissions/revoke = %s, want null", res.Raw)
	}
	if got := d2.call("permissions/list", obj{}).Get("permissions"); !got.IsArray() || len(got.Array()) != 0 {
		t.Errorf("after revoke, permissions/list = %s, want []", got.Raw)
	}
	_, b = wsOne(t, d2, sid, wsDecide("allow"), "a7", "bash", obj{"command": "echo hello there"})
	if !slices.Equal(b.asked(), []string{"a7"}) {
		t.Errorf("after revoke: asked %v, want a7", b.asked())
	}
	if code, msg := d2.callErr("permissions/revoke", obj{"id": id}); code != -32602 {
		t.Errorf("revoking %s twice: %d %q, want -32602", id, code, msg)
	}
	if code, msg := d2.callErr("permissions/revoke", obj{"id": "no-such-id"}); code != -32602 {
		t.Errorf("revoking an unknown id: %d %q, want -32602", code, msg)
	}
	if code, msg := d2.callErr("permissions/revoke", obj{}); code != -32602 {
		t.Errorf("revoking without an id: %d %q, want -32602", code, msg)
	}

	// denyAlways is remembered too, and then blocks without asking.
	m, _ = wsOne(t, d2, sid, wsDecide("denyAlways"), "a8", "bash", obj{"command": "touch ./made-by-a8"})
	wsWantError(t, m)
	m, _ = wsOne(t, d2, sid, nil, "a9", "bash", obj{"command": "touch ./made-by-a9"})
	wsWantError(t, m, "always deny")
	if wsExists(filepath.Join(ws, "made-by-a8")) || wsExists(filepath.Join(ws, "made-by-a9")) {
		t.Error("a denied command ran")
	}
	list = d2.call("permissions/list", obj{}).Get("permissions").Array()
	if len(list) != 1 || list[0].Get("decision").String() != "deny" || list[0].Get("pattern").String() != "touch" {
		t.Errorf("permissions/list = %v, want the deny of touch", list)
	}
	stopDaemon(t, d2)
}

func TestWorkspaceRememberedFileAndFallback(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	// No beforeToolCall: pid asks with LSP's showMessageRequest, whose "Always allow" is
	// remembered as well.
	d := startInProcess(t)
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{})
	m, b := wsOne(t, d, sid, func(r *wireMsg) any {
		if r.method() != "window/showMessageRequest" || !strings.Contains(r.get("params.message").String(), "write") {
			t.Errorf("unexpected request %s", r)
		}
		// The "always" choice says what it covers.
		always := r.get("params.actions.1.title").String()
		if !strings.HasPrefix(always, "Always allow") || !strings.Contains(always, "notes/b.txt") {
			t.Errorf("the always action %q does not name the path it covers", always)
		}
		return obj{"title": always}
	}, "f1", "write", obj{"path": "notes/b.txt", "content": "1\n"})
	wsWantOK(t, m)
	if len(b.requests) != 1 {
		t.Fatalf("requests %v, want one showMessageRequest", b.requests)
	}
	list := d.call("permissions/list", obj{}).Get("permissions").Array()
	if len(list) != 1 || list[0].Get("tool").String() != "write" || list[0].Get("pattern").String() != "notes/b.txt" ||
		list[0].Get("decision").String() != "allow" || list[0].Get("scope").String() != "workspace:"+ws {
		t.Fatalf("permissions/list = %v, want write notes/b.txt allowed in %s", list, ws)
	}
	// The same file again: not asked (spelt differently, too). Another file: asked.
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "f2", "write", obj{"path": "./notes//b.txt", "content": "2\n"})))
	if got := wsReadFile(t, filepath.Join(ws, "notes", "b.txt")); got != "2\n" {
		t.Errorf("on disk %q", got)
	}
	_, b = wsOne(t, d, sid, func(*wireMsg) any { return obj{"title": "Deny"} }, "f3", "write", obj{"path": "notes/c.txt", "content": "x"})
	if len(b.requests) != 1 || wsExists(filepath.Join(ws, "notes", "c.txt")) {
		t.Errorf("another file: requests %v, created %v; want asked and denied", b.requests, wsExists(filepath.Join(ws, "notes", "c.txt")))
	}
}

func TestWorkspaceRememberedWithoutStore(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	xdgDirs(t)
	// The state folder cannot be made: no store, no audit log; the editor is told.
	blockStateDir(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	d.await("a warning that remembered permissions are not available", func(m *wireMsg) bool {
		return m.method() == "window/logMessage" && strings.Contains(m.get("params.message").String(), "remembered permissions")
	})
	sid := d.newSession(obj{})
	_, b := wsOne(t, d, sid, wsDecide("allowAlways"), "n1", "bash", obj{"command": "echo one"})
	if !slices.Equal(b.asked(), []string{"n1"}) {
		t.Fatalf("asked %v, want n1", b.asked())
	}
	if q := b.requests[0]; q.get("params.always.pattern").String() != "echo one" {
		t.Errorf("beforeToolCall params.always = %s, want the pattern \"echo one\"", q.get("params.always").Raw)
	}
	// Kept for the session exactly as scoped (echo one ...), never wider: other commands ask.
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "n2", "bash", obj{"command": "echo one more"})))
	_, b = wsOne(t, d, sid, wsDecide("deny"), "n2b", "bash", obj{"command": "ls -la"})
	if !slices.Equal(b.asked(), []string{"n2b"}) {
		t.Errorf("ls -la after an always for echo one: asked %v, want n2b", b.asked())
	}
	other := d.newSession(obj{})
	_, b = wsOne(t, d, other, wsDecide("deny"), "n3", "bash", obj{"command": "echo one"})
	if !slices.Equal(b.asked(), []string{"n3"}) {
		t.Errorf("another session: asked %v, want n3", b.asked())
	}
	if code, msg := d.callErr("permissions/list", obj{}); code != codeRequestFailed || !strings.Contains(msg, "not available") {
		t.Errorf("permissions/list without a store: %d %q, want %d saying it is not available", code, msg, codeRequestFailed)
	}
	if code, _ := d.callErr("permissions/revoke", obj{"id": "abc"}); code != codeRequestFailed {
		t.Errorf("permissions/revoke without a store: %d, want %d", code, codeRequestFailed)
	}
}

// Secrets of a test: a GitHub token (ghp_ and 36 characters) and an AWS access key id
// (AKIA and 16 upper-case letters or digits).
var (
	testGitHubToken = "ghp_" + strings.Repeat("aB3", 12)
	testAWSKey      = "AKIA" + "ABCDEFGHIJ234567"
)

func TestWorkspaceRedaction(t *testing.T) {
	_, ws := newWorkspaceDir(t, nil)
	writeAtomically(t, filepath.Join(ws, ".pid", "settings.json"), `{"redact":{"patterns":["SECRET-[0-9]+"]}}`)
	xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true, "afterToolCall": true}, ws)
	leak := "token " + testGitHubToken + " key " + testAWSKey + " custom SECRET-12345 plain text"
	details := obj{"token": testGitHubToken, "key": testAWSKey, "n": 1}
	sid := d.newSession(obj{"scriptedTools": []obj{
		{"name": "leak", "steps": []obj{{"result": obj{"content": []obj{text(leak)}, "details": details}}}},
		{"name": "clean", "steps": []obj{resultStep("nothing to hide")}},
	}})
	after := func(m *wireMsg) any {
		if m.method() != "afterToolCall" {
			return obj{"decision": "allow"}
		}
		// The editor sees the result before redaction (it runs after the editor's hook)...
		if m.get("params.toolCallId").String() == "l2" {
			// ...and what it puts in is redacted too; the audit log records its isError.
			return obj{"content": []obj{text("editor says " + testGitHubToken)}, "isError": true}
		}
		return nil
	}
	b := wsExecute(t, d, sid, "", after, wsCall("l1", "leak", obj{}), wsCall("l2", "clean", obj{}))
	m := b.msg(t, "l1")
	wsWantOK(t, m)
	want := "token [REDACTED:github-token] key [REDACTED:aws-access-key] custom [REDACTED:custom] plain text"
	if got := wsText(m); got != want {
		t.Errorf("result text %q, want %q", got, want)
	}
	wantDetails, _ := json.Marshal(details)
	if !jsonEq(m.Get("details").Raw, string(wantDetails)) {
		t.Errorf("details %s, want unchanged %s", m.Get("details").Raw, wantDetails)
	}
	end := d.notification("toolEnd", func(n *wireMsg) bool { return n.get("params.toolCallId").String() == "l1" })
	if got := wsText(end.get("params.result")); got != want {
		t.Errorf("toolEnd text %q, want %q", got, want)
	}
	if !jsonEq(end.get("params.result.details").Raw, string(wantDetails)) {
		t.Errorf("toolEnd details %s, want unchanged", end.get("params.result.details").Raw)
	}
	if got := wsText(b.msg(t, "l2")); got != "editor says [REDACTED:github-token]" || !b.msg(t, "l2").Get("isError").Bool() {
		t.Errorf("the editor's override: %s, want its text redacted and isError", b.msg(t, "l2").Raw)
	}
	seen := 0
	for _, r := range b.requests {
		if r.method() == "afterToolCall" && r.get("params.toolCallId").String() == "l1" {
			seen++
			if !strings.Contains(r.get("params.result.content").Raw, testGitHubToken) {
				t.Errorf("afterToolCall got %s, want the result before redaction", r.get("params.result").Raw)
			}
		}
	}
	if seen != 1 {
		t.Errorf("%d afterToolCall requests for l1, want 1", seen)
	}
	audit := wsReadFile(t, filepath.Join(os.Getenv("XDG_STATE_HOME"), "pid", "audit.log"))
	for _, l := range strings.Split(strings.TrimSpace(audit), "\n") {
		if e := gjson.Parse(l); e.Get("toolCallId").String() == "l2" && !e.Get("isError").Bool() {
			t.Errorf("audit line %s, want the editor's isError", l)
		}
	}
	if strings.Count(audit, "\n") != 2 {
		t.Errorf("audit log %q, want two lines", audit)
	}
	// Nothing the model or the editor's views of the results get holds the secrets, outside
	// details.
	for _, n := range d.notes(sid) {
		if n.method() != "toolEnd" && n.method() != "messageStart" && n.method() != "messageEnd" {
			continue
		}
		for _, p := range []string{"params.result.content", "params.message.content"} {
			if c := n.get(p).Raw; strings.Contains(c, testGitHubToken) || strings.Contains(c, testAWSKey) || strings.Contains(c, "SECRET-12345") {
				t.Errorf("a secret in %s: %s", n.method(), c)
			}
		}
	}
}

func TestWorkspaceAuditLog(t *testing.T) {
	_, ws := newWorkspaceDir(t, map[string]string{"a.txt": "a\n"})
	_, state := xdgDirs(t)
	d := startInProcess(t)
	initWorkspace(d, obj{"beforeToolCall": true}, ws)
	probeResult := obj{"content": []obj{text("probe ok")}, "details": obj{"k": []any{1.0, "two"}}}
	cfg := obj{
		"permissions": obj{"tools": obj{"write": "deny"}},
		"scriptedTools": []obj{
			{"name": "probe", "steps": []obj{{"result": probeResult}}},
			{"name": "fails", "steps": []obj{{"error": "it broke"}}},
		},
	}
	calls := []obj{
		wsCall("c1", "read", obj{"path": "a.txt"}),
		wsCall("c2", "grep", obj{"pattern": "nothing-like-this"}),
		wsCall("c3", "probe", obj{"x": "y", "n": 3.0}),
		wsCall("c7", "probe", obj{"token": testGitHubToken, "note": "plain"}),
		wsCall("c4", "fails", obj{}),
		wsCall("c5", "write", obj{"path": "b.txt", "content": "denied"}),
		wsCall("c6", "nosuchtool", obj{}),
	}
	sid := d.newSession(cfg)
	startTime := time.Now()
	b := wsExecute(t, d, sid, "", nil, calls...)
	endTime := time.Now()

	// The results are what the tools gave.
	m := b.msg(t, "c3")
	wsWantOK(t, m)
	wantContent, _ := json.Marshal(probeResult["content"])
	wantDetails, _ := json.Marshal(probeResult["details"])
	if !jsonEq(m.Get("content").Raw, string(wantContent)) || !jsonEq(m.Get("details").Raw, string(wantDetails)) {
		t.Errorf("probe result %s, want content %s details %s", m.Raw, wantContent, wantDetails)
	}
	if m := b.msg(t, "c4"); !m.Get("isError").Bool() || wsText(m) != "it broke" {
		t.Errorf("fails result %s, want the error text alone", m.Raw)
	}

	path := filepath.Join(state, "pid", "audit.log")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
	data := wsReadFile(t, path)
	if !strings.HasSuffix(data, "\n") {
		t.Fatalf("audit log does not end with a newline: %q", data)
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	byID := map[string]gjson.Result{}
	for _, l := range lines {
		if !gjson.Valid(l) {
			t.Fatalf("not a JSON line: %q", l)
		}
		e := gjson.Parse(l)
		if _, dup := byID[e.Get("toolCallId").String()]; dup {
			t.Errorf("two lines for %s", e.Get("toolCallId"))
		}
		byID[e.Get("toolCallId").String()] = e
	}
	// One line per executed call and per denied call, with the decision and who made it;
	// none for the unknown tool (nothing was decided about it).
	if len(lines) != 6 {
		t.Errorf("audit log has %d lines, want 6 (c1-c5, c7):\n%s", len(lines), data)
	}
	if e := byID["c5"]; e.Get("decision").String() != "deny" || e.Get("decidedBy").String() != "session" || !e.Get("isError").Bool() || e.Get("tool").String() != "write" {
		t.Errorf("audit line for the denied c5: %s, want decision deny by session", e.Raw)
	}
	if e := byID["c1"]; e.Get("decision").String() != "allow" || e.Get("decidedBy").String() != "built-in" {
		t.Errorf("audit line for c1: %s, want decision allow by built-in", e.Raw)
	}
	// Secrets in the arguments are redacted in the log (the call itself got them as sent).
	if e := byID["c7"]; e.Get("args.token").String() != "[REDACTED:github-token]" || e.Get("args.note").String() != "plain" || strings.Contains(data, testGitHubToken) {
		t.Errorf("audit line for c7: %s, want its token redacted", e.Raw)
	}
	wantIsError := map[string]bool{"c1": false, "c2": false, "c3": false, "c4": true, "c7": false}
	for _, c := range calls {
		id := c["id"].(string)
		if _, executed := wantIsError[id]; !executed {
			continue
		}
		e, ok := byID[id]
		if !ok {
			t.Errorf("no audit line for %s:\n%s", id, data)
			continue
		}
		args, _ := json.Marshal(c["arguments"])
		if id == "c7" {
			args = []byte(e.Get("args").Raw) // redacted: checked below
		}
		if e.Get("session").String() != sid || e.Get("tool").String() != c["name"] || !jsonEq(e.Get("args").Raw, string(args)) || e.Get("isError").Bool() != wantIsError[id] || !e.Get("isError").Exists() {
			t.Errorf("audit line %s, want session %s tool %s args %s isError %v", e.Raw, sid, c["name"], args, wantIsError[id])
		}
		tm, err := time.Parse(time.RFC3339Nano, e.Get("time").String())
		if err != nil || tm.Before(startTime.Add(-time.Second)) || tm.After(endTime.Add(time.Second)) {
			t.Errorf("audit line %s: time %v (%v), want between %v and %v", id, tm, err, startTime, endTime)
		}
		if !e.Get("durationMs").Exists() || e.Get("durationMs").Int() < 0 {
			t.Errorf("audit line %s: durationMs %s", id, e.Get("durationMs").Raw)
		}
	}
	if _, ok := byID["c6"]; ok {
		t.Errorf("the unknown tool's call c6 is in the audit log")
	}

	// The same batch without an audit log (its folder cannot be made) gives the same results.
	blockStateDir(t)
	d2 := startInProcess(t)
	initWorkspace(d2, obj{"beforeToolCall": true}, ws)
	d2.await("a warning that the audit log is not available", func(m *wireMsg) bool {
		return m.method() == "window/logMessage" && strings.Contains(m.get("params.message").String(), "audit log")
	})
	sid2 := d2.newSession(cfg)
	b2 := wsExecute(t, d2, sid2, "", nil, calls...)
	strip := func(r gjson.Result) string {
		var v any
		if err := json.Unmarshal([]byte(r.Get("messages").Raw), &v); err != nil {
			t.Fatal(err)
		}
		for _, m := range v.([]any) {
			delete(m.(map[string]any), "timestamp")
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	if a, b := strip(b.res), strip(b2.res); a != b {
		t.Errorf("results with the audit log:\n%s\nwithout:\n%s", a, b)
	}
	if got := wsReadFile(t, path); got != data {
		t.Errorf("the second daemon wrote to the first one's audit log")
	}
}

// awaitWithin is d.await bounded by pollDeadline instead of the hang guard, for what depends
// on a file watcher.
func awaitWithin(t *testing.T, d *daemon, what string, pred func(*wireMsg) bool) *wireMsg {
	t.Helper()
	var found *wireMsg
	proctest.WaitUntil(t, pollDeadline, what, func() bool {
		for _, m := range d.snapshot() {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// markedProcesses returns the command lines of running processes that contain marker.
func markedProcesses(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 { // gone, or a zombie
			continue
		}
		if s := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(s, marker) {
			out = append(out, e.Name()+": "+s)
		}
	}
	return out
}

func TestWorkspaceBashAbort(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	_, ws := newWorkspaceDir(t, nil)
	d, _ := startWorkspaceDaemon(t, ws)
	sid := d.newSession(obj{"permissions": obj{"tools": obj{"bash": "allow"}}})
	// A unique sleep length marks both the shell (whose command line holds the whole
	// command) and sleep itself (bash may exec it in place of the shell).
	marker := fmt.Sprintf("29.%s", wsRandomDigits(t, 9))
	cmd := "sleep " + marker + "; echo marker-" + marker
	id := d.request("tools/execute", obj{"sessionId": sid, "toolCalls": []obj{wsCall("s1", "bash", obj{"command": cmd})}})
	d.notification("toolStart", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "s1" })
	proctest.WaitUntil(t, pollDeadline, "the sleep process to run", func() bool { return len(markedProcesses(t, marker)) > 0 })

	cancelled := time.Now()
	d.cancel(id)
	res := d.result(id)
	if took := time.Since(cancelled); took > 5*time.Second {
		t.Errorf("tools/execute answered %v after the cancel", took)
	}
	if !res.Get("aborted").Bool() || res.Get("terminate").Bool() {
		t.Errorf("result %s, want aborted: true", res.Raw)
	}
	msgs := res.Get("messages").Array()
	if len(msgs) != 1 || !msgs[0].Get("isError").Bool() || !strings.Contains(wsText(msgs[0]), "Operation aborted") {
		t.Errorf("messages %s, want one aborted error result", res.Get("messages").Raw)
	}
	d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == "s1" })
	proctest.WaitUntilState(t, pollDeadline, "the sleep process to end", func() (bool, string) {
		ps := markedProcesses(t, marker)
		return len(ps) == 0, strings.Join(ps, "; ")
	})
	if strings.Contains(wsText(msgs[0]), "marker-"+marker) {
		t.Error("the command after sleep ran")
	}
	// The aborted call executed: it is in the audit log, as an error.
	data := wsReadFile(t, filepath.Join(os.Getenv("XDG_STATE_HOME"), "pid", "audit.log"))
	if e := gjson.Parse(strings.TrimSpace(data)); strings.Count(data, "\n") != 1 || e.Get("toolCallId").String() != "s1" || !e.Get("isError").Bool() || e.Get("args.command").String() != cmd {
		t.Errorf("audit log %q, want one line for s1 with isError", data)
	}
}

func wsRandomDigits(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}

package acp

// bash through the client's terminals (clientCapabilities.terminal): the test client runs
// the command line terminal/create gives it as a real child process, as an editor's
// terminal would. The command line puts the command in pid's sandbox (a write outside the
// workspace fails inside that terminal), the tool call shows the terminal, a timeout kills
// the command through terminal/kill, and a client whose terminal/create fails gets no
// second one: the commands run as pid's own.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pid-agent/pid/sandbox"
	"github.com/tidwall/gjson"
)

// terminalClient answers pid's terminal/* requests by running each terminal's command as a
// child process, its output captured whole.
type terminalClient struct {
	c *client
	t *testing.T

	mu      sync.Mutex
	created []*msg // the terminal/create requests, in order
	calls   []string
	terms   map[string]*runningTerm
}

type runningTerm struct {
	cmd  *exec.Cmd
	out  *syncBuffer   // written by the child's pipes (exec's goroutines) until done
	done chan struct{} // closed once the command has exited
	code int
}

func newTerminalClient(c *client, t *testing.T) *terminalClient {
	return &terminalClient{c: c, t: t, terms: map[string]*runningTerm{}}
}

// reply sends a response from any goroutine (writes are serialized by the connection).
func (tc *terminalClient) reply(m *msg, result any) {
	if err := tc.c.conn.SendJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}); err != nil {
		tc.t.Errorf("answering %s: %v", m.Method, err)
	}
}

// handle answers one of pid's requests; it reports whether it was a terminal's.
func (tc *terminalClient) handle(m *msg) bool {
	if !strings.HasPrefix(m.Method, "terminal/") {
		return false
	}
	tc.mu.Lock()
	tc.calls = append(tc.calls, m.Method)
	id := m.get("params.terminalId").String()
	term := tc.terms[id]
	tc.mu.Unlock()
	if m.Method != "terminal/create" && term == nil {
		tc.t.Errorf("%s names an unknown terminal: %s", m.Method, m.raw)
		tc.reply(m, map[string]any{})
		return true
	}
	switch m.Method {
	case "terminal/create":
		tc.mu.Lock()
		tc.created = append(tc.created, m)
		id := "term-" + string(rune('0'+len(tc.created)))
		tc.mu.Unlock()
		var args []string
		json.Unmarshal([]byte(m.get("params.args").Raw), &args)
		cmd := exec.Command(m.get("params.command").String(), args...)
		cmd.Dir = m.get("params.cwd").String()
		cmd.Env = os.Environ()
		for _, e := range m.get("params.env").Array() {
			cmd.Env = append(cmd.Env, e.Get("name").String()+"="+e.Get("value").String())
		}
		rt := &runningTerm{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = rt.out, rt.out
		if err := cmd.Start(); err != nil {
			tc.t.Errorf("the terminal's command does not start: %v", err)
		}
		go func() {
			cmd.Wait()
			rt.code = cmd.ProcessState.ExitCode()
			close(rt.done)
		}()
		tc.mu.Lock()
		tc.terms[id] = rt
		tc.mu.Unlock()
		tc.reply(m, map[string]any{"terminalId": id})
	case "terminal/wait_for_exit":
		go func() {
			<-term.done
			tc.reply(m, map[string]any{"exitCode": term.code, "signal": nil})
		}()
	case "terminal/kill":
		term.cmd.Process.Signal(syscall.SIGTERM)
		tc.reply(m, map[string]any{})
	case "terminal/output":
		res := map[string]any{"output": term.out.String(), "truncated": false}
		select {
		case <-term.done:
			res["exitStatus"] = map[string]any{"exitCode": term.code, "signal": nil}
		default:
		}
		tc.reply(m, res)
	case "terminal/release":
		tc.reply(m, map[string]any{})
	}
	return true
}

func needKernelSandbox(t *testing.T) {
	t.Helper()
	if c := sandbox.Probe(); !c.Available {
		t.Fatalf("the kernel gives no sandbox here: %+v", c)
	}
}

func TestBashRunsInTheClientsTerminalInTheSandbox(t *testing.T) {
	needKernelSandbox(t)
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	command := "echo hello from the terminal; echo x > " + filepath.Join(outside, "out") + "; echo in > in; echo done"
	args, _ := json.Marshal(map[string]any{"command": command})
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", string(args))), textTurn("finished")))
	tc := newTerminalClient(c, t)
	res, before := c.result(c.prompt(sid, "run it"), func(m *msg) {
		if !tc.handle(m) {
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt answered %s", res.Raw)
	}
	if len(tc.created) != 1 {
		t.Fatalf("terminal/create %d times, want 1 (calls %q)", len(tc.created), tc.calls)
	}
	create := tc.created[0]
	var argv []string
	json.Unmarshal([]byte(create.get("params.args").Raw), &argv)
	exe := create.get("params.command").String()
	if !filepath.IsAbs(exe) || len(argv) < 5 || argv[0] != "sandbox-exec" || argv[1] != "--holder" || !strings.Contains(strings.Join(argv, " "), command) {
		t.Errorf("the terminal's command line is not pid's sandbox running the command: %s %q", exe, argv)
	}
	if create.get("params.cwd").String() != dir || create.get("params.sessionId").String() != sid || create.get("params.outputByteLimit").Int() <= 0 {
		t.Errorf("terminal/create params %s", create.get("params").Raw)
	}
	if strings.Contains(create.get("params.env").Raw, "PATH") {
		t.Errorf("the sandboxed command's environment travels in its launch file, not in terminal/create: %s", create.get("params.env").Raw)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("the command in the client's terminal wrote outside the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "in")); err != nil || string(b) != "in\n" {
		t.Errorf("the command did not write in the workspace: %q %v", b, err)
	}
	if want := []string{"terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"}; strings.Join(tc.calls, " ") != strings.Join(want, " ") {
		t.Errorf("terminal calls %q, want %q", tc.calls, want)
	}
	// The tool call shows the terminal from its progress on, and at its end with the output.
	var live, final gjson.Result
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() != "tool_call_update" || u.Get("toolCallId").String() != "b1" {
			continue
		}
		if u.Get("status").String() == "completed" || u.Get("status").String() == "failed" {
			final = u
		} else if u.Get("content.0.type").String() == "terminal" && !live.Exists() {
			live = u
		}
	}
	if live.Get("content.0.terminalId").String() != "term-1" {
		t.Errorf("no progress shows the terminal: %s", live.Raw)
	}
	if final.Get("status").String() != "completed" || final.Get("content.0.type").String() != "terminal" || final.Get("content.0.terminalId").String() != "term-1" {
		t.Errorf("the call's end does not show the terminal first: %s", final.Raw)
	}
	text := final.Get("content.1.content.text").String()
	if !strings.Contains(text, "hello from the terminal") || !strings.Contains(text, "done") || !strings.Contains(text, "[pid's sandbox (workspace-write) may have refused this") {
		t.Errorf("the result's text is not the terminal's output with the sandbox's note on the refused write: %q", text)
	}
	if final.Get("rawOutput.details.terminalId").String() != "term-1" {
		t.Errorf("details.terminalId: %s", final.Get("rawOutput").Raw)
	}
}

// A command that outlives its timeout is killed through terminal/kill, and the result says
// it timed out.
func TestBashInTheClientsTerminalTimesOut(t *testing.T) {
	needKernelSandbox(t)
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir := t.TempDir()
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", `{"command":"echo started; sleep 60","timeout":1}`)), textTurn("finished")))
	tc := newTerminalClient(c, t)
	_, before := c.result(c.prompt(sid, "run it"), func(m *msg) {
		if !tc.handle(m) {
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if want := "terminal/create terminal/wait_for_exit terminal/kill terminal/output terminal/release"; strings.Join(tc.calls, " ") != want {
		t.Errorf("terminal calls %q, want %q", tc.calls, want)
	}
	var final gjson.Result
	for _, u := range updates(t, sid, before) {
		if u.Get("toolCallId").String() == "b1" && u.Get("status").String() == "failed" {
			final = u
		}
	}
	if text := final.Get("content.1.content.text").String(); !strings.Contains(text, "started") || !strings.Contains(text, "timed out after 1s") {
		t.Errorf("the end of the timed-out call: %s", final.Raw)
	}
}

// A client whose terminal/create fails is not asked again: this command and the next run
// as pid's own, and the client is told once.
func TestBashFallsBackWhenTheClientsTerminalFails(t *testing.T) {
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir := t.TempDir()
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", `{"command":"echo one > one"}`)),
		toolTurn(call("b2", "bash", `{"command":"echo two > two"}`)), textTurn("finished")))
	creates := 0
	res, _ := c.result(c.prompt(sid, "run it"), func(m *msg) {
		if m.Method != "terminal/create" {
			t.Errorf("unexpected request %s", m.raw)
			return
		}
		creates++
		c.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32603,"message":"no terminal here"}}`)
	})
	if res.Get("stopReason").String() != "end_turn" || creates != 1 {
		t.Fatalf("prompt answered %s after %d terminal/create", res.Raw, creates)
	}
	for _, f := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the command writing %s did not run: %v", f, err)
		}
	}
	// One log line says so.
	if n := strings.Count(c.stderr.String(), "pid runs this session's commands itself"); n != 1 {
		t.Errorf("pid logged %d times that the client's terminals are no longer used, want once", n)
	}
}

// A command the person let run outside the sandbox runs in the client's terminal as is,
// but without the model keys the client's environment may hold (env -u each).
func TestUnsandboxedBashInTheClientsTerminalLosesTheModelKeys(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-terminal")
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir := t.TempDir()
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", `{"command":"echo key=${ANTHROPIC_API_KEY:-none}","unsandboxed":true,"justification":"to see"}`)), textTurn("finished")))
	tc := newTerminalClient(c, t)
	_, before := c.result(c.prompt(sid, "run it"), func(m *msg) {
		if m.Method == "session/request_permission" {
			c.respond(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
			return
		}
		if !tc.handle(m) {
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if len(tc.created) != 1 {
		t.Fatalf("terminal/create %d times", len(tc.created))
	}
	if args := tc.created[0].get("params.args").Raw; strings.Contains(args, "sandbox-exec") || !strings.Contains(args, `"-u","ANTHROPIC_API_KEY"`) {
		t.Errorf("the unsandboxed command line: %s %s", tc.created[0].get("params.command"), args)
	}
	var final gjson.Result
	for _, u := range updates(t, sid, before) {
		if u.Get("toolCallId").String() == "b1" && u.Get("status").String() == "completed" {
			final = u
		}
	}
	if text := final.Get("content.1.content.text").String(); !strings.Contains(text, "key=none") {
		t.Errorf("the command saw the model key, or did not run: %s", final.Raw)
	}
}

// A background job runs in the client's terminal too: its output is read from the terminal
// (job_output sees what it printed later), job_kill kills it through terminal/kill, and the
// call that started it shows the terminal.
func TestJobRunsInTheClientsTerminal(t *testing.T) {
	needKernelSandbox(t)
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir := t.TempDir()
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`,
		toolTurn(call("b1", "bash", `{"command":"echo ready; sleep 0.5; echo second-line; exec sleep 1000","background":true,"waitFor":"^ready"}`)),
		toolTurn(call("o1", "job_output", `{"jobId":"job-1","waitFor":"second-line","waitMs":20000}`)),
		toolTurn(call("k1", "job_kill", `{"jobId":"job-1"}`)),
		textTurn("finished")))
	tc := newTerminalClient(c, t)
	res, before := c.result(c.prompt(sid, "run it"), func(m *msg) {
		if !tc.handle(m) {
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if res.Get("stopReason").String() != "end_turn" {
		t.Fatalf("prompt answered %s", res.Raw)
	}
	tc.mu.Lock()
	calls := strings.Join(tc.calls, " ")
	created := len(tc.created)
	tc.mu.Unlock()
	if created != 1 || !strings.Contains(calls, "terminal/kill") {
		t.Fatalf("terminal/create %d times; calls %s", created, calls)
	}
	if args := tc.created[0].get("params.args").Raw; !strings.Contains(args, "sandbox-exec") {
		t.Errorf("the job's command line is not in pid's sandbox: %s", args)
	}
	select {
	case <-tc.terms["term-1"].done:
	default:
		t.Error("the job's command still runs after job_kill")
	}
	ends := map[string]gjson.Result{}
	for _, u := range updates(t, sid, before) {
		if s := u.Get("status").String(); s == "completed" || s == "failed" {
			ends[u.Get("toolCallId").String()] = u
		}
	}
	if b1 := ends["b1"]; b1.Get("content.0.type").String() != "terminal" || b1.Get("content.0.terminalId").String() != "term-1" ||
		!strings.Contains(b1.Get("content.1.content.text").String(), "Started job-1") || !strings.Contains(b1.Get("content.1.content.text").String(), "ready") {
		t.Errorf("the call that started the job: %s", b1.Raw)
	}
	if o1 := ends["o1"].Get("content.0.content.text").String(); !strings.Contains(o1, "second-line") {
		t.Errorf("job_output did not read what the job printed later: %q", o1)
	}
	if k1 := ends["k1"].Get("content.0.content.text").String(); !strings.Contains(k1, "stopped by job_kill") {
		t.Errorf("job_kill: %q", k1)
	}
}

// A command in the client's terminal is held to the protected paths as pid's own are: it
// cannot move .git aside nor leave a .vscode/tasks.json or a git hook for the person's editor
// or git to run later.
func TestBashInTheClientsTerminalLeavesNothingToRunLater(t *testing.T) {
	needKernelSandbox(t)
	c := start(t)
	c.initialize(map[string]any{"terminal": true})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	head, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	command := "mkdir -p .vscode; echo '{}' > .vscode/tasks.json; echo 'touch PWNED' > .git/hooks/pre-commit; mv .git .git_old; mkdir .git; echo planted > .git/HEAD; true"
	args, _ := json.Marshal(map[string]any{"command": command})
	sid := c.newSession(dir, script(`"permissions":{"tools":{"bash":"allow"}}`, toolTurn(call("b1", "bash", string(args))), textTurn("finished")))
	tc := newTerminalClient(c, t)
	c.result(c.prompt(sid, "run it"), func(m *msg) {
		if !tc.handle(m) {
			t.Errorf("unexpected request %s", m.raw)
		}
	})
	if len(tc.created) != 1 {
		t.Fatalf("terminal/create %d times", len(tc.created))
	}
	for _, p := range []string{".vscode/tasks.json", ".git/hooks/pre-commit", ".git_old"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("the command in the client's terminal left %s", p)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD")); string(now) != string(head) {
		t.Errorf(".git/HEAD is %q, was %q", now, head)
	}
}

// Package exec_test runs small tasks through `pid exec --json` (issue 34), as a benchmark
// harness would: the real binary in a repository folder of its own, the user's settings
// naming a scripted model (no network), and the checks a harness makes: the files after the
// run, the JSON lines on stdout (the native protocol's notifications, then the result line)
// and the exit code.
package exec_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/pidtest"
)

// pidBin is the binary the tests run, built once (or $PID_BIN).
var pidBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-exec-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if pidBin, err = pidtest.Binary(dir, pidtest.Race()); err != nil {
		fmt.Fprintf(os.Stderr, "building pid: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hangGuard bounds one pid exec: a run that would wait for an approver must end long before.
const hangGuard = 60 * time.Second

// task is one folder to run pid exec in, with its own HOME and XDG folders.
type task struct {
	home, repo string
}

// newTask makes a repository folder holding files, and user settings whose model plays
// turns (a scripted model, docs/protocol.md "Scripted model").
func newTask(t *testing.T, files map[string]string, turns ...string) *task {
	t.Helper()
	root := t.TempDir()
	tk := &task{home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	for name, text := range files {
		p := filepath.Join(tk.repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(tk.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if turns != nil {
		settings := `{"model": {"provider": "script", "turns": [` + strings.Join(turns, ",") + `]}}`
		if !json.Valid([]byte(settings)) {
			t.Fatalf("the settings are not JSON: %s", settings)
		}
		tk.write(t, filepath.Join("config", "pid", "settings.json"), settings)
	}
	return tk
}

func (tk *task) write(t *testing.T, rel, text string) {
	t.Helper()
	p := filepath.Join(tk.home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// command is pid exec with args in the task's repository and environment.
func (tk *task) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, pidBin, append([]string{"exec"}, args...)...)
	cmd.Dir = tk.repo
	cmd.Env = append(os.Environ(), "HOME="+tk.home, "XDG_CONFIG_HOME="+filepath.Join(tk.home, "config"),
		"XDG_STATE_HOME="+filepath.Join(tk.home, "state"), "XDG_DATA_HOME="+filepath.Join(tk.home, "data"),
		"XDG_CACHE_HOME="+filepath.Join(tk.home, "cache"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs pid exec to its end and returns its exit code, its stdout's lines and its stderr.
func (tk *task) run(t *testing.T, args ...string) (int, []gjson.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := tk.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("pid exec %s did not end within %v (it must never wait for an approver)\nstderr:\n%s", strings.Join(args, " "), hangGuard, stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, jsonLines(t, stdout.String()), stderr.String()
}

// jsonLines parses every line of out, which must each be one JSON object.
func jsonLines(t *testing.T, out string) []gjson.Result {
	t.Helper()
	var lines []gjson.Result
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(l)) || !strings.HasPrefix(l, "{") {
			t.Fatalf("a line of stdout is not a JSON object: %q\nstdout:\n%s", l, out)
		}
		lines = append(lines, gjson.Parse(l))
	}
	return lines
}

// checkStream checks the shape every --json run has: notifications ({method, params} with
// the session's id), agentStart first, agentEnd right before the result line, which comes
// last and has every field; it returns the result line and the methods in order.
func checkStream(t *testing.T, lines []gjson.Result) (gjson.Result, []string) {
	t.Helper()
	if len(lines) < 3 {
		t.Fatalf("want notifications and a result line, got %d lines", len(lines))
	}
	res := lines[len(lines)-1]
	for _, f := range []string{"type", "sessionId", "stopReason", "usage", "text"} {
		if !res.Get(f).Exists() {
			t.Errorf("the result line has no %s: %s", f, res.Raw)
		}
	}
	if res.Get("type").String() != "result" || res.Get("sessionId").String() == "" {
		t.Errorf("the last line is not the result: %s", res.Raw)
	}
	var methods []string
	for _, l := range lines[:len(lines)-1] {
		m := l.Get("method").String()
		if m == "" || !l.Get("params").IsObject() || len(l.Map()) != 2 {
			t.Fatalf("a line is not {method, params}: %s", l.Raw)
		}
		if got := l.Get("params.sessionId").String(); got != res.Get("sessionId").String() {
			t.Errorf("%s is for session %q, the result for %q", m, got, res.Get("sessionId").String())
		}
		methods = append(methods, m)
	}
	if methods[0] != "agentStart" || methods[len(methods)-1] != "agentEnd" {
		t.Errorf("the notifications run from %s to %s, want agentStart to agentEnd", methods[0], methods[len(methods)-1])
	}
	return res, methods
}

// toolEnds returns the toolEnd params of the run, by tool call id.
func toolEnds(lines []gjson.Result) map[string]gjson.Result {
	out := map[string]gjson.Result{}
	for _, l := range lines {
		if l.Get("method").String() == "toolEnd" {
			out[l.Get("params.toolCallId").String()] = l.Get("params")
		}
	}
	return out
}

func count(methods []string, m string) int {
	n := 0
	for _, x := range methods {
		if x == m {
			n++
		}
	}
	return n
}

// The buggy sum: a repository whose test fails until add.sh adds.
var buggyRepo = map[string]string{
	"add.sh":  "#!/bin/sh\necho $(( $1 - $2 ))\n",
	"test.sh": "#!/bin/sh\n[ \"$(sh add.sh 2 3)\" = 5 ] && echo PASS || { echo FAIL; exit 1; }\n",
}

// The turns of a model that runs the test, reads the code, fixes it and runs the test again.
var fixTurns = []string{
	`{"content": [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "sh test.sh"}}]}`,
	`{"content": [{"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "add.sh"}}]}`,
	`{"content": [{"type": "toolCall", "id": "e1", "name": "edit", "arguments": {"path": "add.sh", "edits": [{"oldText": "$1 - $2", "newText": "$1 + $2"}]}}]}`,
	`{"content": [{"type": "toolCall", "id": "t2", "name": "bash", "arguments": {"command": "sh test.sh"}}]}`,
	`{"content": [{"type": "text", "text": "Fixed: add.sh subtracted."}]}`,
}

// In auto mode the model reads, fixes and tests with no one asked: exit 0, the file fixed,
// the test's output in the stream, and the session saved (a second pid exec resumes it).
func TestFixAFailingTest(t *testing.T) {
	tk := newTask(t, buggyRepo, append(fixTurns, `{"content": [{"type": "text", "text": "still fixed"}]}`)...)
	code, lines, stderr := tk.run(t, "--json", "--mode", "auto", "make test.sh pass")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, stderr)
	}
	res, methods := checkStream(t, lines)
	if res.Get("stopReason").String() != "stop" || res.Get("text").String() != "Fixed: add.sh subtracted." {
		t.Errorf("result %s", res.Raw)
	}
	if b, _ := os.ReadFile(filepath.Join(tk.repo, "add.sh")); !strings.Contains(string(b), "$1 + $2") {
		t.Errorf("add.sh is not fixed:\n%s", b)
	}
	ends := toolEnds(lines)
	if r := ends["t1"]; !r.Get("isError").Bool() || !strings.Contains(r.Get("result.content.0.text").String(), "FAIL") {
		t.Errorf("the first test run: %s", r.Raw)
	}
	if r := ends["t2"]; r.Get("isError").Bool() || !strings.Contains(r.Get("result.content.0.text").String(), "PASS") {
		t.Errorf("the second test run: %s", r.Raw)
	}
	if n := count(methods, "turnEnd"); n != 5 {
		t.Errorf("%d turns, want 5: %v", n, methods)
	}
	for _, m := range []string{"messageUpdate", "toolStart", "toolExecutionStart", "usageUpdate"} {
		if count(methods, m) == 0 {
			t.Errorf("no %s in the stream: %v", m, methods)
		}
	}
	// The session was saved like any other: resuming it goes on with the same transcript
	// (the scripted model plays its next turn).
	code, again, stderr := tk.run(t, "--json", "--resume", res.Get("sessionId").String(), "again")
	if code != 0 {
		t.Fatalf("resume: exit %d\nstderr:\n%s", code, stderr)
	}
	if r, _ := checkStream(t, again); r.Get("sessionId").String() != res.Get("sessionId").String() || r.Get("text").String() != "still fixed" {
		t.Errorf("the resumed run's result: %s", r.Raw)
	}
}

// In the default mode the write would ask: it is denied with the reason the model reads, the
// run ends at once (the next turn, which would create a file, is never played), the file is
// unchanged, the exit code is 2, and the denied result is in the saved session.
func TestACallThatWouldAskEndsTheRun(t *testing.T) {
	tk := newTask(t, buggyRepo,
		`{"content": [{"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "add.sh"}}]}`,
		`{"content": [{"type": "toolCall", "id": "e1", "name": "write", "arguments": {"path": "add.sh", "content": "#!/bin/sh\\necho $(( $1 + $2 ))\\n"}}]}`,
		`{"content": [{"type": "toolCall", "id": "w1", "name": "write", "arguments": {"path": "marker", "content": "x"}}]}`,
		`{"content": [{"type": "text", "text": "never"}]}`)
	code, lines, stderr := tk.run(t, "--json", "fix add.sh")
	if code != 2 {
		t.Fatalf("exit %d, want 2\nstderr:\n%s", code, stderr)
	}
	res, methods := checkStream(t, lines)
	e1 := toolEnds(lines)["e1"]
	if !e1.Get("isError").Bool() || !strings.Contains(e1.Get("result.content.0.text").String(), "no one to ask in pid exec") {
		t.Errorf("the write's result: %s", e1.Raw)
	}
	if n := count(methods, "turnStart"); n != 2 {
		t.Errorf("%d turns, want 2 (the run ends at the call that needed an approver): %v", n, methods)
	}
	if b, _ := os.ReadFile(filepath.Join(tk.repo, "add.sh")); !strings.Contains(string(b), "$1 - $2") {
		t.Errorf("add.sh changed:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(tk.repo, "marker")); err == nil {
		t.Error("the turn after the denied call ran")
	}
	if res.Get("text").String() == "never" {
		t.Errorf("result %s", res.Raw)
	}
	saved := false
	filepath.WalkDir(filepath.Join(tk.home, "state"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, res.Get("sessionId").String()) {
			b, _ := os.ReadFile(p)
			saved = saved || bytes.Contains(b, []byte("no one to ask in pid exec"))
		}
		return nil
	})
	if !saved {
		t.Error("no saved session file holds the denied result")
	}
}

// Without --json the assistant's text streams on stdout and each tool call is one line on
// stderr.
func TestPlainOutput(t *testing.T) {
	tk := newTask(t, map[string]string{"a.txt": "hello\n"},
		`{"content": [{"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "a.txt"}}]}`,
		`{"content": [{"type": "text", "text": "It says hello."}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := tk.command(ctx, "what does a.txt say?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if stdout.String() != "It says hello.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if got := strings.Count(stderr.String(), "\n"); got != 1 || !strings.Contains(stderr.String(), `read "a.txt"`) {
		t.Errorf("stderr %q, want one line for the read", stderr.String())
	}
}

// --max-turns ends the run after that many turns: the model is not called again.
func TestMaxTurns(t *testing.T) {
	tk := newTask(t, map[string]string{"a.txt": "hello\n"},
		`{"content": [{"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "a.txt"}}]}`,
		`{"content": [{"type": "toolCall", "id": "r2", "name": "read", "arguments": {"path": "a.txt"}}]}`,
		`{"content": [{"type": "text", "text": "done"}]}`)
	code, lines, stderr := tk.run(t, "--json", "--max-turns", "1", "read a.txt forever")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, stderr)
	}
	res, methods := checkStream(t, lines)
	if res.Get("stopReason").String() != "maxTurns" || count(methods, "turnStart") != 1 {
		t.Errorf("result %s after %v", res.Raw, methods)
	}
}

// Without a model, and with a bad flag, pid exec fails with exit 1 and still ends with the
// result line, which says what to set.
func TestErrors(t *testing.T) {
	tk := newTask(t, nil)
	code, lines, _ := tk.run(t, "--json", "hello")
	if code != 1 || len(lines) == 0 {
		t.Fatalf("exit %d with %d lines, want 1 and a result", code, len(lines))
	}
	res := lines[len(lines)-1]
	if res.Get("type").String() != "result" || res.Get("stopReason").String() != "error" || !strings.Contains(res.Get("error").String(), "model") {
		t.Errorf("result %s", res.Raw)
	}
	code, lines, _ = tk.run(t, "--json", "--mode", "bogus", "hello")
	if code != 1 || !strings.Contains(lines[len(lines)-1].Get("error").String(), "bogus") {
		t.Errorf("exit %d, result %s", code, lines[len(lines)-1].Raw)
	}
}

// The prompt - is read from stdin.
func TestPromptFromStdin(t *testing.T) {
	tk := newTask(t, nil, `{"content": [{"type": "text", "text": "ok"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := tk.command(ctx, "--json", "-")
	cmd.Stdin = strings.NewReader("the prompt from stdin")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := jsonLines(t, string(out))
	checkStream(t, lines)
	if !strings.Contains(lines[2].Get("params.message.content.0.text").String(), "the prompt from stdin") {
		t.Errorf("the user message: %s", lines[2].Raw)
	}
}

// SIGINT cancels the run cleanly: the running command is stopped, the stream ends with
// agentEnd and the result line, and the exit code is 130.
func TestInterrupt(t *testing.T) {
	tk := newTask(t, nil,
		`{"content": [{"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "sleep 600"}}]}`,
		`{"content": [{"type": "text", "text": "never"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := tk.command(ctx, "--json", "--mode", "auto", "wait")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(stdout, &out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if gjson.Get(sc.Text(), "method").String() == "toolExecutionStart" {
			break // the sleep runs now
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("pid exec did not end after SIGINT\nstderr:\n%s", stderr.String())
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\nstderr:\n%s", err, stderr.String())
	}
	lines := jsonLines(t, out.String())
	res, methods := checkStream(t, lines)
	if res.Get("stopReason").String() != "aborted" || count(methods, "turnStart") != 1 {
		t.Errorf("result %s after %v", res.Raw, methods)
	}
	if b1 := toolEnds(lines)["b1"]; !b1.Get("isError").Bool() {
		t.Errorf("the interrupted command's result: %s", b1.Raw)
	}
}

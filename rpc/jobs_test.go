//go:build linux

// This file tests background jobs through the real daemon and the real sandbox: a scripted
// model starts a tiny HTTP server as a job with waitFor, fetches it from its next bash call
// on 127.0.0.1, reads the request's log line with job_output; another session cannot reach
// it; jobs/list, jobs/kill and jobUpdate; session/close and kill -9 of pid leave no process
// (found by a token in /proc/*/cmdline).

package rpc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/sandbox"
)

// serverPy is a tiny HTTP server: it writes its port to port.txt, says "Serving" and logs
// each request on stderr (http.server's log line).
const serverPy = `import http.server, sys
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
open("port.txt", "w").write(str(s.server_address[1]))
print("Serving on port", s.server_address[1], flush=True)
s.serve_forever()
`

const fetchHello = `exec 3<>/dev/tcp/127.0.0.1/$(cat port.txt) && printf 'GET /hello.txt HTTP/1.0\r\n\r\n' >&3 && cat <&3`

// procsWith returns the live processes whose command line holds token.
func procsWith(t *testing.T, token string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), token) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func needSandboxHere(t *testing.T) {
	t.Helper()
	if c := sandbox.Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1 and no sandbox: %s", c.Reason)
		}
		t.Skipf("this kernel cannot give pid's sandbox: %s", c.Reason)
	}
}

// jobSession starts a session whose model starts the server as job-1 and fetches it, and
// runs that prompt.
func jobSession(t *testing.T, d *daemon, ws, token string) string {
	t.Helper()
	sid := d.newSession(obj{"cwd": ws, "mode": "auto", "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("b1", "bash", obj{"command": "python3 server.py " + token, "background": true, "waitFor": "^Serving", "waitMs": 60000})),
		turn(toolCall("b2", "bash", obj{"command": fetchHello})),
		turn(toolCall("o1", "job_output", obj{"jobId": "job-1", "waitFor": "GET /hello.txt", "waitMs": 60000})),
		turn(text("the server answers")),
	)})
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "start the server and try it"})
	if res.Get("stopReason").String() != "stop" {
		t.Fatalf("prompt: %s\n%s", res.Raw, d.dump())
	}
	return sid
}

func toolEndOf(d *daemon, id string) *wireMsg {
	return d.notification("toolEnd", func(m *wireMsg) bool { return m.get("params.toolCallId").String() == id })
}

func TestJobsThroughTheDaemon(t *testing.T) {
	needSandboxHere(t)
	token := "pidrpcjob" + strconv.Itoa(os.Getpid())
	_, ws := newWorkspaceDir(t, map[string]string{"server.py": serverPy, "hello.txt": "hello from the job\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	sid := jobSession(t, d, ws, token)

	b1 := toolEndOf(d, "b1")
	if b1.get("params.isError").Bool() || !strings.HasPrefix(b1.get("params.result.content.0.text").String(), "Started job-1: python3 server.py "+token) ||
		b1.get("params.result.details.jobId").String() != "job-1" || !b1.get("params.result.details.running").Bool() || !b1.get("params.result.details.matched").Bool() {
		t.Errorf("the background call's result: %s", b1)
	}
	if b2 := toolEndOf(d, "b2"); !strings.Contains(b2.get("params.result.content.0.text").String(), "hello from the job") {
		t.Errorf("the next bash call did not reach the job's server: %s", b2)
	}
	if o1 := toolEndOf(d, "o1"); !strings.Contains(o1.get("params.result.content.0.text").String(), `"GET /hello.txt HTTP/1.0" 200`) {
		t.Errorf("job_output lacks the request's log line: %s", o1)
	}
	started := d.notification("jobUpdate", func(m *wireMsg) bool { return m.get("params.running").Bool() })
	if started.get("params.sessionId").String() != sid || started.get("params.jobId").String() != "job-1" || started.get("params.exitCode").Exists() {
		t.Errorf("jobUpdate at the start: %s", started)
	}
	list := d.call("jobs/list", obj{"sessionId": sid}).Get("jobs").Array()
	if len(list) != 1 || list[0].Get("jobId").String() != "job-1" || !list[0].Get("running").Bool() ||
		list[0].Get("command").String() != "python3 server.py "+token || list[0].Get("outputBytes").Int() == 0 || list[0].Get("exitCode").Exists() {
		t.Fatalf("jobs/list: %v", list)
	}
	if _, err := time.Parse(time.RFC3339, list[0].Get("startedAt").String()); err != nil {
		t.Errorf("startedAt: %v", err)
	}
	if len(procsWith(t, token)) != 1 {
		t.Errorf("the server is not running: %v", procsWith(t, token))
	}

	// Another session, same daemon: its command does not reach the server.
	other := d.newSession(obj{"cwd": ws, "mode": "auto", "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("x1", "bash", obj{"command": fetchHello})), turn(text("no")))})
	d.call("session/prompt", obj{"sessionId": other, "text": "try it"})
	if x1 := toolEndOf(d, "x1"); strings.Contains(x1.get("params.result.content.0.text").String(), "hello from the job") || !x1.get("params.isError").Bool() {
		t.Errorf("another session reached the job's server: %s", x1)
	}

	// The /jobs command lists it.
	if out := d.call("session/prompt", obj{"sessionId": sid, "text": "/jobs"}).Get("command.output").String(); !strings.Contains(out, "- job-1: python3 server.py "+token+" (running for ") {
		t.Errorf("/jobs: %q", out)
	}

	// jobs/output shows the person what it printed, the model's read mark unmoved.
	out := d.call("jobs/output", obj{"sessionId": sid, "jobId": "job-1"})
	if o := out.Get("output").String(); !strings.Contains(o, "Serving on port") || !strings.Contains(o, `"GET /hello.txt HTTP/1.0" 200`) || !out.Get("job.running").Bool() {
		t.Errorf("jobs/output: %s", out.Raw)
	}
	// tail: 1 is its last line only (the request's log line, the server's start not in it).
	last := d.call("jobs/output", obj{"sessionId": sid, "jobId": "job-1", "tail": 1}).Get("output").String()
	if strings.Contains(last, "\n") || !strings.Contains(last, `"GET /hello.txt HTTP/1.0" 200`) {
		t.Errorf("jobs/output with tail 1: %q", last)
	}
	if code, _ := d.callErr("jobs/output", obj{"sessionId": sid, "jobId": "job-1", "tail": 5000}); code != -32602 {
		t.Errorf("jobs/output with tail 5000: code %d, want -32602", code)
	}

	// jobs/kill ends it: the answer, jobUpdate, and no process.
	if code, _ := d.callErr("jobs/kill", obj{"sessionId": sid, "jobId": "job-7"}); code != -32602 {
		t.Errorf("jobs/kill of an unknown job: code %d, want -32602", code)
	}
	killed := d.call("jobs/kill", obj{"sessionId": sid, "jobId": "job-1"}).Get("job")
	if killed.Get("running").Bool() || !killed.Get("exitCode").Exists() {
		t.Errorf("jobs/kill: %s", killed.Raw)
	}
	ended := d.notification("jobUpdate", func(m *wireMsg) bool { return !m.get("params.running").Bool() })
	if ended.get("params.jobId").String() != "job-1" || !ended.get("params.exitCode").Exists() {
		t.Errorf("jobUpdate at the end: %s", ended)
	}
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left after jobs/kill: %v", left)
	}

	// session/close with a job running leaves no process.
	token2 := token + "close"
	sid2 := jobSession(t, d, ws, token2)
	if len(procsWith(t, token2)) != 1 {
		t.Fatalf("the second server is not running: %v", procsWith(t, token2))
	}
	d.call("session/close", obj{"sessionId": sid2})
	if left := procsWith(t, token2); len(left) > 0 {
		t.Errorf("processes left after session/close: %v", left)
	}
}

// kill -9 of pid leaves no job process.
func TestJobsDieWithTheDaemon(t *testing.T) {
	needSandboxHere(t)
	token := "pidrpcjobkill" + strconv.Itoa(os.Getpid())
	_, ws := newWorkspaceDir(t, map[string]string{"server.py": serverPy, "hello.txt": "hello from the job\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	jobSession(t, d, ws, token)
	if len(procsWith(t, token)) != 1 {
		t.Fatalf("the server is not running: %v", procsWith(t, token))
	}
	d.kill()
	// The parent-death signals are sent as pid dies; the deaths they cause follow on their
	// own: wait for the state (no process), not for an ordering.
	limit := time.Now().Add(30 * time.Second)
	for len(procsWith(t, token)) > 0 && time.Now().Before(limit) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left 30 s after kill -9 of pid: %v", left)
	}
}

// What a job changes after the call that started it is recorded in the checkpoint of the
// prompt during which pid sees it (here at job_output), and a rewind of that prompt takes
// it back.
func TestJobChangesAreCheckpointed(t *testing.T) {
	needSandboxHere(t)
	_, ws := newWorkspaceDir(t, map[string]string{"keep.txt": "kept\n"})
	d := startProcess(t, processOptions{Env: sessionEnv(t)})
	initWorkspace(d, obj{}, ws)
	job := "echo waiting; while [ ! -e go.txt ]; do sleep 0.05; done; echo made > by-job.txt; echo written"
	sid := d.newSession(obj{"cwd": ws, "mode": "auto", "permissions": obj{"default": "allow"}, "model": scriptModel(
		turn(toolCall("b1", "bash", obj{"command": job, "background": true, "waitFor": "waiting", "waitMs": 60000})),
		turn(text("started")),
		turn(toolCall("o1", "job_output", obj{"jobId": "job-1", "waitFor": "written", "waitMs": 60000})),
		turn(text("it wrote")),
	)})
	d.call("session/prompt", obj{"sessionId": sid, "text": "start it"})
	// The job goes on between the prompts: the test lets it write.
	if err := os.WriteFile(filepath.Join(ws, "go.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.call("session/prompt", obj{"sessionId": sid, "text": "what did it do"})
	if o1 := toolEndOf(d, "o1"); !strings.Contains(o1.get("params.result.content.0.text").String(), "written") {
		t.Fatalf("job_output: %s", o1)
	}
	list := d.call("checkpoints/list", obj{"sessionId": sid}).Get("checkpoints").Array()
	if len(list) != 2 {
		t.Fatalf("checkpoints: %v", list)
	}
	if f := list[1].Get(`files.#(path%"*by-job.txt").change`).String(); f != "added" {
		t.Errorf("the second prompt's checkpoint does not hold the job's file: %s", list[1].Raw)
	}
	if strings.Contains(list[0].Raw, "by-job.txt") {
		t.Errorf("the first prompt's checkpoint holds a file the job wrote later: %s", list[0].Raw)
	}
	d.call("session/rewind", obj{"sessionId": sid, "checkpointId": list[1].Get("id").String(), "restore": "files"})
	if _, err := os.Stat(filepath.Join(ws, "by-job.txt")); !os.IsNotExist(err) {
		t.Errorf("the rewind left the job's file: %v", err)
	}
}

//go:build linux

package tools_test

// Background jobs (bash with background: true, job_output, job_kill) through the real tools,
// in the real sandbox: this test binary is its own helper and namespace holder. A process is
// found by a token in its command line (/proc/*/cmdline), so "no process left" is checked on
// the machine's real process table.

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// jobDetails returns a job result's details.
func jobDetails(t *testing.T, r result) tools.JobDetails {
	t.Helper()
	d, ok := r.details.(tools.JobDetails)
	if !ok {
		t.Fatalf("details are %T, want tools.JobDetails: %#v\n%s", r.details, r.details, r.text)
	}
	return d
}

// procsWith returns the ids of the live processes whose command line holds token.
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
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), token) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// newToken returns a string unique to this test, for process command lines.
func newToken(t *testing.T) string {
	return "pidjobtest" + strconv.Itoa(os.Getpid()) + strings.ReplaceAll(t.Name(), "/", "")
}

// fetchCmd is a bash command that GETs path from 127.0.0.1:port (bash's /dev/tcp: no proxy,
// no client program needed) and prints the answer.
func fetchCmd(port, path string) string {
	return "exec 3<>/dev/tcp/127.0.0.1/" + port + " && printf 'GET " + path + " HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"
}

var servingPort = regexp.MustCompile(`Serving HTTP on 127\.0\.0\.1 port (\d+)`)

// A dev server started as a job is waited for, reached by the session's next command on
// 127.0.0.1 inside the sandbox and by nothing else, logs the request for job_output, and
// job_kill ends it with every process it started.
func TestJobServerReachableInTheSessionOnly(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed: %v", err)
	}
	token := newToken(t)
	ws, _ := newWorkspace(t, map[string]string{token + "/hello.txt": "hello from the job\n"})
	// A sleeper in the background too: job_kill must end it as well.
	cmd := "(exec -a " + token + "-sleeper sleep 3000) & exec python3 -m http.server 0 --bind 127.0.0.1 --directory " + token
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": cmd, "background": true, "waitFor": "Serving HTTP", "waitMs": 60000}))
	text := mustOK(t, r)
	d := jobDetails(t, r)
	if d.JobID != "job-1" || !d.Running || d.ExitCode != nil || d.Matched == nil || !*d.Matched {
		t.Fatalf("details %+v, want job-1 running and matched\n%s", d, text)
	}
	if !strings.HasPrefix(text, "Started job-1: "+cmd+"\n") {
		t.Errorf("the result does not start with the job's name:\n%s", text)
	}
	if d.Sandbox == nil || d.Sandbox.Mode != "workspace-write" {
		t.Errorf("details.sandbox = %+v, want the job sandboxed", d.Sandbox)
	}
	m := servingPort.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no Serving line in the result:\n%s", text)
	}
	port := m[1]
	if len(procsWith(t, token+"-sleeper")) != 1 {
		t.Fatalf("the job's sleeper is not running: %v", procsWith(t, token))
	}

	// The session's next command reaches it.
	got := mustOK(t, call(t, ws, "bash", bashArgs(t, fetchCmd(port, "/hello.txt"))))
	if !strings.Contains(got, "200 OK") || !strings.Contains(got, "hello from the job") {
		t.Errorf("the next command of the session did not get the page:\n%s", got)
	}
	// Another session's command does not.
	other, _ := newWorkspace(t, nil)
	r2 := call(t, other, "bash", bashArgs(t, fetchCmd(port, "/hello.txt")))
	if strings.Contains(r2.text, "hello from the job") || !r2.isError {
		t.Errorf("another session reached the job's server:\n%s", r2.text)
	}
	// Nor does the host.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second); err == nil {
		c.Close()
		t.Errorf("the host's 127.0.0.1:%s answered: the job's server is not in the session's own network", port)
	}

	// job_output gives the request's log line (stderr), and only the new output.
	r = call(t, ws, "job_output", `{"jobId":"job-1","waitFor":"GET /hello.txt","waitMs":60000}`)
	text = mustOK(t, r)
	if !strings.Contains(text, `"GET /hello.txt HTTP/1.0" 200`) {
		t.Errorf("job_output lacks the request's log line:\n%s", text)
	}
	if strings.Contains(text, "Serving HTTP") {
		t.Errorf("job_output repeats what the start's result gave:\n%s", text)
	}
	if d := jobDetails(t, r); !d.Running || d.Matched == nil || !*d.Matched {
		t.Errorf("job_output details %+v, want running and matched", d)
	}
	if l := ws.Jobs().List(); len(l) != 1 || l[0].JobID != "job-1" || !l[0].Running || l[0].Command != cmd || l[0].OutputBytes == 0 {
		t.Errorf("List = %+v", l)
	} else if _, err := time.Parse(time.RFC3339, l[0].StartedAt); err != nil {
		t.Errorf("startedAt %q is not RFC 3339: %v", l[0].StartedAt, err)
	}

	// job_kill ends the server and the sleeper.
	r = call(t, ws, "job_kill", `{"jobId":"job-1"}`)
	text = mustOK(t, r)
	if d := jobDetails(t, r); d.Running || d.ExitCode == nil {
		t.Errorf("job_kill details %+v, want ended with an exit code", d)
	}
	if !strings.Contains(text, "job-1 was stopped by job_kill") {
		t.Errorf("job_kill's result does not say how the job ended:\n%s", text)
	}
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left after job_kill: %v", left)
	}
	if l := ws.Jobs().List(); len(l) != 1 || l[0].Running || l[0].ExitCode == nil {
		t.Errorf("after job_kill, List = %+v, want job-1 listed as ended", l)
	}
	mustFail(t, call(t, ws, "job_output", `{"jobId":"job-9"}`), "There is no job job-9", "job-1")
}

// A session runs at most 8 jobs: the ninth is refused, naming the running ones, and does not
// run; once one ends, a new one may start.
func TestJobNinthIsRefused(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	token := newToken(t)
	ws, _ := newWorkspace(t, nil)
	for i := 1; i <= tools.MaxRunningJobs; i++ {
		r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "exec -a " + token + "-" + strconv.Itoa(i) + " sleep 3000", "background": true, "waitMs": 0}))
		if d := jobDetails(t, r); !d.Running || d.JobID != "job-"+strconv.Itoa(i) {
			t.Fatalf("job %d: %+v\n%s", i, d, r.text)
		}
	}
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "exec -a " + token + "-ninth sleep 3000", "background": true, "waitMs": 0}))
	mustFail(t, r, "8 jobs run already", "job-1 (exec -a "+token+"-1 sleep 3000)", "job-8 (")
	if p := procsWith(t, token+"-ninth"); len(p) > 0 {
		t.Errorf("the refused job runs: %v", p)
	}
	if n := len(ws.Jobs().List()); n != tools.MaxRunningJobs {
		t.Errorf("%d jobs listed, want %d", n, tools.MaxRunningJobs)
	}
	mustOK(t, call(t, ws, "job_kill", `{"jobId":"job-3"}`))
	r = call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "exec -a " + token + "-ninth sleep 3000", "background": true, "waitMs": 0}))
	if d := jobDetails(t, r); !d.Running || d.JobID != "job-9" {
		t.Errorf("after a kill, the next job: %+v\n%s", d, r.text)
	}
}

// A job that exits before its ready line says so at once, with its code; a job is not bound
// by bash's timeout.
func TestJobExitAndNoTimeout(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	ws, _ := newWorkspace(t, nil)
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "echo broken config; exit 3", "background": true, "waitFor": "ready", "waitMs": 120000}))
	mustFail(t, r, "Started job-1: echo broken config; exit 3", "broken config", "[job-1 exited with code 3.]")
	if d := jobDetails(t, r); d.Running || d.ExitCode == nil || *d.ExitCode != 3 || d.Matched == nil || *d.Matched {
		t.Errorf("details %+v, want ended with code 3, not matched", d)
	}

	// timeout 0.2 s would kill a foreground command long before it prints.
	r = call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "sleep 1; echo done", "background": true, "timeout": 0.2, "waitMs": 0}))
	if d := jobDetails(t, r); !d.Running {
		t.Fatalf("job-2 not running: %+v\n%s", d, r.text)
	}
	r = call(t, ws, "job_output", `{"jobId":"job-2","waitFor":"^done$","waitMs":60000}`)
	if !strings.Contains(mustOK(t, r), "done") {
		t.Errorf("job-2 did not print done:\n%s", r.text)
	}

	// waitFor and waitMs need background; a bad expression starts nothing.
	mustFail(t, call(t, ws, "bash", `{"command":"true","waitFor":"x"}`), "go with background: true")
	mustFail(t, call(t, ws, "bash", `{"command":"touch started","background":true,"waitFor":"("}`), "not a regular expression", "Nothing was started")
	if len(ws.Jobs().List()) != 2 {
		t.Errorf("a refused call made a job: %+v", ws.Jobs().List())
	}
}

// job_kill sends SIGTERM, then SIGKILL to a job that ignores it.
func TestJobKillEscalates(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	token := newToken(t)
	ws, _ := newWorkspace(t, nil)
	cmd := "trap '' TERM; echo ready; exec -a " + token + " sh -c 'trap \"\" TERM; while :; do sleep 1; done'"
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": cmd, "background": true, "waitFor": "ready", "waitMs": 60000}))
	if d := jobDetails(t, r); !d.Running {
		t.Fatalf("%+v\n%s", d, r.text)
	}
	r = call(t, ws, "job_kill", `{"jobId":"job-1"}`)
	text := mustOK(t, r)
	if d := jobDetails(t, r); d.ExitCode == nil || *d.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit %+v, want 137 (SIGKILL after SIGTERM was ignored)\n%s", d, text)
	}
	if !strings.Contains(text, "stopped by job_kill (signal 9)") {
		t.Errorf("result:\n%s", text)
	}
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// A job's output beyond 1 MiB is dropped, oldest first, and the read says so.
func TestJobOutputRing(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	ws, _ := newWorkspace(t, nil)
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "seq 1 300000; echo end", "background": true, "waitMs": 120000}))
	text := mustOK(t, r)
	if d := jobDetails(t, r); d.Running || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Fatalf("details %+v\n%s", jobDetails(t, r), text)
	}
	// seq 1 300000 prints about 1.9 MB: about 0.9 MB of it is dropped.
	if !strings.Contains(text, "of older output were dropped: a job keeps the last") {
		t.Errorf("no note of the dropped output:\n%.500s", text)
	}
	if !strings.Contains(text, "\nend\n\n[job-1 exited with code 0.]") {
		t.Errorf("the end of the output is missing:\n...%s", text[max(0, len(text)-300):])
	}
	n := 4 // "end\n"
	for i := 1; i <= 300000; i++ {
		n += len(strconv.Itoa(i)) + 1
	}
	if l := ws.Jobs().List(); l[0].OutputBytes != int64(n) {
		t.Errorf("outputBytes %d, want every byte counted", l[0].OutputBytes)
	}
	// The next read has nothing new.
	if got := mustOK(t, call(t, ws, "job_output", `{"jobId":"job-1"}`)); !strings.HasPrefix(got, "(no new output)") {
		t.Errorf("second read:\n%s", got)
	}
}

// A job holds no foreground process slot once its call returned: with one slot, a
// foreground command still runs while a job does.
func TestJobHoldsNoSlot(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	old := tools.ProcessSlots
	tools.ProcessSlots = toolexec.NewSlots(1)
	t.Cleanup(func() { tools.ProcessSlots = old })
	ws, _ := newWorkspace(t, nil)
	r := call(t, ws, "bash", `{"command":"sleep 3000","background":true,"waitMs":0}`)
	if d := jobDetails(t, r); !d.Running {
		t.Fatalf("%+v", d)
	}
	if got := mustOK(t, call(t, ws, "bash", `{"command":"echo foreground"}`)); got != "foreground\n" {
		t.Errorf("got %q", got)
	}
}

// Closing the session (the workspace) ends its jobs: no process is left.
func TestJobEndsWithTheSession(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	token := newToken(t)
	ws, _ := newWorkspace(t, nil)
	// The shell's own command line names the token only in pieces ("$t"Z).
	token += "Z"
	t0 := strings.TrimSuffix(token, "Z")
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "t=" + t0 + "; (exec -a \"$t\"Z-a sleep 3000) & (setsid bash -c \"exec -a ${t}Z-b sleep 3000\" &) ; echo up; wait",
		"background": true, "waitFor": "up", "waitMs": 60000}))
	mustOK(t, r)
	// The setsid one may start after "up": wait for the state (both running).
	limit := time.Now().Add(30 * time.Second)
	for len(procsWith(t, token)) != 2 && time.Now().Before(limit) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := procsWith(t, token); len(p) != 2 {
		t.Fatalf("want the two sleepers running, got %v\n%s", p, call(t, ws, "job_output", `{"jobId":"job-1"}`).text)
	}
	ws.Close()
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left after the session's close: %v", left)
	}
	mustFail(t, call(t, ws, "bash", `{"command":"sleep 1","background":true}`))
}

// jobChildEnv names the folder the child daemon works in; set only in the child.
const jobChildEnv = "PID_TEST_JOB_CHILD"

// kill -9 of the daemon leaves no job process: the job dies with pid (its helper with the
// session's holder, the holder by its parent-death signal).
func TestJobDiesWithTheDaemon(t *testing.T) {
	if dir := os.Getenv(jobChildEnv); dir != "" {
		jobChild(t, dir)
		return
	}
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	token := newToken(t)
	dir := testfs.RealTemp(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestJobDiesWithTheDaemon$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), jobChildEnv+"="+dir, "PID_TEST_JOB_TOKEN="+token)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	started := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "JOB STARTED") {
			started = true
			break
		}
	}
	if !started {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child did not start its job")
	}
	if p := procsWith(t, token); len(p) != 2 {
		t.Errorf("want the job's two processes running, got %v", p)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	go func() {
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die by SIGKILL: %v", err)
	}
	// The parent-death signals are delivered as the daemon dies, but the deaths they cause
	// follow on their own: wait for them (a wait for a state, not an ordering).
	limit := time.Now().Add(30 * time.Second)
	for len(procsWith(t, token)) > 0 && time.Now().Before(limit) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := procsWith(t, token); len(left) > 0 {
		t.Errorf("processes left 30 s after kill -9 of the daemon: %v", left)
		for _, p := range left {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// jobChild runs in the child: it starts a job of two processes and waits to be killed.
func jobChild(t *testing.T, dir string) {
	token := os.Getenv("PID_TEST_JOB_TOKEN")
	ws, err := tools.NewWorkspace(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, ws, "bash", jsonArgs(t, map[string]any{"command": "(exec -a " + token + "-a sleep 3000) & echo up; exec -a " + token + "-b sleep 3000",
		"background": true, "waitFor": "up", "waitMs": 60000}))
	mustOK(t, r)
	os.Stdout.WriteString("JOB STARTED\n")
	select {} // until killed
}

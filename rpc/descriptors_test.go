//go:build linux

// This file tests pid's file descriptors against the real daemon: an idle session holds
// no descriptor of its file (its lock's only, and its workspace folder's), and at the
// process's limit (RLIMIT_NOFILE lowered with prlimit) session/new is an internal error
// saying that too many files are open, not invalid params.

package rpc

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pid-agent/pid/internal/proctest"
)

// openFDs returns the descriptors open in process pid, each as "fd -> target".
func openFDs(t *testing.T, pid int) []string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		target, _ := os.Readlink(dir + "/" + e.Name())
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}

// countJSONL counts the descriptors of session files among fds.
func countJSONL(fds []string) int {
	n := 0
	for _, fd := range fds {
		if strings.HasSuffix(fd, ".jsonl") {
			n++
		}
	}
	return n
}

func TestIdleSessionsHoldNoFileDescriptor(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	var sids []string
	for range 4 {
		sid := d.newSession(obj{"model": scriptModel(turn(text("one")), turn(text("two")))})
		d.call("session/prompt", obj{"sessionId": sid, "text": "first"})
		sids = append(sids, sid)
	}
	// The file is synced and closed once it has been quiet for 50 ms (within a second):
	// wait for that, up to the hang guard.
	proctest.WaitUntilState(t, hangGuard, "4 idle sessions to close their files", func() (bool, string) {
		fds := openFDs(t, d.pid)
		return countJSONL(fds) == 0, "\n" + strings.Join(fds, "\n")
	})
	// A closed file is opened again for the next message, which is saved.
	d.call("session/prompt", obj{"sessionId": sids[0], "text": "second"})
	stopDaemon(t, d)
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{}, ws)
	res := d2.call("session/load", obj{"sessionId": sids[0]})
	if n := len(loadedMessages(res)); n != 4 {
		t.Errorf("loaded %d messages, want 4: the message after the file rested was not saved", n)
	}
	if n := countJSONL(openFDs(t, d2.pid)); n != 0 {
		t.Errorf("a loaded idle session holds %d descriptors of its file, want 0", n)
	}
	stopDaemon(t, d2)
}

func TestTooManyOpenFilesIsAnInternalError(t *testing.T) {
	env := sessionEnv(t)
	_, ws := newWorkspaceDir(t, nil)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{}, ws)
	var was unix.Rlimit
	if err := unix.Prlimit(d.pid, unix.RLIMIT_NOFILE, nil, &was); err != nil {
		t.Fatal(err)
	}
	limit := uint64(len(openFDs(t, d.pid)) + 4)
	if err := unix.Prlimit(d.pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: was.Max}, nil); err != nil {
		t.Fatal(err)
	}
	var code int64
	var msg string
	for i := 0; i < 20 && code == 0; i++ {
		id := d.request("session/new", obj{"model": scriptModel(turn(text("one")))})
		m := d.response(id)
		if m.get("error").Exists() {
			code, msg = m.get("error.code").Int(), m.get("error.message").String()
		}
	}
	if code != codeInternalError || !strings.Contains(msg, "too many open files") {
		t.Errorf("session/new at the descriptor limit: %d %q, want %d saying too many open files", code, msg, codeInternalError)
	}
	// Raised again, the daemon goes on.
	if err := unix.Prlimit(d.pid, unix.RLIMIT_NOFILE, &was, nil); err != nil {
		t.Fatal(err)
	}
	d.newSession(obj{"model": scriptModel(turn(text("one")))})
	stopDaemon(t, d)
}

package procgroup_test

// Child processes and pid's death: StartGroup's children survive the end of the OS thread
// that asked for them (the parent-death signal is tied to the forking thread), a process
// group is ended with its background processes by KillGroups, and when the process that
// started a group is killed with SIGKILL, the whole group dies (parent-death signal for the
// shell, the watchdog for what the shell started). Nothing sleeps to order events: the
// tests poll /proc with a deadline.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/internal/proctest"
)

// helperEnv, when set in the environment of this test binary, makes it a helper process
// instead of running the tests (see helperMain).
const helperEnv = "PID_PROCGROUP_TEST_HELPER"

// helperMain is the helper process: "group" starts a shell through StartGroup that starts
// two sleepers (its children), prints "pgid N" and waits (for the shell) to be killed.
func helperMain(mode string) int {
	if mode != "group" {
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	cmd := exec.Command("bash", "-c", "sleep 1000 & sleep 1000")
	g, err := procgroup.StartGroup(cmd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pgid %d\n", g.Pid())
	g.Wait() // in wait4: a select{} would be a deadlock the runtime ends
	return 1
}

// A child started with a parent-death signal from a goroutine whose thread then ends
// (locked to it and returning) keeps running: the fork happened on the spawner's thread.
// Forked from the ending thread itself, it would get SIGKILL at that moment.
func TestChildOutlivesTheThreadThatAskedForIt(t *testing.T) {
	type started struct {
		g   *procgroup.Group
		in  io.WriteCloser
		tid int
		err error
	}
	var s started
	for range 10 {
		ch := make(chan started, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the runtime ends this thread with the goroutine
			cmd := exec.Command("sh", "-c", "read x; exit 7")
			in, err := cmd.StdinPipe()
			if err != nil {
				ch <- started{err: err}
				return
			}
			g, err := procgroup.StartGroup(cmd)
			ch <- started{g: g, in: in, tid: syscall.Gettid(), err: err}
		}()
		s = <-ch
		if s.err != nil {
			t.Fatal(s.err)
		}
		if s.tid != os.Getpid() { // the main thread is never ended: try again
			break
		}
		s.in.Close()
		s.g.Wait()
	}
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	proctest.WaitUntil(t, 10*time.Second, "the thread to end", func() bool {
		_, err := os.Stat(task)
		return errors.Is(err, os.ErrNotExist)
	})
	// The thread is gone; a parent-death signal tied to it would already be pending.
	if _, err := io.WriteString(s.in, "go on\n"); err != nil {
		t.Errorf("writing to the child: %v", err)
	}
	s.in.Close()
	err := s.g.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("the child ended with %v, want exit status 7 (it was killed when the thread that asked for it ended)", err)
	}
}

// A background process that a finished command left running is ended by KillGroups, with
// SIGTERM first.
func TestKillGroupsEndsBackgroundProcesses(t *testing.T) {
	dir := t.TempDir()
	// The background shell says it is ready once its trap is set: a SIGTERM before that
	// (on a loaded machine the test can get there first) would kill it without the trap.
	cmd := exec.Command("/bin/sh", "-c", `sh -c 'trap "echo got-term > term.txt; exit 0" TERM; echo > ready; sleep 1000 & wait' & echo $! > bg.pid; echo started`)
	cmd.Dir = dir
	g, err := procgroup.StartGroup(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("the shell failed: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "bg.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	if !proctest.Alive(pid) {
		t.Fatalf("background process %d is not running", pid)
	}
	proctest.WaitUntil(t, 10*time.Second, "the background shell to set its trap", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err == nil
	})
	if n := procgroup.KillGroups(5 * time.Second); n < 1 {
		t.Errorf("KillGroups signalled %d groups, want at least 1", n)
	}
	proctest.WaitUntil(t, 5*time.Second, "the background process to die", func() bool { return !proctest.Alive(pid) })
	if got := readFile(t, filepath.Join(dir, "term.txt")); got != "got-term\n" {
		t.Errorf("the background process did not get SIGTERM first: %q", got)
	}
	// Once every process of the group is gone (the sleeper may outlive the shell by a
	// moment on a loaded machine), a second KillGroups has nothing to signal.
	proctest.WaitUntil(t, 5*time.Second, "the group to be empty", func() bool { return len(proctest.Group(t, g.Pid())) == 0 })
	if n := procgroup.KillGroups(0); n != 0 {
		t.Errorf("a second KillGroups signalled %d groups, want 0", n)
	}
}

// When the process that started a group is killed with SIGKILL, nothing of the group is
// left: the shell has a parent-death signal, and the watchdog kills the sleepers the shell
// started (which no parent-death signal reaches).
func TestGroupDiesWithItsStarter(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=group")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pgid ")))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	defer syscall.Kill(-pgid, syscall.SIGKILL) // in case the test fails
	proctest.WaitUntil(t, 10*time.Second, "the shell and its two sleepers", func() bool { return len(proctest.Group(t, pgid)) == 3 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	proctest.WaitUntilState(t, 10*time.Second, "the group's processes to end with their starter", func() (bool, string) {
		g := proctest.Group(t, pgid)
		return len(g) == 0, fmt.Sprint(g)
	})
}

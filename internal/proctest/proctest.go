// Package proctest is what tests see of processes through /proc (the live processes and
// their groups, whether one is alive, the process's own inotify instances) and the tests'
// one polling loop, a bounded wait for what another process or goroutine does instead of a
// fixed sleep (WaitUntil). The tests of most packages use it.
package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Proc is what /proc/PID/stat says of a process.
type Proc struct {
	Pid, PPid, Pgid int
	// Comm is the executable's name (in parentheses in the file), State its one-letter state.
	Comm, State string
}

// stat reads /proc/PID/stat; ok is false when it cannot be read (the process is gone, or
// there is no /proc) or does not parse.
func stat(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, false
	}
	s := string(b)
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 3 {
		return Proc{}, false
	}
	p = Proc{Pid: pid, Comm: s[open+1 : end], State: f[0]}
	p.PPid, _ = strconv.Atoi(f[1])
	p.Pgid, _ = strconv.Atoi(f[2])
	return p, true
}

// zombie reports whether a state is a zombie's or a dead process's.
func zombie(state string) bool { return state == "Z" || state == "X" }

// Processes lists the processes that are not zombies, as /proc shows them; it fails the
// test when /proc cannot be read.
func Processes(t testing.TB) []Proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok && !zombie(p.State) { // !ok: gone meanwhile
			out = append(out, p)
		}
	}
	return out
}

// Group returns the processes of the process group pgid that are not zombies.
func Group(t testing.TB, pgid int) []Proc {
	t.Helper()
	var out []Proc
	for _, p := range Processes(t) {
		if p.Pgid == pgid {
			out = append(out, p)
		}
	}
	return out
}

// Alive reports whether process pid exists and is not a zombie. Without /proc it asks the
// kernel (kill -0 on Unix, which counts zombies as alive; see exists).
func Alive(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return exists(pid)
	}
	p, ok := stat(pid)
	return ok && !zombie(p.State)
}

// InotifyInstances counts the inotify instances this process holds open (Linux: the
// descriptors in /proc/self/fd that are anon_inode:inotify); it fails the test when
// /proc/self/fd cannot be read.
func InotifyInstances(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// WaitUntil polls cond until it holds, and fails the test, naming what, when it does not
// within the given time: a bounded wait for what another process or goroutine does, never a
// fixed sleep. The tests' one polling loop (WaitUntilState is the same, saying what it saw).
func WaitUntil(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitUntilState(t, within, what, func() (bool, string) { return cond(), "" })
}

// WaitUntilState is WaitUntil for a condition that also says what it saw (a server's state,
// a process list): the failure quotes the last one. It polls every 2 ms at first, backing
// off to every 20 ms, so that a condition that costs a round trip to a daemon does not keep
// the machine busy.
func WaitUntilState(t testing.TB, within time.Duration, what string, cond func() (ok bool, seen string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := 2 * time.Millisecond
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if seen != "" {
				t.Fatalf("timed out after %v waiting for %s; last seen: %s", within, what, seen)
			}
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(pause) // polls a condition; orders nothing
		pause = min(2*pause, 20*time.Millisecond)
	}
}

//go:build !unix

// This file is the fallback of proc_unix.go where there are no process groups: a Group is
// its leader alone, and KillGroups kills the leaders still running.

package procgroup

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Group is a child process that StartGroup started (see proc_unix.go).
type Group struct {
	cmd *exec.Cmd
}

var (
	// othersMu guards others, the leaders not yet waited for.
	othersMu sync.Mutex
	others   = map[*Group]bool{}
)

// StartGroup starts cmd and registers it for KillGroups. Contract as in proc_unix.go.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd}
	othersMu.Lock()
	others[g] = true
	othersMu.Unlock()
	return g, nil
}

// Pid returns the leader's process id.
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Signal kills the leader: there are no process groups and no other signals here.
func (g *Group) Signal(syscall.Signal) { _ = g.cmd.Process.Kill() }

// Wait waits for the leader and forgets it.
func (g *Group) Wait() error {
	err := g.cmd.Wait()
	othersMu.Lock()
	delete(others, g)
	othersMu.Unlock()
	return err
}

// Status returns the leader's wait status once Wait has returned.
func (g *Group) Status() (syscall.WaitStatus, bool) {
	if g.cmd.ProcessState == nil {
		return syscall.WaitStatus{}, false
	}
	st, ok := g.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return st, ok
}

// KillGroups kills every leader still running and returns how many there were.
func KillGroups(time.Duration) int {
	othersMu.Lock()
	defer othersMu.Unlock()
	for g := range others {
		_ = g.cmd.Process.Kill()
	}
	return len(others)
}

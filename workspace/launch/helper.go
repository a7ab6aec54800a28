// This file keeps a sandbox helper started ahead for a session's next sandboxed command:
// a helper's start (by the session's namespace holder: new mount and PID namespaces, the
// start of pid's binary, its move into a cgroup: several milliseconds, more on a busy
// machine) then happens between calls instead of in one. A helper is good for one command;
// the next is started once a call is done.

package launch

import (
	"fmt"
	"os"

	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/sandbox"
)

// helperProc is a started helper, in a process group of its own, with its output pipe; it
// waits for its policy and command (sandbox.Cmd.SendPolicy).
type helperProc struct {
	cmd    *sandbox.Cmd
	group  *procgroup.Group
	out    *os.File        // the read end of its stdout and stderr
	holder *sandbox.Holder // the holder that started it
}

// startHelper starts a helper of shape sh through the session's holder h.
func startHelper(h *sandbox.Holder, sh sandbox.Shape) (*helperProc, error) {
	cmd, err := h.Prepare(sh)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		cmd.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	group, err := cmd.StartGroup()
	pw.Close() // the helper holds its copy
	if err != nil {
		pr.Close()
		cmd.Close()
		return nil, fmt.Errorf("cannot start the helper: %v", err)
	}
	cmd.Begin()
	return &helperProc{cmd: cmd, group: group, out: pr, holder: h}, nil
}

// discard ends a helper that will run no command, and waits for it.
func (h *helperProc) discard() {
	h.cmd.AbortPolicy()
	h.group.Wait()
	h.out.Close()
	h.cmd.Close()
}

// helperFor returns a started helper of shape sh, started by the holder: the one started
// ahead when it has that shape and holder (and the holder and the kernel still give the
// sandbox), else a new one. Safe for concurrent use.
func (l *Launcher) helperFor(holder *sandbox.Holder, sh sandbox.Shape) (*helperProc, error) {
	l.mu.Lock()
	if l.spare == nil && l.warming != nil {
		// One is on its way, part started: wait for it rather than start another.
		ready := l.warming
		l.mu.Unlock()
		<-ready
		l.mu.Lock()
	}
	h := l.spare
	l.spare = nil
	l.mu.Unlock()
	if h != nil {
		if h.cmd.Shape() == sh && h.holder == holder && holder.Alive() && sandbox.Probe().Available {
			return h, nil
		}
		h.discard()
	}
	return startHelper(holder, sh)
}

// startSpare starts the next call's helper, of shape sh, through the holder, in the
// background, unless one is there or on its way, or the launcher is closed. Called after a
// sandboxed call (a job: once started). Safe for concurrent use.
func (l *Launcher) startSpare(holder *sandbox.Holder, sh sandbox.Shape) {
	l.mu.Lock()
	if l.spare != nil || l.warming != nil || l.closed {
		l.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	l.warming = ready
	l.warmers.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.warmers.Done()
		defer close(ready)
		h, err := startHelper(holder, sh)
		l.mu.Lock()
		l.warming = nil
		if err != nil {
			l.mu.Unlock()
			return // the next call starts its own, and says what fails
		}
		if l.closed || l.spare != nil {
			l.mu.Unlock()
			h.discard()
			return
		}
		l.spare = h
		l.mu.Unlock()
	}()
}

// closeSpare ends the helper started ahead, once any on its way has started, and keeps
// others from starting.
func (l *Launcher) closeSpare() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.warmers.Wait()
	l.mu.Lock()
	h := l.spare
	l.spare = nil
	l.mu.Unlock()
	if h != nil {
		h.discard()
	}
}

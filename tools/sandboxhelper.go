// This file keeps a sandbox helper started ahead for a workspace's next sandboxed bash call:
// a helper's start (by the session's namespace holder: new mount and PID namespaces, the
// start of pid's binary, its move into a cgroup: several milliseconds, more on a busy
// machine) then happens between calls instead of in one. A helper is good for one command;
// the next is started once a call is done.

package tools

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
func (w *Workspace) helperFor(holder *sandbox.Holder, sh sandbox.Shape) (*helperProc, error) {
	w.box.mu.Lock()
	if w.box.spare == nil && w.box.warming != nil {
		// One is on its way, part started: wait for it rather than start another.
		ready := w.box.warming
		w.box.mu.Unlock()
		<-ready
		w.box.mu.Lock()
	}
	h := w.box.spare
	w.box.spare = nil
	w.box.mu.Unlock()
	if h != nil {
		if h.cmd.Shape() == sh && h.holder == holder && holder.Alive() && sandbox.Probe().Available {
			return h, nil
		}
		h.discard()
	}
	return startHelper(holder, sh)
}

// startSpare starts the next call's helper, of shape sh, through the holder, in the
// background, unless one is there or on its way, or the workspace is closed. Called after a
// sandboxed call (a job: once started). Safe for concurrent use.
func (w *Workspace) startSpare(holder *sandbox.Holder, sh sandbox.Shape) {
	w.box.mu.Lock()
	if w.box.spare != nil || w.box.warming != nil || w.box.closed {
		w.box.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	w.box.warming = ready
	w.box.warmers.Add(1)
	w.box.mu.Unlock()
	go func() {
		defer w.box.warmers.Done()
		defer close(ready)
		h, err := startHelper(holder, sh)
		w.box.mu.Lock()
		w.box.warming = nil
		if err != nil {
			w.box.mu.Unlock()
			return // the next call starts its own, and says what fails
		}
		if w.box.closed || w.box.spare != nil {
			w.box.mu.Unlock()
			h.discard()
			return
		}
		w.box.spare = h
		w.box.mu.Unlock()
	}()
}

// closeSpare ends the helper started ahead, once any on its way has started, and keeps
// others from starting.
func (w *Workspace) closeSpare() {
	w.box.mu.Lock()
	w.box.closed = true
	w.box.mu.Unlock()
	w.box.warmers.Wait()
	w.box.mu.Lock()
	h := w.box.spare
	w.box.spare = nil
	w.box.mu.Unlock()
	if h != nil {
		h.discard()
	}
}

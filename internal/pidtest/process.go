// This file starts the pid binary as a child over real pipes and ends it: its environment
// and folders, its stderr, its exit code, signals, and the editor's way of stopping it.

package pidtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Options configure Start.
type Options struct {
	// Args are pid's arguments (e.g. "--acp"; then Conn.Framing should be Lines).
	Args []string
	// Home, when set, is a folder of pid's own: HOME is Home, XDG_CONFIG_HOME Home/config
	// and XDG_STATE_HOME Home/state (created), so that no settings, sessions or audit log
	// of whoever runs it are read or written. When empty pid inherits them.
	Home string
	// Env is added last to pid's environment (the caller's, then Home's): it wins.
	Env []string
	// Stderr, when set, is where pid's stderr goes; else a Buffer of the Process's own
	// (Process.Stderr).
	Stderr io.Writer
	// Conn configures the connection over pid's stdin and stdout.
	Conn ConnOptions
}

// Process is a running pid and the editor's end of its stdio.
type Process struct {
	*Conn
	cmd    *exec.Cmd
	stderr *Buffer  // nil when Options.Stderr was set
	out    *os.File // pid's stdout, our end

	exited chan struct{} // closed once cmd.Wait returned
	code   int           // the exit code (-1 when a signal ended pid), valid after exited

	// inMu guards in.
	inMu sync.Mutex
	in   *os.File // pid's stdin, our end; nil once closed
}

// Start starts bin with opts over real pipes. The caller ends it (Wait after CloseInput or
// an exit notification, Kill, or Stop); until then its goroutines run.
func Start(bin string, opts Options) (*Process, error) {
	env := os.Environ()
	if opts.Home != "" {
		config, state := filepath.Join(opts.Home, "config"), filepath.Join(opts.Home, "state")
		for _, d := range []string{config, state} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		env = append(env, "HOME="+opts.Home, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+state)
	}
	cmd := exec.Command(bin, opts.Args...)
	cmd.Env = append(env, opts.Env...)
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	if opts.Stderr != nil {
		cmd.Stderr = opts.Stderr
	} else {
		p.stderr = &Buffer{}
		cmd.Stderr = p.stderr
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p.in, p.out = inW, outR
	p.Conn = NewConn(inW, outR, opts.Conn)
	go func() {
		<-p.Conn.Done()
		outR.Close()
	}()
	go func() {
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	return p, nil
}

// Pid returns pid's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to pid.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stderr returns what pid wrote on stderr so far ("" when Options.Stderr took it).
func (p *Process) Stderr() string {
	if p.stderr == nil {
		return ""
	}
	return p.stderr.String()
}

// Exited returns a channel closed once pid has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// CloseInput closes pid's stdin, as an editor that quits does. Closing it again does
// nothing.
func (p *Process) CloseInput() error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.in == nil {
		return nil
	}
	err := p.in.Close()
	p.in = nil
	return err
}

// ErrKilled is Wait's error when pid outlived the wait and was killed.
var ErrKilled = errors.New("pid did not exit in time; killed it")

// Wait waits at most within for pid to exit and its output to end, and returns its exit
// code. When pid outlives within it is killed, and the error is ErrKilled (wrapped); when
// its output stays open after it exited (a process it started holds it), the output is
// closed on our side and the error says so.
func (p *Process) Wait(within time.Duration) (int, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		p.Kill()
		return p.code, fmt.Errorf("after %v: %w", within, ErrKilled)
	}
	defer p.CloseInput()
	select {
	case <-p.Conn.Done():
		return p.code, nil
	case <-timer.C:
		p.out.Close()
		<-p.Conn.Done()
		return p.code, fmt.Errorf("pid exited, but its output was still open %v after it started to wait", within)
	}
}

// Kill ends pid with SIGKILL and waits for it and its output to end (for at most the hang
// guard after it exited: then the output is closed on our side).
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
	timer := time.NewTimer(p.HangGuard())
	defer timer.Stop()
	select {
	case <-p.Conn.Done():
	case <-timer.C:
		p.out.Close()
		<-p.Conn.Done()
	}
	p.CloseInput()
}

// Stop ends pid as an editor does: shutdown, exit, stdin closed, then Wait within. The
// error is the first thing that went wrong; pid has ended either way.
func (p *Process) Stop(within time.Duration) (int, error) {
	var first error
	if _, err := p.Call("shutdown", nil); err != nil {
		first = err
	}
	if err := p.Notify("exit", Omit); err != nil && first == nil {
		first = err
	}
	p.CloseInput()
	code, err := p.Wait(within)
	if first == nil {
		first = err
	}
	return code, first
}

// Buffer is a bytes.Buffer safe for concurrent use: where a daemon's stderr or log goes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// This file runs a stdio server's process: started through procgroup.StartGroup (its own
// process group, the parent-death signal, the watchdog), with pipes pid owns, the tail of
// its stderr kept for error messages, and the stop sequence (stdin closed, SIGTERM, SIGKILL).
//
// Why not the SDK's CommandTransport: it calls cmd.Start itself, so the server would get
// neither the process group nor the parent-death signal nor a place in the registry that
// the watchdog and procgroup.KillGroups read, and a pid killed with SIGKILL would leave it
// running. The process is started here and its stdin and stdout are handed to the SDK's
// IOTransport, which speaks the protocol on them: no wire code is written here.

package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/procgroup"
)

// stderrKeep is how many bytes of a server's stderr are kept; stderrShow is how many of
// them an error message shows (the last lines that fit).
const (
	stderrKeep = 8 << 10
	stderrShow = 2 << 10
)

// stderrDrain bounds the wait for the end of a server's stderr once its process has
// exited (a process that escaped the group may hold the pipe open).
const stderrDrain = time.Second

// process is a running stdio server.
type process struct {
	name  string
	group *procgroup.Group
	stdin *os.File // pid's write end of the server's stdin
	// stdout is pid's read end of the server's stdout, read by the SDK's IOTransport.
	stdout *os.File

	closeStdin sync.Once
	stopOnce   sync.Once

	// exited is closed once the leader has been waited for, the rest of its group
	// killed and stderr read to its end (or given up on).
	exited chan struct{}

	// mu guards the fields below it.
	mu      sync.Mutex
	tail    []byte // the last stderrKeep bytes of stderr
	stopped bool   // pid asked the process to stop (its exit is not a crash)
	exitErr error  // the leader's Wait error, once it has exited
}

// startProcess starts cfg's command (cfg already expanded) with its stdin and stdout on
// pipes and its stderr read into the tail. onExit is called once, from the process's own
// goroutine, after the process has exited (and before exited is closed), with whether pid
// had asked it to stop.
func startProcess(name string, cfg ServerConfig, log *slog.Logger, onExit func(p *process, stopped bool)) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Cwd
	if len(cfg.Env) > 0 {
		env := os.Environ()
		for k, v := range cfg.Env {
			env = append(env, k+"="+v)
		}
		cmd.Env = env // later entries win
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
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	g, err := procgroup.StartGroup(cmd)
	// The child has its own copies of these ends now (or never will).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, startError(cfg, err)
	}
	p := &process{name: name, group: g, stdin: inW, stdout: outR, exited: make(chan struct{})}
	stderrDone := make(chan struct{})
	go p.readStderr(errR, log, stderrDone)
	go p.wait(errR, stderrDone, onExit)
	return p, nil
}

// startError says why a command could not start, and what to do.
func startError(cfg ServerConfig, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("cannot run %q: it is not on pid's PATH (%s); install it or give its full path in command", cfg.Command, os.Getenv("PATH"))
	case errors.Is(err, os.ErrNotExist) && cfg.Cwd != "":
		return fmt.Errorf("cannot run %q in %q: %v; check command and cwd", cfg.Command, cfg.Cwd, err)
	default:
		return fmt.Errorf("cannot run %q: %v", cfg.Command, err)
	}
}

// readStderr keeps the tail of stderr and logs each line at debug level.
func (p *process) readStderr(r *os.File, log *slog.Logger, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	var line []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.tail = append(p.tail, buf[:n]...)
			if over := len(p.tail) - stderrKeep; over > 0 {
				p.tail = append(p.tail[:0], p.tail[over:]...)
			}
			p.mu.Unlock()
			if log.Enabled(context.Background(), slog.LevelDebug) {
				line = append(line, buf[:n]...)
				for {
					i := bytes.IndexByte(line, '\n')
					if i < 0 {
						break
					}
					log.Debug("mcp server stderr", "server", p.name, "line", string(line[:i]))
					line = line[i+1:]
				}
				if len(line) > stderrKeep {
					log.Debug("mcp server stderr", "server", p.name, "line", string(line))
					line = line[:0]
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// wait is the process's goroutine: it waits for the leader, ends what it left in its
// group, lets stderr drain, and reports the exit.
func (p *process) wait(stderr *os.File, stderrDone <-chan struct{}, onExit func(*process, bool)) {
	err := p.group.Wait()
	// The server is gone: whatever it left in its group would be an orphan.
	p.group.Signal(syscall.SIGKILL)
	t := time.NewTimer(stderrDrain)
	select {
	case <-stderrDone:
	case <-t.C:
	}
	t.Stop()
	stderr.Close() // unblocks the reader if something outside the group holds the pipe
	<-stderrDone
	p.mu.Lock()
	p.exitErr = err
	stopped := p.stopped
	p.mu.Unlock()
	if onExit != nil {
		onExit(p, stopped)
	}
	close(p.exited)
}

// stderrTail returns the last lines of stderr that fit in stderrShow bytes, trimmed.
func (p *process) stderrTail() string {
	p.mu.Lock()
	b := p.tail
	if len(b) > stderrShow {
		b = b[len(b)-stderrShow:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	s := string(b)
	p.mu.Unlock()
	return strings.TrimSpace(s)
}

// exitText describes how the process ended ("exit status 3", "signal: killed"), once
// exited is closed.
func (p *process) exitText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exitErr == nil {
		return "exit status 0"
	}
	return p.exitErr.Error()
}

// closeInput closes the server's stdin, which asks a stdio server to exit.
func (p *process) closeInput() {
	p.closeStdin.Do(func() { p.stdin.Close() })
}

// stop ends the process the way the MCP specification asks of a client: stdin closed,
// then SIGTERM to its group if it has not exited after grace, then SIGKILL after another
// grace. It returns once the process has exited and its goroutine is done.
//
// Contract: safe to call concurrently and more than once; every call waits for the end.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		p.closeInput()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
		p.group.Signal(syscall.SIGTERM)
		t.Reset(grace)
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
		p.group.Signal(syscall.SIGKILL)
	})
	<-p.exited
}

// sdkReader is the server's stdout as the SDK's IOTransport reads it. Its Close does
// nothing: the SDK closes the connection by closing stdin (sdkWriter), and pid closes
// stdout itself once the SDK is done with it (closeOutput).
type sdkReader struct{ f *os.File }

func (r sdkReader) Read(b []byte) (int, error) { return r.f.Read(b) }
func (sdkReader) Close() error                 { return nil }

// sdkWriter is the server's stdin as the SDK writes it; its Close closes stdin, which asks
// the server to exit (the rest of the stop sequence is process.stop's).
type sdkWriter struct{ p *process }

func (w sdkWriter) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w sdkWriter) Close() error                { w.p.closeInput(); return nil }

// closeOutput closes pid's end of stdout, which ends the SDK's reading goroutine if
// something still holds the pipe. Called once the SDK's session is closed.
func (p *process) closeOutput() { p.stdout.Close() }

var _ io.ReadCloser = sdkReader{}
var _ io.WriteCloser = sdkWriter{}

// Package launch starts a session's shell commands (bash's, its background jobs', and the
// command lines the editor's terminals run) in pid's kernel sandbox (package sandbox:
// namespaces, Landlock, seccomp), through the session's namespace holders and a helper
// (`pid sandbox-exec`) started ahead for the next command; or, when the settings turn the
// sandbox off or the call escalates, as pid's own children. It keeps what a session's
// sandbox needs (its settings, its temporary folder, its holders, the allowlist network's
// proxy), the environment commands get (no model keys, no secrets), the check after each
// command that puts the protected paths back, and the words of the results (the note
// after a refusal, the refusal when the kernel cannot give the sandbox).
//
// The entry point is New, on the session's workspace.Workspace; Launcher.Start starts a
// command and Launcher.TerminalCommand makes an editor terminal's command line. What runs
// the command's output and exit (bash's tail, the jobs' ring) is package tools'.
//
// This file holds the Launcher, its settings and Start.
package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/workspace"
)

// Config is how a session's commands are contained.
type Config struct {
	// Settings are the session's resolved sandbox settings (sandbox.Resolve).
	Settings sandbox.Resolved
	// DropEnv names environment variables no command sees, besides ANTHROPIC_API_KEY and
	// OPENAI_API_KEY (which are always left out): the model's apiKeyEnv.
	DropEnv []string
	// Asker, Resolver and Logf are the allowlist proxy's (network.go; netproxy.Config):
	// who decides about hosts the allow-list does not know (nil refuses them), who resolves
	// names (nil: the system), where its log lines go (nil: nowhere).
	Asker    netproxy.Asker
	Resolver netproxy.Resolver
	Logf     func(format string, args ...any)
}

// alwaysDropped are the variables holding model keys, never in a command's environment.
var alwaysDropped = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// Launcher starts one session's commands in its workspace (the cwd they run in, the
// folders a workspace-write sandbox lets them write). It is safe for concurrent use: each
// command gets its own helper. Close it when the session ends.
type Launcher struct {
	ws            *workspace.Workspace
	forceReadOnly atomic.Bool
	guard         sandbox.Guard // the protected paths, before and after each command

	// warmers counts the goroutines starting a spare helper (helper.go).
	warmers sync.WaitGroup

	// holdMu is held while a holder starts (one at a time, outside mu).
	holdMu sync.Mutex

	// mu guards the fields below it.
	mu      sync.Mutex
	cfg     *Config       // nil: the default (workspace-write, network off)
	tmp     string        // the session's temporary folder, made at the first command
	spare   *helperProc   // a helper started ahead for the next command
	warming chan struct{} // closed once the spare helper being started is there (nil: none)
	closed  bool          // the launcher is closed: no more spare helpers nor holders
	// holders are the session's namespace holders, by whether they give the host's network
	// (sandbox.network true) or one of the session's own (loopback only); each made at the
	// first command that needs it.
	holders map[bool]*sandbox.Holder
	// net is the allowlist network's proxy (network.go), with its own lock.
	net netBox
}

// New returns the launcher of the session whose workspace is ws. It starts nothing: the
// session's holders, temporary folder and proxy are made at the first command that needs
// them. Contract: called once per session by whoever builds its tools; the caller must
// Close it (before closing ws).
func New(ws *workspace.Workspace) *Launcher { return &Launcher{ws: ws} }

// Configure sets how the session's commands are contained. Without it they run in the
// default sandbox (workspace-write, network off).
//
// Contract: called at most once, before the session's first command.
func (l *Launcher) Configure(c Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = &c
}

// ForceReadOnly makes the session's commands run in a read-only sandbox (on), whatever the
// settings say, or lifts that (off): a mode that must not change files (plan) sets it.
// Safe for concurrent use; it applies from the next command on.
func (l *Launcher) ForceReadOnly(on bool) { l.forceReadOnly.Store(on) }

// Sandboxed reports whether a command would run contained by the kernel: the settings do
// not turn the sandbox off (or a read-only sandbox is forced), the kernel can give it, and
// the call does not ask to run unsandboxed. A mode that lets sandboxed commands run
// without asking calls it. Safe for concurrent use.
func (l *Launcher) Sandboxed(unsandboxed bool) bool {
	if unsandboxed {
		return false
	}
	if l.settings().Mode == sandbox.ModeOff {
		return false
	}
	return sandbox.Probe().Available
}

// settings returns the settings in force for the next command.
func (l *Launcher) settings() sandbox.Resolved {
	l.mu.Lock()
	r := sandbox.Default()
	if l.cfg != nil {
		r = l.cfg.Settings
	}
	l.mu.Unlock()
	if l.forceReadOnly.Load() {
		r.Mode = sandbox.ModeReadOnly
		r.Network = false
	}
	return r
}

// Close ends the spare helper and the session's holders (every sandboxed process of the
// session with them, and its network), the proxy, and removes the session's temporary
// folder. A command started afterwards fails. Contract: called once by the session owner
// when the session ends, after its jobs are ended; safe to call again.
func (l *Launcher) Close() {
	l.closeSpare()
	l.guard.Close()
	l.holdMu.Lock() // no holder is being started
	l.mu.Lock()
	holders := l.holders
	l.holders = nil
	l.mu.Unlock()
	l.holdMu.Unlock()
	for _, h := range holders {
		h.Close()
	}
	l.closeProxy()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tmp != "" {
		sandbox.RemoveTemp(l.tmp)
		l.tmp = ""
	}
}

// Caller is who runs a command: the tool call's ID (a job's id for a job), the shell
// Command, and whether it is a background Job (its Python output then unbuffered, so that
// a wait for a line sees it when it is printed).
type Caller struct {
	ID, Command string
	Job         bool
}

// Process is a command started among pid's children: its process group (whose leader is
// the shell, or the sandbox's helper that runs it), the read end of its output (stdout
// and stderr together), and how it is contained.
type Process struct {
	Group *procgroup.Group
	Out   *os.File
	// Sandbox is the command's sandbox, nil when it runs unsandboxed.
	Sandbox *Sandboxed
	// Details say how it is contained; a sandboxed command's are its Sandbox's, which the
	// check after it fills (read them through Sandbox.Details while it may run).
	Details *Details
	Began   time.Time
}

// Start starts the shell command (shell -c command) in the session's cwd: outside the
// sandbox when the call escalates (unsandboxed) or the settings turn it off, else in the
// sandbox, through the session's holder. It returns once the command runs (sandboxed:
// once the helper has set the sandbox up), or an error for the model: the refusal when
// the sandbox cannot be given (nothing ran), or ctx's error when the call was aborted
// meanwhile (the helper is killed). The caller waits for Group, reads and closes Out, and
// for a sandboxed command calls Sandbox's Finish, CheckAfter, ProxyRefusals and Spare
// (see Sandboxed). Safe for concurrent use.
func (l *Launcher) Start(ctx context.Context, shell, command string, unsandboxed bool, who Caller) (*Process, error) {
	began := time.Now()
	r := l.settings()
	if unsandboxed || r.Mode == sandbox.ModeOff {
		return l.startPlain(shell, command, unsandboxed, who, began)
	}
	sb, err := l.prepare(r, []string{shell, "-c", command}, who)
	if err != nil {
		return nil, err
	}
	// The helper is started already: it waits for its policy and command.
	group, pr := sb.proc.group, sb.proc.out
	fail := func(err error) (*Process, error) {
		group.Wait()
		pr.Close()
		sb.cmd.Close()
		sb.spare()
		return nil, err
	}
	// The policy is made (a look at the protected paths) while the helper starts, if it
	// was not started ahead. Without one it runs nothing and exits.
	if err := sb.sendPolicy(); err != nil {
		return fail(err)
	}
	// Nothing runs until the helper has set the sandbox up; if it could not, it exits. An
	// abort meanwhile kills it (which ends Started's wait).
	started := make(chan error, 1)
	go func() { started <- sb.cmd.Started() }()
	select {
	case err = <-started:
	case <-ctx.Done():
		group.Signal(syscall.SIGKILL)
		<-started
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		return fail(failure(err))
	}
	return &Process{Group: group, Out: pr, Sandbox: sb, Details: &sb.details, Began: began}, nil
}

// startPlain starts the command unsandboxed, with pid's environment less the model keys.
func (l *Launcher) startPlain(shell, command string, unsandboxed bool, who Caller, began time.Time) (*Process, error) {
	cmd := exec.Command(shell, "-c", command)
	set := []string(nil)
	if who.Job {
		set = append(set, "PYTHONUNBUFFERED=1")
	}
	cmd.Env = l.commandEnv(set, false)
	cmd.Dir = l.ws.Cwd()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	group, err := procgroup.StartGroup(cmd)
	pw.Close() // the children hold their copies
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("cannot start %s: %v", cmd.Path, err)
	}
	return &Process{Group: group, Out: pr, Details: &Details{Mode: sandbox.ModeOff, Network: true, Escalated: unsandboxed}, Began: began}, nil
}

// This file prepares a sandboxed command: the session's temporary folder and namespace
// holders, the command's environment (the model's key and secret-looking variables left
// out), its policy (made while its helper starts) and its Sandboxed handle.

package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/sandbox"
)

// Sandboxed is a command prepared to run in the sandbox. The caller of Start (or
// TerminalCommand) calls, once the command has ended and been waited for: Finish (how the
// helper says it ended), CheckAfter (the protected paths put back), ProxyRefusals (the
// hosts refused) and Note (what the sandbox may have refused); and Spare once its helper
// is no longer needed. Details may be read at any time, from any goroutine.
type Sandboxed struct {
	cmd  *sandbox.Cmd
	proc *helperProc // the started helper: its process group and output (nil for a terminal's)
	// mu guards details, which a job's reads copy while its end fills them.
	mu      sync.Mutex
	details Details
	// spare starts the next command's helper; called once this one is done.
	spare func()
	guard *sandbox.Guard
	// command is the shell command, and dir the folder it runs in, for the note after a
	// refusal.
	command, dir string
	// client is the command's Client of the session's proxy (nil without one): its
	// refusals are the command's (network.go).
	client *netproxy.Client
	// build makes the command's policy, the guard's look at the protected paths included;
	// sendPolicy runs it while the helper starts.
	build func() (sandbox.Policy, *sandbox.Watched, error)
	// pol is the policy sent, before the protected paths' state before the command (nil in
	// read-only mode).
	pol    sandbox.Policy
	before *sandbox.Watched
}

// Spare starts the next command's helper ahead, in the background (a job calls it once
// started: its own helper is the job's for its life). Safe to call more than once; it
// never blocks on the helper's start.
func (s *Sandboxed) Spare() { s.spare() }

// Finish releases the helper's report pipe and returns the signal that ended the command,
// when one did (the helper, as the init of the command's PID namespace, exits with 128+N
// when signal N ended the command, and says so on it). Contract: called once, after the
// command's group has been waited for; not for a terminal's command.
func (s *Sandboxed) Finish() (syscall.Signal, bool) { return s.cmd.Finish() }

// Abandon ends the command's token with the session's proxy, for a command that will
// never run (the editor could not create its terminal). Safe to call more than once.
func (s *Sandboxed) Abandon() {
	if s.client != nil {
		s.client.Close()
	}
}

// Details returns the command's details as they are now, in a copy the caller may keep.
// Safe for concurrent use with the check after the command.
func (s *Sandboxed) Details() Details {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.details
	d.Reverted = slices.Clone(d.Reverted)
	return d
}

// sweepOnce removes, once per process, the temporary folders of daemons that are gone.
var sweepOnce sync.Once

// sandboxTmp returns the session's temporary folder, making it at the first call.
func (l *Launcher) sandboxTmp() (string, error) {
	sweepOnce.Do(func() { sandbox.SweepStaleTemp(os.TempDir()) })
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tmp == "" {
		d, err := sandbox.MakeTemp()
		if err != nil {
			return "", err
		}
		l.tmp = d
	}
	return l.tmp, nil
}

// holderFor returns the session's namespace holder for commands whose network is the
// host's (network true) or the session's own, starting it at the first command that needs
// it, or again when the one there has died (its commands died with it). Safe for
// concurrent use.
func (l *Launcher) holderFor(network bool) (*sandbox.Holder, error) {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	l.mu.Lock()
	h, closed := l.holders[network], l.closed
	l.mu.Unlock()
	if closed {
		return nil, errors.New("the session is closed")
	}
	if h != nil && h.Alive() {
		return h, nil
	}
	if h != nil {
		h.Close()
	}
	h, err := sandbox.StartHolder(sandbox.HolderConfig{Network: network, Proxy: l.wantsProxy(network)})
	if err != nil {
		return nil, err
	}
	if err := l.serveProxy(h); err != nil {
		h.Close()
		return nil, fmt.Errorf("the network proxy: %v", err)
	}
	l.mu.Lock()
	if l.holders == nil {
		l.holders = map[bool]*sandbox.Holder{}
	}
	l.holders[network] = h
	l.mu.Unlock()
	return h, nil
}

// commandEnv returns pid's environment without the model keys, with TMPDIR and the caches
// set from set (variable=value entries replacing pid's own). For a sandboxed command
// (sandboxed true), the variables that look like secrets (sandbox.SecretEnv) are left out
// too, but for those the user lets through (sandbox.env.allow).
func (l *Launcher) commandEnv(set []string, sandboxed bool) []string {
	drop := l.droppedEnv()
	l.mu.Lock()
	var allow []string
	if l.cfg != nil {
		allow = l.cfg.Settings.EnvAllow
	}
	l.mu.Unlock()
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		drop = append(drop, name)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, name) {
			continue
		}
		if sandboxed && sandbox.SecretEnv(name) && !slices.Contains(allow, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, set...)
}

// droppedEnv returns the variables no command gets: the model keys, and those the proxy
// injects into requests.
func (l *Launcher) droppedEnv() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop := slices.Clone(alwaysDropped)
	if l.cfg != nil {
		drop = append(drop, l.cfg.DropEnv...)
		drop = append(drop, injectedEnv(l.cfg.Settings.Net)...)
	}
	return drop
}

// prepare returns the command that runs argv in the sandbox the settings r ask for (not
// off), its helper started through the session's holder (ahead, when one was), or a
// failure saying what is missing and which setting to change. Its policy is made by
// sendPolicy, while the helper starts.
func (l *Launcher) prepare(r sandbox.Resolved, argv []string, who Caller) (*Sandboxed, error) {
	s, holder, env, err := l.plan(r, argv, who)
	if err != nil {
		return nil, err
	}
	shape := sandbox.Shape{Network: r.Network, Processes: r.Processes}
	h, err := l.helperFor(holder, shape)
	if err != nil {
		s.Abandon()
		return nil, failure(err)
	}
	cmd := h.cmd
	cmd.Retarget(argv, l.ws.Cwd(), env)
	s.cmd, s.proc = cmd, h
	s.details.LoopbackCut = cmd.NetworkCut == "seccomp"
	s.details.Limits.ProcessesBy, s.details.Limits.PidNamespace = cmd.ProcessesBy, cmd.PidNS
	s.spare = func() { l.startSpare(holder, shape) }
	return s, nil
}

// plan makes all a sandboxed command needs but its helper: the session's holder (started
// at the first command), the command's environment (its temporary folder, the caches, the
// proxy's variables) and how its policy is made (build). The command's spare is a no-op
// until prepare sets it. It fails as prepare does.
func (l *Launcher) plan(r sandbox.Resolved, argv []string, who Caller) (*Sandboxed, *sandbox.Holder, []string, error) {
	tmp, err := l.sandboxTmp()
	if err != nil {
		return nil, nil, nil, failure(fmt.Errorf("cannot make its temporary folder: %v", err))
	}
	p := sandbox.Places{Roots: l.ws.Roots(), Cwd: l.ws.CwdReal(), Tmp: tmp}
	if r.Mode == sandbox.ModeReadOnly {
		p.Cache = filepath.Join(tmp, "cache")
	} else if p.Cache, err = cacheDir(); err != nil {
		return nil, nil, nil, failure(err)
	}
	holder, err := l.holderFor(r.Network)
	if err != nil {
		return nil, nil, nil, failure(err)
	}
	set := append([]string{"TMPDIR=" + tmp}, sandbox.CacheEnv(p.Cache)...)
	if who.Job {
		set = append(set, "PYTHONUNBUFFERED=1")
	}
	var client *netproxy.Client
	if !r.Network {
		var proxyEnv []string
		client, proxyEnv = l.proxyClient(who.ID, who.Command)
		set = append(set, proxyEnv...)
	}
	env := l.commandEnv(set, true)
	det := Details{Mode: r.Mode, Network: r.Network, Proxy: client != nil,
		Limits: &Limits{MemoryMB: r.MemoryMB, Processes: r.Processes, MemoryBy: "rlimit"}}
	s := &Sandboxed{guard: &l.guard, details: det, command: who.Command, dir: l.ws.Cwd(), client: client, spare: func() {}}
	s.build = func() (sandbox.Policy, *sandbox.Watched, error) {
		p.Home, _ = os.UserHomeDir()
		p.ConfigDir, _ = xdg.ConfigDir()
		p.StateDir, _ = xdg.StateDir()
		p.Sockets = sandbox.SessionSockets(os.Getenv)
		p.Path = append(filepath.SplitList(os.Getenv("PATH")), filepath.Dir(argv[0]))
		roots, err := sandbox.WritableRoots(r, p.Roots)
		if err != nil {
			return sandbox.Policy{}, nil, err
		}
		if len(roots) > 0 {
			p.Watched = l.guard.Observe(roots, append([]string{tmp, p.Cache}, roots...), p.Home)
		}
		pol, err := sandbox.Build(r, p)
		return pol, p.Watched, err
	}
	return s, holder, env, nil
}

// sendPolicy makes the command's policy and gives it to the helper, which has been started
// and waits for it; when the policy cannot be made, the helper gets none and runs nothing,
// and the error is the refusal to return.
func (s *Sandboxed) sendPolicy() error {
	pol, watched, err := s.build()
	if err != nil {
		s.cmd.AbortPolicy()
		return failure(err)
	}
	s.pol, s.before = pol, watched
	if err := s.cmd.SendPolicy(pol); err != nil {
		return failure(fmt.Errorf("cannot give the helper its policy: %v", err))
	}
	return nil
}

// cacheDir returns $XDG_CACHE_HOME/pid/sandbox (~/.cache/pid/sandbox).
func cacheDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pid", "sandbox"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no cache folder (set XDG_CACHE_HOME or HOME)")
	}
	return filepath.Join(home, ".cache", "pid", "sandbox"), nil
}

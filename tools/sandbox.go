// This file holds how a workspace's bash commands are contained (the sandbox package does
// the containing): the session's sandbox settings, its temporary folder, its namespace
// holders (one network for all its commands), the environment a command gets (the model's key and secret-looking variables left out), the check after each
// command that puts the protected paths back, and the words of the results (the note after
// a refusal, the refusal when the kernel cannot give the sandbox).

package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/protected"
	"github.com/pid-agent/pid/sandbox"
)

// SandboxConfig is how a session's bash commands are contained.
type SandboxConfig struct {
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

// SandboxDetails is bash's details.sandbox: how the command was contained.
type SandboxDetails struct {
	// Mode is "workspace-write", "read-only" or "off" (an unsandboxed call: Escalated).
	Mode string `json:"mode"`
	// Network says the command could reach the network directly (the host's network).
	Network bool `json:"network"`
	// Proxy says the command's only way out was pid's proxy (the allowlist network).
	Proxy bool `json:"proxy,omitempty"`
	// RefusedHosts are the destinations the proxy refused to the command's connections.
	RefusedHosts []netproxy.Refusal `json:"refusedHosts,omitempty"`
	// LoopbackCut says the network was cut without a network namespace (none could be
	// made), with Landlock's TCP rules and a seccomp filter, which cut the sandbox's own
	// loopback too.
	LoopbackCut bool `json:"loopbackCut,omitempty"`
	// Escalated says the model asked for this call to run unsandboxed, and it was allowed.
	Escalated bool `json:"escalated,omitempty"`
	// Limits are the command's limits, and how they were applied.
	Limits *SandboxLimits `json:"limits,omitempty"`
	// Reverted are the protected paths (absolute) the command created or changed, which
	// the check after it removed or put back (or could not: the text says which).
	Reverted []string `json:"reverted,omitempty"`
}

// SandboxLimits is details.sandbox.limits.
type SandboxLimits struct {
	MemoryMB  int `json:"memoryMB"`
	Processes int `json:"processes"`
	// MemoryBy says what caps the memory: "rlimit" (RLIMIT_DATA, for each process).
	MemoryBy string `json:"memoryBy"`
	// ProcessesBy says what caps the processes and threads: "cgroup v2" or "cgroup v1"
	// (the pids controller), "rlimit" (RLIMIT_NPROC), or "none" (pid runs as root, whom
	// RLIMIT_NPROC does not hold, and could make no cgroup).
	ProcessesBy string `json:"processesBy"`
	// PidNamespace says nothing the command started outlives it.
	PidNamespace bool `json:"pidNamespace"`
}

// box is a workspace's sandbox state.
type box struct {
	forceReadOnly atomic.Bool
	guard         sandbox.Guard // the protected paths, before and after each command

	// warmers counts the goroutines starting a spare helper (sandboxhelper.go).
	warmers sync.WaitGroup

	// holdMu is held while a holder starts (one at a time, outside mu).
	holdMu sync.Mutex

	// mu guards the fields below it.
	mu      sync.Mutex
	cfg     *SandboxConfig // nil: the default (workspace-write, network off)
	tmp     string         // the session's temporary folder, made at the first command
	spare   *helperProc    // a helper started ahead for the next command
	warming chan struct{}  // closed once the spare helper being started is there (nil: none)
	closed  bool           // the workspace is closed: no more spare helpers nor holders
	// holders are the session's namespace holders, by whether they give the host's network
	// (sandbox.network true) or one of the session's own (loopback only); each made at the
	// first command that needs it.
	holders map[bool]*sandbox.Holder
	// net is the allowlist network's proxy (network.go), with its own lock.
	net netBox
}

// UseSandbox sets how the workspace's bash commands are contained. Without it they run in
// the default sandbox (workspace-write, network off).
//
// Contract: called at most once, before the session's first tool call.
func (w *Workspace) UseSandbox(c SandboxConfig) {
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	w.box.cfg = &c
}

// ForceReadOnlySandbox makes the workspace's bash commands run in a read-only sandbox (on),
// whatever the settings say, or lifts that (off): a mode that must not change files (plan)
// sets it. Safe for concurrent use; it applies from the next command on.
func (w *Workspace) ForceReadOnlySandbox(on bool) { w.box.forceReadOnly.Store(on) }

// BashSandboxed reports whether a bash call would run contained by the kernel: the settings
// do not turn the sandbox off (or a read-only sandbox is forced), the kernel can give it,
// and the call does not ask to run unsandboxed (unsandboxed is the value of its
// "unsandboxed" argument). A mode that lets sandboxed commands run without asking calls it.
// Safe for concurrent use.
func (w *Workspace) BashSandboxed(unsandboxed bool) bool {
	if unsandboxed {
		return false
	}
	if w.sandboxSettings().Mode == sandbox.ModeOff {
		return false
	}
	return sandbox.Probe().Available
}

// sandboxSettings returns the settings in force for the next command.
func (w *Workspace) sandboxSettings() sandbox.Resolved {
	w.box.mu.Lock()
	r := sandbox.Default()
	if w.box.cfg != nil {
		r = w.box.cfg.Settings
	}
	w.box.mu.Unlock()
	if w.box.forceReadOnly.Load() {
		r.Mode = sandbox.ModeReadOnly
		r.Network = false
	}
	return r
}

// sweepOnce removes, once per process, the temporary folders of daemons that are gone.
var sweepOnce sync.Once

// sandboxTmp returns the session's temporary folder, making it at the first call.
func (w *Workspace) sandboxTmp() (string, error) {
	sweepOnce.Do(func() { sandbox.SweepStaleTemp(os.TempDir()) })
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	if w.box.tmp == "" {
		d, err := sandbox.MakeTemp()
		if err != nil {
			return "", err
		}
		w.box.tmp = d
	}
	return w.box.tmp, nil
}

// closeBox ends the spare helper and the session's holders (every sandboxed process of the
// session with them, and its network), and removes the session's temporary folder.
func (w *Workspace) closeBox() {
	w.closeSpare()
	w.box.guard.Close()
	w.box.holdMu.Lock() // no holder is being started
	w.box.mu.Lock()
	holders := w.box.holders
	w.box.holders = nil
	w.box.mu.Unlock()
	w.box.holdMu.Unlock()
	for _, h := range holders {
		h.Close()
	}
	w.closeProxy()
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	if w.box.tmp != "" {
		sandbox.RemoveTemp(w.box.tmp)
		w.box.tmp = ""
	}
}

// holderFor returns the session's namespace holder for commands whose network is the
// host's (network true) or the session's own, starting it at the first command that needs
// it, or again when the one there has died (its commands died with it). Safe for
// concurrent use.
func (w *Workspace) holderFor(network bool) (*sandbox.Holder, error) {
	w.box.holdMu.Lock()
	defer w.box.holdMu.Unlock()
	w.box.mu.Lock()
	h, closed := w.box.holders[network], w.box.closed
	w.box.mu.Unlock()
	if closed {
		return nil, errors.New("the session is closed")
	}
	if h != nil && h.Alive() {
		return h, nil
	}
	if h != nil {
		h.Close()
	}
	h, err := sandbox.StartHolder(sandbox.HolderConfig{Network: network, Proxy: w.wantsProxy(network)})
	if err != nil {
		return nil, err
	}
	if err := w.serveProxy(h); err != nil {
		h.Close()
		return nil, fmt.Errorf("the network proxy: %v", err)
	}
	w.box.mu.Lock()
	if w.box.holders == nil {
		w.box.holders = map[bool]*sandbox.Holder{}
	}
	w.box.holders[network] = h
	w.box.mu.Unlock()
	return h, nil
}

// commandEnv returns pid's environment without the model keys, with TMPDIR and the caches
// set from set (variable=value entries replacing pid's own). For a sandboxed command
// (sandboxed true), the variables that look like secrets (sandbox.SecretEnv) are left out
// too, but for those the user lets through (sandbox.env.allow).
func (w *Workspace) commandEnv(set []string, sandboxed bool) []string {
	drop := w.droppedEnv()
	w.box.mu.Lock()
	var allow []string
	if w.box.cfg != nil {
		allow = w.box.cfg.Settings.EnvAllow
	}
	w.box.mu.Unlock()
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
func (w *Workspace) droppedEnv() []string {
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	drop := slices.Clone(alwaysDropped)
	if w.box.cfg != nil {
		drop = append(drop, w.box.cfg.DropEnv...)
		drop = append(drop, injectedEnv(w.box.cfg.Settings.Net)...)
	}
	return drop
}

// sandboxed is a command prepared to run in the sandbox.
type sandboxed struct {
	cmd  *sandbox.Cmd
	proc *helperProc // the started helper: its process group and output
	// mu guards details, which a job's reads copy while its end fills them.
	mu      sync.Mutex
	details SandboxDetails
	// spare starts the next command's helper; called once this one is done.
	spare func()
	guard *sandbox.Guard
	// command is the shell command, and dir the folder it runs in, for the note after a
	// refusal.
	command, dir string
	// client is the command's Client of the workspace's proxy (nil without one): its
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

// caller is who runs a command: the tool call's id (a job's id for a job), the shell
// command, and whether it is a background job.
type caller struct {
	id, command string
	// job says the command is a background job (its Python output unbuffered, so that
	// waitFor sees a line when it is printed).
	job bool
}

// prepareSandboxed returns the command that runs argv in the sandbox the settings r ask for
// (not off), its helper started through the session's holder (ahead, when one was), or a
// failure saying what is missing and which setting to change. Its policy is made by
// sendPolicy, while the helper starts.
func (w *Workspace) prepareSandboxed(r sandbox.Resolved, argv []string, who caller) (*sandboxed, error) {
	s, holder, env, err := w.planSandboxed(r, argv, who)
	if err != nil {
		return nil, err
	}
	shape := sandbox.Shape{Network: r.Network, Processes: r.Processes}
	h, err := w.helperFor(holder, shape)
	if err != nil {
		if s.client != nil {
			s.client.Close()
		}
		return nil, sandboxFailure(err)
	}
	cmd := h.cmd
	cmd.Retarget(argv, w.Cwd(), env)
	s.cmd, s.proc = cmd, h
	s.details.LoopbackCut = cmd.NetworkCut == "seccomp"
	s.details.Limits.ProcessesBy, s.details.Limits.PidNamespace = cmd.ProcessesBy, cmd.PidNS
	s.spare = func() { w.startSpare(holder, shape) }
	return s, nil
}

// planSandboxed makes all a sandboxed command needs but its helper: the session's holder
// (started at the first command), the command's environment (its temporary folder, the
// caches, the proxy's variables) and how its policy is made (build). The command's spare
// is a no-op until prepareSandboxed sets it. It fails as prepareSandboxed does.
func (w *Workspace) planSandboxed(r sandbox.Resolved, argv []string, who caller) (*sandboxed, *sandbox.Holder, []string, error) {
	tmp, err := w.sandboxTmp()
	if err != nil {
		return nil, nil, nil, sandboxFailure(fmt.Errorf("cannot make its temporary folder: %v", err))
	}
	p := sandbox.Places{Roots: w.Roots(), Cwd: w.CwdReal(), Tmp: tmp}
	if r.Mode == sandbox.ModeReadOnly {
		p.Cache = filepath.Join(tmp, "cache")
	} else if p.Cache, err = cacheDir(); err != nil {
		return nil, nil, nil, sandboxFailure(err)
	}
	holder, err := w.holderFor(r.Network)
	if err != nil {
		return nil, nil, nil, sandboxFailure(err)
	}
	set := append([]string{"TMPDIR=" + tmp}, sandbox.CacheEnv(p.Cache)...)
	if who.job {
		set = append(set, "PYTHONUNBUFFERED=1")
	}
	var client *netproxy.Client
	if !r.Network {
		var proxyEnv []string
		client, proxyEnv = w.proxyClient(who.id, who.command)
		set = append(set, proxyEnv...)
	}
	env := w.commandEnv(set, true)
	det := SandboxDetails{Mode: r.Mode, Network: r.Network, Proxy: client != nil,
		Limits: &SandboxLimits{MemoryMB: r.MemoryMB, Processes: r.Processes, MemoryBy: "rlimit"}}
	s := &sandboxed{guard: &w.box.guard, details: det, command: who.command, dir: w.Cwd(), client: client, spare: func() {}}
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
			p.Watched = w.box.guard.Observe(roots, append([]string{tmp, p.Cache}, roots...), p.Home)
		}
		pol, err := sandbox.Build(r, p)
		return pol, p.Watched, err
	}
	return s, holder, env, nil
}

// sendPolicy makes the command's policy and gives it to the helper, which has been started
// and waits for it; when the policy cannot be made, the helper gets none and runs nothing,
// and the error is the refusal to return.
func (s *sandboxed) sendPolicy() error {
	pol, watched, err := s.build()
	if err != nil {
		s.cmd.AbortPolicy()
		return sandboxFailure(err)
	}
	s.pol, s.before = pol, watched
	if err := s.cmd.SendPolicy(pol); err != nil {
		return sandboxFailure(fmt.Errorf("cannot give the helper its policy: %v", err))
	}
	return nil
}

// detailsCopy returns the command's details as they are now.
func (s *sandboxed) detailsCopy() SandboxDetails {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.details
	d.Reverted = slices.Clone(d.Reverted)
	return d
}

// checkAfter is the check after every sandboxed command: it puts the protected paths back
// as they were before the command (sandbox.Guard.Check), records what it found in the
// details, and returns the note for the result ("" when nothing was found).
//
// Contract: called once the helper has been waited for: with a PID namespace, every
// process the command started has ended by then.
func (s *sandboxed) checkAfter() string {
	if s.before == nil {
		return ""
	}
	found, incomplete := s.guard.Check(s.before)
	if len(found) == 0 && incomplete == "" {
		return ""
	}
	if len(found) == 0 {
		return "\n\n[pid: " + incomplete + ". Tell the user: a .git made there would make git run commands outside the sandbox.]"
	}
	var b strings.Builder
	b.WriteString("\n\n[pid: this command ")
	for i, r := range found {
		s.mu.Lock()
		s.details.Reverted = append(s.details.Reverted, r.Path)
		s.mu.Unlock()
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case r.What == "created" && r.Restored:
			fmt.Fprintf(&b, "created %s, which pid removed", r.Path)
		case r.What == "created":
			fmt.Fprintf(&b, "created %s, which pid could not remove (%s)", r.Path, r.Why)
		case r.Restored:
			fmt.Fprintf(&b, "%s %s, which pid put back", r.What, r.Path)
		default:
			fmt.Fprintf(&b, "%s %s, which pid could not put back (%s)", r.What, r.Path, r.Why)
		}
	}
	b.WriteString(". Other programs (git, editors, direnv, other agents) load commands from these paths, so sandboxed commands may not create or change them. " +
		"If the task needs it, call bash again with unsandboxed: true and a justification; the user will be asked. Tell the user what happened.")
	if incomplete != "" {
		b.WriteString(" Also, " + incomplete + ".")
	}
	b.WriteString("]")
	return b.String()
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

// sandboxFailure is bash's refusal when the sandbox cannot be given: nothing ran.
func sandboxFailure(err error) error {
	return failf("The command did not run: pid's sandbox could not be set up: %v.\n\n"+
		"pid never runs a command unsandboxed on its own. To run commands without the sandbox, set "+
		`"sandbox": {"mode": "off"} in your user settings (~/.config/pid/settings.json) or the editor's settings; `+
		"or call bash with unsandboxed: true and a justification, which the user is asked to allow.", strings.TrimSuffix(err.Error(), "."))
}

// denialMarks are what a failed command's output says when the sandbox may have refused
// it something.
var denialMarks = []string{
	"Permission denied", "Operation not permitted", "Read-only file system", "Network is unreachable",
	"Connection refused", "Could not resolve host", "Temporary failure in name resolution", "EACCES", "EPERM",
	"EROFS", "ENETUNREACH", "ECONNREFUSED",
}

// symptoms are what a command's output says, whatever its exit code, when the sandbox
// refused it something: a program that reports a failure and goes on (a build step, a
// test runner, a shell loop) exits 0. "Permission denied" counts only next to a path the
// sandbox does not let it write (symptomPath).
var symptoms = []string{
	"Could not resolve host", "Network is unreachable", "Temporary failure in name resolution",
	"Name or service not known", "Read-only file system",
}

// sandboxNote returns the note added to a sandboxed command's result when its output shows
// the sandbox may have refused it something (failed: any of denialMarks; otherwise one of
// symptoms; either way "Permission denied" on a path outside the writable folders, or a
// path of a private place that is missing), naming what is writable; "" otherwise.
func sandboxNote(s *sandboxed, output string, failed bool) string {
	hit := false
	marks := symptoms
	if failed {
		marks = denialMarks
	}
	for _, m := range marks {
		if strings.Contains(output, m) {
			hit = true
			break
		}
	}
	if !hit {
		hit = deniedOutside(s.pol, s.dir, output)
	}
	if !hit && failed && s.pol.Mode == sandbox.ModeWorkspaceWrite && gitWord.MatchString(s.command) {
		hit = true // git fails silently at times when .git is read-only (git stash)
	}
	if !hit {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n[pid's sandbox (%s) may have refused this. Writable: %s", s.pol.Mode, strings.Join(s.pol.Writable, ", "))
	if s.pol.Mode == sandbox.ModeWorkspaceWrite {
		fmt.Fprintf(&b, " (but %s stay read-only there: git commands that write to .git, such as add, commit, stash, checkout or fetch, fail)", protected.List())
	}
	if len(s.pol.Private) > 0 {
		fmt.Fprintf(&b, ". Besides them, %s look empty and are read-only here: use $TMPDIR", strings.Join(s.pol.Private, ", "))
	}
	b.WriteString(". ")
	switch {
	case s.client != nil:
		b.WriteString("The network goes through pid's proxy only, to the hosts the user allowed (a refused host is named above). ")
	case !s.pol.Network:
		b.WriteString("The network is off. ")
	}
	b.WriteString("If the command needs more, call bash again with unsandboxed: true and a justification; the user will be asked.]")
	return b.String()
}

// gitWord finds git run by a command.
var gitWord = regexp.MustCompile(`(^|[\s;&|(])git(\s|$)`)

// deniedPath finds the paths a line of output names: quoted ('...', ‘...’, "...") or a word
// starting with /.
var deniedPath = regexp.MustCompile(`'([^']+)'|‘([^’]+)’|"([^"]+)"|(/[^\s:'"]+)`)

// deniedOutside reports whether a line of output says "Permission denied" (any case) about a
// path outside pol's writable folders or inside a protected one, or "No such file or
// directory" about a path in a private place (/tmp...) that the command does not see;
// relative paths are taken from dir.
func deniedOutside(pol sandbox.Policy, dir, output string) bool {
	for line := range strings.Lines(output) {
		low := strings.ToLower(line)
		denied, missing := strings.Contains(low, "permission denied"), strings.Contains(low, "no such file or directory")
		if !denied && !missing {
			continue
		}
		for _, m := range deniedPath.FindAllStringSubmatch(line, -1) {
			p := m[1] + m[2] + m[3] + m[4]
			if p == "" || strings.ContainsAny(p, "\n\x00") {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			inside := func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }
			switch {
			case denied && (!slices.ContainsFunc(pol.Writable, inside) || slices.ContainsFunc(pol.Protected, inside)):
				return true
			case missing && slices.ContainsFunc(pol.Private, inside) && !slices.ContainsFunc(pol.Rebind, inside):
				return true
			}
		}
	}
	return false
}

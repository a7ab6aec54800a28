// This file holds how a workspace's bash commands are contained (the sandbox package does
// the containing): the session's sandbox settings, its temporary folder, the environment a
// command gets (the model's key left out), and the words of the results (the note after a
// denial, the refusal when the kernel cannot give the sandbox).

package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/sandbox"
)

// SandboxConfig is how a session's bash commands are contained.
type SandboxConfig struct {
	// Settings are the session's resolved sandbox settings (sandbox.Resolve).
	Settings sandbox.Resolved
	// DropEnv names environment variables no command sees, besides ANTHROPIC_API_KEY and
	// OPENAI_API_KEY (which are always left out): the model's apiKeyEnv.
	DropEnv []string
}

// alwaysDropped are the variables holding model keys, never in a command's environment.
var alwaysDropped = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// SandboxDetails is bash's details.sandbox: how the command was contained.
type SandboxDetails struct {
	// Mode is "workspace-write", "read-only" or "off" (an unsandboxed call: Escalated).
	Mode string `json:"mode"`
	// Network says the command could reach the network.
	Network bool `json:"network"`
	// LoopbackCut says the network was cut without a network namespace (none could be
	// made), with Landlock's TCP rules and a seccomp filter, which cut the sandbox's own
	// loopback too.
	LoopbackCut bool `json:"loopbackCut,omitempty"`
	// Escalated says the model asked for this call to run unsandboxed, and it was allowed.
	Escalated bool `json:"escalated,omitempty"`
}

// box is a workspace's sandbox state.
type box struct {
	forceReadOnly atomic.Bool

	// mu guards the fields below it.
	mu  sync.Mutex
	cfg *SandboxConfig // nil: the default (workspace-write, network off)
	tmp string         // the session's temporary folder, made at the first command
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

// sandboxTmp returns the session's temporary folder, making it at the first call.
func (w *Workspace) sandboxTmp() (string, error) {
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	if w.box.tmp == "" {
		d, err := os.MkdirTemp("", "pid-sandbox-")
		if err != nil {
			return "", err
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		w.box.tmp = d
	}
	return w.box.tmp, nil
}

// closeBox removes the session's temporary folder.
func (w *Workspace) closeBox() {
	w.box.mu.Lock()
	defer w.box.mu.Unlock()
	if w.box.tmp != "" {
		os.RemoveAll(w.box.tmp)
		w.box.tmp = ""
	}
}

// commandEnv returns pid's environment without the model keys, with TMPDIR and the caches
// set from set (variable=value entries replacing pid's own).
func (w *Workspace) commandEnv(set []string) []string {
	w.box.mu.Lock()
	drop := slices.Clone(alwaysDropped)
	if w.box.cfg != nil {
		drop = append(drop, w.box.cfg.DropEnv...)
	}
	w.box.mu.Unlock()
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		drop = append(drop, name)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// sandboxed is a command prepared to run in the sandbox.
type sandboxed struct {
	cmd     *sandbox.Cmd
	details SandboxDetails
	pol     sandbox.Policy
	// missing are the paths of unguarded that did not exist before the command.
	missing []string
}

// unguarded are the paths, in each workspace folder, that other programs run or obey but
// the sandbox cannot keep from being created when they are missing (a mount needs an
// existing path, and pid does not create these: see docs/permissions.md). The daemon looks
// after each command whether it created one, and says so.
var unguarded = []string{".envrc", ".mcp.json", ".git"}

// createdNote returns a note naming the paths of unguarded the command created; "" when none.
func createdNote(s *sandboxed) string {
	var made []string
	for _, p := range s.missing {
		if _, err := os.Lstat(p); err == nil {
			made = append(made, p)
		}
	}
	if len(made) == 0 {
		return ""
	}
	return fmt.Sprintf("\n\n[pid: this command created %s, which other programs (direnv, other agents, git) read and may run code from; the sandbox cannot keep it from being created. Tell the user, who should review it.]", strings.Join(made, ", "))
}

// prepareSandboxed returns the command that runs argv in the sandbox the settings r ask for
// (not off), or a failure saying what is missing and which setting to change.
func (w *Workspace) prepareSandboxed(r sandbox.Resolved, argv []string) (*sandboxed, error) {
	tmp, err := w.sandboxTmp()
	if err != nil {
		return nil, sandboxFailure(fmt.Errorf("cannot make its temporary folder: %v", err))
	}
	p := sandbox.Places{Roots: w.Roots(), Tmp: tmp}
	if r.Mode == sandbox.ModeReadOnly {
		p.Cache = filepath.Join(tmp, "cache")
	} else if p.Cache, err = cacheDir(); err != nil {
		return nil, sandboxFailure(err)
	}
	p.Home, _ = os.UserHomeDir()
	p.ConfigDir, _ = xdg.ConfigDir()
	p.StateDir, _ = xdg.StateDir()
	p.Sockets = sandbox.SessionSockets(os.Getenv)
	pol, err := sandbox.Build(r, p)
	if err != nil {
		return nil, sandboxFailure(err)
	}
	env := w.commandEnv(append([]string{"TMPDIR=" + tmp}, sandbox.CacheEnv(p.Cache)...))
	cmd, err := sandbox.Prepare(pol, argv, w.cwd, env)
	if err != nil {
		return nil, sandboxFailure(err)
	}
	var missing []string
	if r.Mode == sandbox.ModeWorkspaceWrite {
		for _, root := range append(w.Roots(), r.WritableRoots...) {
			for _, n := range unguarded {
				if _, err := os.Lstat(filepath.Join(root, n)); err != nil {
					missing = append(missing, filepath.Join(root, n))
				}
			}
		}
	}
	return &sandboxed{cmd: cmd, pol: pol, missing: missing, details: SandboxDetails{Mode: r.Mode, Network: r.Network, LoopbackCut: cmd.NetworkCut == "seccomp"}}, nil
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

// denialMarks are what a command's output says when the sandbox refused it something.
var denialMarks = []string{
	"Permission denied", "Operation not permitted", "Read-only file system", "Network is unreachable",
	"Connection refused", "Could not resolve host", "Temporary failure in name resolution", "EACCES", "EPERM",
	"EROFS", "ENETUNREACH", "ECONNREFUSED",
}

// denialNote returns the note added to a failed sandboxed command's result when its output
// looks like a refusal, naming what is writable; "" otherwise.
func denialNote(s *sandboxed, output string) string {
	hit := false
	for _, m := range denialMarks {
		if strings.Contains(output, m) {
			hit = true
			break
		}
	}
	if !hit {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n[pid's sandbox (%s) may have refused this. Writable: %s", s.pol.Mode, strings.Join(s.pol.Writable, ", "))
	if s.pol.Mode == sandbox.ModeWorkspaceWrite {
		fmt.Fprintf(&b, " (but %s stay read-only there)", strings.Join(sandbox.ProtectedNames, ", "))
	}
	b.WriteString(". ")
	if !s.pol.Network {
		b.WriteString("The network is off. ")
	}
	b.WriteString("If the command needs more, call bash again with unsandboxed: true and a justification; the user will be asked.]")
	return b.String()
}

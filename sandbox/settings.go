// Package sandbox contains the commands pid runs for the model (bash) with the kernel: a
// helper process (`pid sandbox-exec`, Main) enters user, mount and network namespaces, makes
// the protected paths read-only and the secret ones empty, applies Landlock, and only then
// executes the command. The daemon itself is never restricted: Landlock applies to the whole
// calling process, so it is applied only in the helper, just before its exec.
//
// The entry points: Settings (what a person asks for, from the settings files and the
// editor) and Resolve, which merges their layers; Probe, which says what this kernel can
// give; Build, which turns resolved settings into the Policy of one call; Prepare, which
// makes the exec.Cmd that runs a command under a Policy; Main, the helper's code.
//
// This file holds the settings and how their sources merge.
package sandbox

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pid-agent/pid/netproxy"
)

// The modes.
const (
	// ModeWorkspaceWrite lets the command write in the workspace folders, its temporary
	// folder, the sandbox cache and the writableRoots; the default.
	ModeWorkspaceWrite = "workspace-write"
	// ModeReadOnly lets the command write only in its temporary folder.
	ModeReadOnly = "read-only"
	// ModeOff runs the command without a sandbox.
	ModeOff = "off"
)

// Settings is the "sandbox" object of a settings file, of initializationOptions or of
// session/new: {"mode"?, "network"?, "allowedHosts"?, "deniedHosts"?, "allowPresets"?,
// "injectHeaders"?, "writableRoots"?, "denyRead"?, "limits"?, "env"?}. A field left out
// leaves the layer below in force. The network's fields are netproxy's (embedded, so that
// one object decodes with unknown fields refused): "network" is "allowlist" (the default:
// pid's proxy, host by host), true (the host's network) or false (none).
type Settings struct {
	Mode string `json:"mode,omitempty"`
	netproxy.Settings
	WritableRoots []string `json:"writableRoots,omitempty"`
	DenyRead      []string `json:"denyRead,omitempty"`
	Limits        *Limits  `json:"limits,omitempty"`
	Env           *Env     `json:"env,omitempty"`
}

// Limits is "sandbox.limits": what one sandboxed command may use. A field left out leaves
// the layer below (in the end the default, DefaultLimits) in force.
type Limits struct {
	// MemoryMB caps the memory of each process of the command (its data: heap and
	// private writable mappings), in MiB.
	MemoryMB *int `json:"memoryMB,omitempty"`
	// Processes caps the processes and threads the command may have at once.
	Processes *int `json:"processes,omitempty"`
}

// Env is "sandbox.env": {"allow": [NAME...]}, the variables of pid's environment that look
// like secrets (SecretEnv) and still reach sandboxed commands. Only the user and the editor
// may name them.
type Env struct {
	Allow []string `json:"allow,omitempty"`
}

// Parse reads a "sandbox" value; null or absent (empty raw) is the zero Settings. Errors
// name the field.
func Parse(raw json.RawMessage) (Settings, error) {
	var s Settings
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("sandbox must be {\"mode\"?, \"network\"?, \"allowedHosts\"?, \"deniedHosts\"?, \"allowPresets\"?, \"injectHeaders\"?, \"writableRoots\"?, \"denyRead\"?, \"limits\"?, \"env\"?}: %v", err)
	}
	if err := s.Settings.Validate(); err != nil {
		return Settings{}, err
	}
	switch s.Mode {
	case "", ModeWorkspaceWrite, ModeReadOnly, ModeOff:
	default:
		return Settings{}, fmt.Errorf("sandbox.mode must be %q, %q or %q, not %q", ModeWorkspaceWrite, ModeReadOnly, ModeOff, s.Mode)
	}
	for i, p := range s.WritableRoots {
		if !filepath.IsAbs(p) {
			return Settings{}, fmt.Errorf("sandbox.writableRoots[%d] %q must be an absolute path", i, p)
		}
	}
	for i, p := range s.DenyRead {
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
			return Settings{}, fmt.Errorf("sandbox.denyRead[%d] %q must be an absolute path (or start with ~/)", i, p)
		}
	}
	if l := s.Limits; l != nil {
		if l.MemoryMB != nil && *l.MemoryMB < MinMemoryMB {
			return Settings{}, fmt.Errorf("sandbox.limits.memoryMB must be at least %d, not %d", MinMemoryMB, *l.MemoryMB)
		}
		if l.Processes != nil && *l.Processes < MinProcesses {
			return Settings{}, fmt.Errorf("sandbox.limits.processes must be at least %d, not %d", MinProcesses, *l.Processes)
		}
	}
	if s.Env != nil {
		for i, n := range s.Env.Allow {
			if n == "" || strings.ContainsAny(n, "=\x00") {
				return Settings{}, fmt.Errorf("sandbox.env.allow[%d] %q must be a variable's name", i, n)
			}
		}
	}
	return s, nil
}

// The least limits a setting may ask for: below them a shell and a few tools cannot start.
const (
	MinMemoryMB  = 64
	MinProcesses = 16
)

// Over returns s with every field that over sets replaced by over's; denyRead lists add up
// (a later source can only hide more), and so do the host lists (netproxy.Settings.Over).
func (s Settings) Over(over Settings) Settings {
	if over.Mode != "" {
		s.Mode = over.Mode
	}
	s.Settings = s.Settings.Over(over.Settings)
	if over.WritableRoots != nil {
		s.WritableRoots = over.WritableRoots
	}
	s.DenyRead = append(slices.Clip(s.DenyRead), over.DenyRead...)
	if over.Limits != nil {
		l := Limits{}
		if s.Limits != nil {
			l = *s.Limits
		}
		if over.Limits.MemoryMB != nil {
			l.MemoryMB = over.Limits.MemoryMB
		}
		if over.Limits.Processes != nil {
			l.Processes = over.Limits.Processes
		}
		s.Limits = &l
	}
	if over.Env != nil {
		s.Env = over.Env
	}
	return s
}

// Resolved is the sandbox a session asks for, every source merged.
type Resolved struct {
	Mode string
	// Network says commands use the host's network (sandbox.network true): Net.Mode is
	// netproxy.ModeOn.
	Network bool
	// Net is the network the session asks for: its mode ("allowlist": a network namespace
	// whose only way out is pid's proxy; ModeOff: a network namespace with the loopback
	// only), the hosts the proxy lets through or refuses, the headers it adds.
	Net           netproxy.Resolved
	WritableRoots []string
	DenyRead      []string
	// MemoryMB and Processes are the limits of each command (never 0: DefaultLimits fills
	// what no source sets).
	MemoryMB, Processes int
	// EnvAllow are the secret-looking variables the user or the editor lets through.
	EnvAllow []string
	// Ignored lists, for a person, what a workspace's settings asked for and did not get.
	Ignored []string
}

// Default is what a session gets when no source says anything: workspace-write, the
// network through pid's proxy (allowlist) with no host allowed, the default limits.
func Default() Resolved {
	mem, procs := DefaultLimits()
	return Resolved{Mode: ModeWorkspaceWrite, Net: netproxy.Resolved{Mode: netproxy.ModeAllowlist}, MemoryMB: mem, Processes: procs}
}

// DefaultProcesses is the default of sandbox.limits.processes: far above what a build runs
// at once (a parallel compile of a big Go or Rust project, npm's workers: a few hundred
// processes and threads), far below what a fork bomb needs to hurt.
const DefaultProcesses = 4096

// DefaultLimits returns the default limits: memoryMB 8192 (8 GiB per process, enough for a
// linker or a language server on a big project), or half the machine's memory when that is
// less; processes DefaultProcesses.
func DefaultLimits() (memoryMB, processes int) {
	memoryMB = 8192
	if total := totalMemoryMB(); total > 0 && total/2 < memoryMB {
		memoryMB = max(total/2, MinMemoryMB)
	}
	return memoryMB, DefaultProcesses
}

// Resolve merges the sources of a session's sandbox settings: user is the user settings
// file's, editor the editor's (initializationOptions, then session/new, already merged with
// Over), workspace the workspace folder's .pid/settings.json. A workspace's file may only
// narrow until the folder is trusted (a stricter mode, more denyRead); even trusted, it
// cannot turn the sandbox off, name writableRoots, raise a limit nor let a secret variable
// through (env.allow), which only the user and the editor may. Its network settings, trusted
// or not, may only narrow (netproxy.Resolve: a stricter network, more denied hosts, fewer
// allowed ones). Pure (but for the machine's memory, read once for the default limit).
func Resolve(user, editor, workspace Settings, trusted bool) Resolved {
	s := Settings{}.Over(user).Over(editor)
	r := Default()
	if s.Mode != "" {
		r.Mode = s.Mode
	}
	r.Net = netproxy.Resolve(user.Settings, editor.Settings, workspace.Settings, trusted)
	r.Network = r.Net.Mode == netproxy.ModeOn
	r.WritableRoots = s.WritableRoots
	r.DenyRead = s.DenyRead
	if s.Limits != nil {
		if s.Limits.MemoryMB != nil {
			r.MemoryMB = *s.Limits.MemoryMB
		}
		if s.Limits.Processes != nil {
			r.Processes = *s.Limits.Processes
		}
	}
	if s.Env != nil {
		r.EnvAllow = s.Env.Allow
	}
	// The workspace's own.
	if workspace.Mode != "" {
		switch {
		case workspace.Mode == ModeOff:
			r.Ignored = append(r.Ignored, `sandbox.mode "off" (only the user or the editor may turn the sandbox off)`)
		case trusted || strictness(workspace.Mode) >= strictness(r.Mode):
			r.Mode = workspace.Mode
		default:
			r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.mode %q (the folder is not trusted: it may only narrow)", workspace.Mode))
		}
	}
	if len(workspace.WritableRoots) > 0 {
		r.Ignored = append(r.Ignored, "sandbox.writableRoots (only the user or the editor may name them)")
	}
	r.DenyRead = append(slices.Clip(r.DenyRead), workspace.DenyRead...)
	if l := workspace.Limits; l != nil {
		// Even trusted, a workspace only lowers the limits: they protect the machine, not
		// the folder.
		if l.MemoryMB != nil {
			if *l.MemoryMB <= r.MemoryMB {
				r.MemoryMB = *l.MemoryMB
			} else {
				r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.limits.memoryMB %d (a workspace may only lower it, from %d)", *l.MemoryMB, r.MemoryMB))
			}
		}
		if l.Processes != nil {
			if *l.Processes <= r.Processes {
				r.Processes = *l.Processes
			} else {
				r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.limits.processes %d (a workspace may only lower it, from %d)", *l.Processes, r.Processes))
			}
		}
	}
	if workspace.Env != nil && len(workspace.Env.Allow) > 0 {
		r.Ignored = append(r.Ignored, "sandbox.env.allow (only the user or the editor may let secrets through)")
	}
	r.Ignored = append(r.Ignored, r.Net.Ignored...)
	return r
}

// strictness orders the modes: off < workspace-write < read-only.
func strictness(mode string) int {
	switch mode {
	case ModeOff:
		return 0
	case ModeReadOnly:
		return 2
	}
	return 1
}

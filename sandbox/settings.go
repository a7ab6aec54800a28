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
// session/new: {"mode"?, "network"?, "writableRoots"?, "denyRead"?}. A field left out leaves
// the layer below in force.
type Settings struct {
	Mode          string   `json:"mode,omitempty"`
	Network       *bool    `json:"network,omitempty"`
	WritableRoots []string `json:"writableRoots,omitempty"`
	DenyRead      []string `json:"denyRead,omitempty"`
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
		return Settings{}, fmt.Errorf("sandbox must be {\"mode\"?, \"network\"?, \"writableRoots\"?, \"denyRead\"?}: %v", err)
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
	return s, nil
}

// Over returns s with every field that over sets replaced by over's; denyRead lists add up
// (a later source can only hide more).
func (s Settings) Over(over Settings) Settings {
	if over.Mode != "" {
		s.Mode = over.Mode
	}
	if over.Network != nil {
		s.Network = over.Network
	}
	if over.WritableRoots != nil {
		s.WritableRoots = over.WritableRoots
	}
	s.DenyRead = append(slices.Clip(s.DenyRead), over.DenyRead...)
	return s
}

// Resolved is the sandbox a session asks for, every source merged.
type Resolved struct {
	Mode          string
	Network       bool
	WritableRoots []string
	DenyRead      []string
	// Ignored lists, for a person, what a workspace's settings asked for and did not get.
	Ignored []string
}

// Default is what a session gets when no source says anything: workspace-write, network off.
func Default() Resolved { return Resolved{Mode: ModeWorkspaceWrite} }

// Resolve merges the sources of a session's sandbox settings: user is the user settings
// file's, editor the editor's (initializationOptions, then session/new, already merged with
// Over), workspace the workspace folder's .pid/settings.json. A workspace's file may only
// narrow until the folder is trusted (a stricter mode, network off, more denyRead); even
// trusted, it cannot turn the sandbox off nor name writableRoots, which only the user and
// the editor may. Pure.
func Resolve(user, editor, workspace Settings, trusted bool) Resolved {
	s := Settings{}.Over(user).Over(editor)
	r := Default()
	if s.Mode != "" {
		r.Mode = s.Mode
	}
	if s.Network != nil {
		r.Network = *s.Network
	}
	r.WritableRoots = s.WritableRoots
	r.DenyRead = s.DenyRead
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
	if workspace.Network != nil {
		switch {
		case !*workspace.Network || trusted:
			r.Network = *workspace.Network
		default:
			r.Ignored = append(r.Ignored, "sandbox.network true (the folder is not trusted: it may only narrow)")
		}
	}
	if len(workspace.WritableRoots) > 0 {
		r.Ignored = append(r.Ignored, "sandbox.writableRoots (only the user or the editor may name them)")
	}
	r.DenyRead = append(slices.Clip(r.DenyRead), workspace.DenyRead...)
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

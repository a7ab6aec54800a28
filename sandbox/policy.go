// This file holds the Policy of one sandboxed call (what the helper is told) and Build,
// which makes it from a session's resolved settings and the places the call runs in.

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is what the helper applies before it executes the command. The daemon builds it
// (Build) and hands it to the helper in the environment (Prepare); every path is absolute.
type Policy struct {
	Mode    string `json:"mode"`
	Network bool   `json:"network"`
	// Writable are the folders the command may change (Landlock's write rights beneath them).
	Writable []string `json:"writable"`
	// Protected are existing paths inside Writable made read-only by a bind mount.
	Protected []string `json:"protected,omitempty"`
	// Hidden are existing paths made empty (an empty read-only folder, or /dev/null for a
	// file) by a mount over them.
	Hidden []string `json:"hidden,omitempty"`
	// NetNS says the helper runs in a network namespace of its own (network off); when the
	// network is off without one, Landlock's TCP rules cut it instead.
	NetNS bool `json:"netns"`
	// ABI is the Landlock ABI the daemon probed; the helper checks it again.
	ABI int `json:"abi"`
}

// Places are where one session's commands run, for Build.
type Places struct {
	// Roots are the session's workspace folders.
	Roots []string
	// Tmp is the session's temporary folder (TMPDIR points at it); it must exist.
	Tmp string
	// Cache is the persistent cache folder ($XDG_CACHE_HOME/pid/sandbox) in workspace-write
	// mode, a folder inside Tmp in read-only mode; Build creates it.
	Cache string
	// Home is the user's home folder ("" when unknown), ConfigDir and StateDir pid's own
	// ($XDG_CONFIG_HOME/pid, $XDG_STATE_HOME/pid).
	Home, ConfigDir, StateDir string
	// Sockets are the Unix sockets and folders of sockets of the user's session that the
	// command must not reach (see SessionSockets): Landlock before ABI 9 does not stop a
	// connect to a socket by its path, and a network namespace does not either.
	Sockets []string
}

// systemSockets are the sockets of services that act with more rights than the command:
// container engines and snapd (root on the host), the system bus, systemd's own, the X
// server (keystrokes), every user's runtime folder.
var systemSockets = []string{
	"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", "/run/containerd/containerd.sock",
	"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/tmp/.X11-unix", "/run/user",
	"/run/systemd/private", "/run/snapd.socket", "/run/snapd-snap.socket", "/run/libvirt", "/var/run/libvirt",
}

// SessionSockets returns the sockets of the user's session named by the environment getenv
// reads: $XDG_RUNTIME_DIR (the session bus, systemd --user, the agents), $SSH_AUTH_SOCK,
// the session bus's path, and the fixed system ones (systemSockets).
func SessionSockets(getenv func(string) string) []string {
	var out []string
	for _, v := range []string{"XDG_RUNTIME_DIR", "SSH_AUTH_SOCK"} {
		if p := getenv(v); filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	for _, part := range strings.Split(getenv("DBUS_SESSION_BUS_ADDRESS"), ";") {
		for _, kv := range strings.Split(strings.TrimPrefix(part, "unix:"), ",") {
			if p, ok := strings.CutPrefix(kv, "path="); ok && filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	return append(out, systemSockets...)
}

// ProtectedNames are the paths, relative to each writable root, that a sandboxed command may
// not change even there (they make other programs run code, or hold pid's own settings):
// read-only when they exist, and not creatable when missing (see Build).
var ProtectedNames = []string{".git/config", ".git/hooks", ".pid", ".vscode", ".idea", ".envrc", ".mcp.json"}

// placeholders are the protected paths Build creates, empty, when they are missing, so that
// a read-only mount can keep them empty: a mount needs an existing path, and nothing else
// can stop a name from being created in a writable folder. Empty folders and an empty git
// configuration change nothing for the programs that read them. The .git ones are created
// only in an existing .git folder. (.envrc and .mcp.json are not: an empty one would change
// what direnv and other agents do.)
var placeholders = []struct {
	name string
	dir  bool
}{{".git/hooks", true}, {".git/config", false}, {".pid", true}, {".vscode", true}, {".idea", true}}

// SecretNames are the paths under the home folder a sandboxed command cannot read.
var SecretNames = []string{".ssh", ".gnupg", ".aws", ".netrc", ".docker/config.json"}

// Build returns the Policy of a call in a session whose resolved settings are r, running in
// p. It creates the cache's folders and the missing protected folders (placeholderDirs) in
// the workspace folders and writableRoots; it fails when one cannot be made, or a protected
// path is a symbolic link that leads nowhere (a mount could not cover it, and the command
// could create its target). r.Mode must not be ModeOff.
func Build(r Resolved, p Places) (Policy, error) {
	pol := Policy{Mode: r.Mode, Network: r.Network}
	var roots []string
	if r.Mode == ModeWorkspaceWrite {
		for _, d := range append(slices.Clone(p.Roots), r.WritableRoots...) {
			real, err := filepath.EvalSymlinks(d)
			if err != nil {
				return Policy{}, fmt.Errorf("writable folder %s: %v", d, err)
			}
			if !slices.Contains(roots, real) {
				roots = append(roots, real)
			}
		}
		pol.Writable = append(pol.Writable, p.Cache)
	}
	// In read-only mode the caller puts the cache inside Tmp.
	for _, d := range CacheDirs(p.Cache) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Policy{}, fmt.Errorf("sandbox cache: %v", err)
		}
	}
	pol.Writable = append(pol.Writable, p.Tmp)
	pol.Writable = append(pol.Writable, roots...)
	for _, root := range roots {
		for _, ph := range placeholders {
			path := filepath.Join(root, ph.name)
			if strings.HasPrefix(ph.name, ".git/") {
				if fi, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
					continue
				}
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			var err error
			if ph.dir {
				err = os.Mkdir(path, 0o755)
			} else {
				var f *os.File
				if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
					err = f.Close()
				}
			}
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return Policy{}, fmt.Errorf("cannot create the protected path %s: %v", path, err)
			}
		}
		paths := []string{filepath.Join(root, ".git", "config.worktree")}
		for _, name := range ProtectedNames {
			paths = append(paths, filepath.Join(root, name))
		}
		paths = append(paths, innerGitDirs(filepath.Join(root, ".git"))...)
		for _, path := range paths {
			if _, err := os.Lstat(path); err != nil {
				continue // missing: see the sandbox's limits in docs/permissions.md
			}
			if _, err := os.Stat(path); err != nil {
				return Policy{}, fmt.Errorf("the protected path %s is a symbolic link that leads nowhere (%v): remove it, or set sandbox.mode", path, err)
			}
			pol.Protected = append(pol.Protected, path)
		}
	}
	var hide []string
	if p.Home != "" {
		for _, n := range SecretNames {
			hide = append(hide, filepath.Join(p.Home, n))
		}
	}
	for _, d := range []string{p.ConfigDir, p.StateDir} {
		if d != "" {
			hide = append(hide, d)
		}
	}
	hide = append(hide, p.Sockets...)
	for _, d := range r.DenyRead {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if p.Home == "" {
				continue
			}
			d = filepath.Join(p.Home, rest)
		}
		hide = append(hide, filepath.Clean(d))
	}
	for _, h := range hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // missing: nothing to read
		}
		// A folder that holds a writable one (a TMPDIR in $XDG_RUNTIME_DIR) stays: covering
		// it would hide the writable folder too.
		holds := slices.ContainsFunc(pol.Writable, func(w string) bool { return w == real || strings.HasPrefix(w, real+"/") })
		if !holds && !slices.Contains(pol.Hidden, real) {
			pol.Hidden = append(pol.Hidden, real)
		}
	}
	return pol, nil
}

// CacheDirs returns the sandbox cache folder's subfolders the command's caches point at
// (see CacheEnv): XDG_CACHE_HOME's, then go-build, npm and pip.
func CacheDirs(cache string) []string {
	return []string{cache, filepath.Join(cache, "go-build"), filepath.Join(cache, "npm"), filepath.Join(cache, "pip")}
}

// CacheEnv returns the environment entries that point a command's caches at cache:
// XDG_CACHE_HOME, GOCACHE, npm_config_cache and PIP_CACHE_DIR.
func CacheEnv(cache string) []string {
	d := CacheDirs(cache)
	return []string{"XDG_CACHE_HOME=" + d[0], "GOCACHE=" + d[1], "npm_config_cache=" + d[2], "PIP_CACHE_DIR=" + d[3]}
}

// innerGitDirs returns the configuration and hooks of the repositories kept inside the git
// folder gitDir: its submodules' (.git/modules/NAME, nested ones too) and its worktrees'
// (.git/worktrees/NAME/config.worktree), which git reads as it reads .git/config. Only what
// exists; a few folder listings, never the objects.
func innerGitDirs(gitDir string) []string {
	var out []string
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		if depth > 8 {
			return
		}
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
			out = append(out, filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"), filepath.Join(dir, "hooks"))
			dir = filepath.Join(dir, "modules")
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() {
				visit(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	visit(filepath.Join(gitDir, "modules"), 0)
	if entries, err := os.ReadDir(filepath.Join(gitDir, "worktrees")); err == nil {
		for _, e := range entries {
			out = append(out, filepath.Join(gitDir, "worktrees", e.Name(), "config.worktree"))
		}
	}
	return out
}

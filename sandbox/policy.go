// This file holds the Policy of one sandboxed call (what the helper is told) and Build,
// which makes it from a session's resolved settings and the places the call runs in.

package sandbox

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	// Private are the places shared with the user's other programs (/tmp, /var/tmp,
	// /dev/shm, /run) that the command sees empty: an empty read-only tmpfs over each.
	Private []string `json:"private,omitempty"`
	// Rebind are the paths under Private the command needs, bound back in: the workspace
	// folders, its temporary folder, the cache, the folders of PATH...
	Rebind []string `json:"rebind,omitempty"`
	// Links are the symbolic links right under a Private place, made again there
	// (/run/current-system on NixOS): [path, target].
	Links [][2]string `json:"links,omitempty"`
	// NetNS says the helper runs in a network namespace of its own (network off); when the
	// network is off without one, Landlock's TCP rules cut it instead.
	NetNS bool `json:"netns"`
	// PidNS says the helper runs as the init of a PID namespace of its own: every process
	// the command starts ends with it.
	PidNS bool `json:"pidns"`
	// MemoryMB and Processes are the command's limits (0: none).
	MemoryMB  int `json:"memoryMB,omitempty"`
	Processes int `json:"processes,omitempty"`
	// ABI is the Landlock ABI the daemon probed; the helper checks it again.
	ABI int `json:"abi"`
}

// launch is what the daemon writes on the helper's policy pipe: the policy, and the command
// with its environment and folder.
type launch struct {
	Policy Policy   `json:"policy"`
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
}

// Places are where one session's commands run, for Build.
type Places struct {
	// Roots are the session's workspace folders.
	Roots []string
	// Cwd is the folder the command runs in.
	Cwd string
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
	// Path are the folders of the command's PATH, and of its program: those that lie in
	// a private place are bound back in.
	Path []string
	// Watched is the state of the protected paths (Guard.Observe on WritableRoots' result);
	// nil in read-only mode, where nothing of the workspace is writable.
	Watched *Watched
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

// SecretNames are the paths under the home folder a sandboxed command cannot read.
var SecretNames = []string{".ssh", ".gnupg", ".aws", ".netrc", ".docker/config.json"}

// WritableRoots returns the real paths of the workspace folders and writableRoots a
// session in r's settings may write (none in read-only mode), without repeats.
func WritableRoots(r Resolved, roots []string) ([]string, error) {
	if r.Mode != ModeWorkspaceWrite {
		return nil, nil
	}
	var out []string
	for _, d := range append(slices.Clone(roots), r.WritableRoots...) {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("writable folder %s: %v", d, err)
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// Build returns the Policy of a call in a session whose resolved settings are r, running in
// p. It creates the cache's folders; it creates nothing in the workspace. It fails when the
// cache cannot be made, or when a protected path of the folder the command runs in is a
// symbolic link that leads nowhere (a mount could not cover it, and the command could
// create its target): the message says how to fix it. Such a link in another workspace
// folder makes that folder read-only for the command instead. r.Mode must not be ModeOff.
func Build(r Resolved, p Places) (Policy, error) {
	pol := Policy{Mode: r.Mode, Network: r.Network, MemoryMB: r.MemoryMB, Processes: r.Processes}
	roots, err := WritableRoots(r, p.Roots)
	if err != nil {
		return Policy{}, err
	}
	if r.Mode == ModeWorkspaceWrite {
		pol.Writable = append(pol.Writable, p.Cache)
	}
	// In read-only mode the caller puts the cache inside Tmp.
	for _, d := range CacheDirs(p.Cache) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Policy{}, fmt.Errorf("sandbox cache: %v", err)
		}
	}
	pol.Writable = append(pol.Writable, p.Tmp)
	if w := p.Watched; w != nil {
		dangling := slices.Sorted(maps.Keys(w.Dangling()))
		for _, link := range dangling {
			i := slices.IndexFunc(roots, func(root string) bool { return within(link, root) })
			if i < 0 {
				continue
			}
			if within(p.Cwd, roots[i]) {
				return Policy{}, danglingError(link, w.Dangling()[link])
			}
			roots = slices.Delete(roots, i, i+1) // read-only for this command
		}
		pol.Writable = append(pol.Writable, roots...)
		for _, link := range dangling {
			target := absFrom(filepath.Dir(link), w.Dangling()[link])
			if slices.ContainsFunc(pol.Writable, func(d string) bool { return within(target, d) }) {
				return Policy{}, danglingError(link, w.Dangling()[link])
			}
		}
		pol.Protected = w.Protected()
	} else {
		pol.Writable = append(pol.Writable, roots...)
	}
	pol.Private, pol.Rebind, pol.Links = privatePlaces(r, p, pol.Writable)
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
		// it would hide the writable folder too. One in a private place is gone already,
		// unless it lies in a folder bound back.
		holds := slices.ContainsFunc(pol.Writable, func(w string) bool { return within(w, real) })
		private := slices.ContainsFunc(pol.Private, func(d string) bool { return within(real, d) }) &&
			!slices.ContainsFunc(pol.Rebind, func(d string) bool { return within(real, d) })
		if !holds && !private && !slices.Contains(pol.Hidden, real) {
			pol.Hidden = append(pol.Hidden, real)
		}
	}
	return pol, nil
}

// danglingError is Build's refusal for a protected link that leads nowhere.
func danglingError(link, target string) error {
	return fmt.Errorf("%s is a symbolic link to %s, which does not exist: the sandbox cannot keep it from being created, "+
		"and programs outside the sandbox load commands from %s. Remove the link (rm %s) or make it point at a file that exists; "+
		"commands in the other workspace folders still run", link, target, filepath.Base(link), shellQuote(link))
}

// shellQuote quotes p for a shell when it needs it.
func shellQuote(p string) string {
	if strings.IndexFunc(p, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// privateCandidates are the places shared with the user's other programs that a command
// sees empty: where tmux, screen, ssh agents, IDE helpers and services keep their sockets.
var privateCandidates = []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run"}

// privatePlaces returns the private places of a command that may write in writable (those
// that exist, real paths, none that a writable folder holds), what must be bound back in
// them, and the links to make again right under them.
func privatePlaces(r Resolved, p Places, writable []string) (private, rebind []string, links [][2]string) {
	for _, real := range privateReal() {
		if slices.ContainsFunc(writable, func(w string) bool { return within(real, w) }) {
			continue // the user made all of it writable
		}
		private = append(private, real)
	}
	var cands []string
	add := func(n string, static bool) {
		if n == "" || !filepath.IsAbs(n) {
			return
		}
		eval := filepath.EvalSymlinks
		if static {
			eval = staticReal // the system's folders: looked up once
		}
		r, err := eval(n)
		if err != nil {
			return
		}
		if slices.ContainsFunc(private, func(d string) bool { return r != d && within(r, d) }) && !slices.Contains(cands, r) {
			cands = append(cands, r)
		}
	}
	for _, n := range writable {
		add(n, false)
	}
	for _, n := range append(slices.Clone(p.Roots), p.Cwd) {
		add(n, false)
	}
	for _, n := range p.Path {
		add(n, true)
	}
	if r.Network {
		add("/etc/resolv.conf", true) // its target (/run/systemd/resolve/...)
	}
	slices.SortFunc(cands, func(a, b string) int { return len(a) - len(b) })
	for _, c := range cands {
		if !slices.ContainsFunc(rebind, func(d string) bool { return within(c, d) }) {
			rebind = append(rebind, c)
		}
	}
	for _, d := range private {
		links = append(links, topLinks(d)...)
	}
	return private, rebind, links
}

// privateReal returns the real paths of the privateCandidates that are folders, without
// repeats; found once per process.
var privateReal = sync.OnceValue(func() []string {
	var out []string
	for _, c := range privateCandidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || slices.Contains(out, real) {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			out = append(out, real)
		}
	}
	return out
})

// staticReal is filepath.EvalSymlinks for the system's folders (PATH's, /etc/resolv.conf),
// remembered once found: they do not change while pid runs, and each lookup costs a system
// call per component. Safe for concurrent use.
func staticReal(p string) (string, error) {
	staticReals.Lock()
	defer staticReals.Unlock()
	if r, ok := staticReals.m[p]; ok {
		return r, nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err // it may come later
	}
	if staticReals.m == nil {
		staticReals.m = map[string]string{}
	}
	if len(staticReals.m) < 256 {
		staticReals.m[p] = real
	}
	return real, nil
}

// staticReals are staticReal's answers.
var staticReals struct {
	sync.Mutex
	m map[string]string
}

// topLinks returns the symbolic links right under d, [path, target], for the runtime
// folders only (/run: /run/current-system on NixOS); read once per process.
func topLinks(d string) [][2]string {
	if d != "/run" {
		return nil
	}
	return runLinks()
}

var runLinks = sync.OnceValue(func() [][2]string {
	entries, err := os.ReadDir("/run")
	if err != nil {
		return nil
	}
	var out [][2]string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join("/run", e.Name())
		if t, err := os.Readlink(p); err == nil {
			out = append(out, [2]string{p, t})
		}
	}
	return out
})

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

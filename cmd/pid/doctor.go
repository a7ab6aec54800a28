// This file is `pid doctor`: what this machine gives pid, for a person: the sandbox bash
// runs in, the same facts initialize reports as capabilities.experimental.pid.sandbox, and
// the network commands get (the proxy and the hosts of the user settings), and the keys
// pid login saved (their names only); `pid doctor --json` says the sandbox, the saved keys,
// the model's key variable and the folder's trust as one JSON object, for a client's health
// check.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/trust"
)

// doctor prints what the kernel offers for the sandbox and returns the exit code: 0 when
// the sandbox is available, 1 when bash would refuse to run (until the settings turn the
// sandbox off).
func doctor(w io.Writer) int {
	c := sandbox.Probe()
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	landlock := "no"
	if c.LandlockABI > 0 {
		landlock = fmt.Sprintf("yes, ABI %d", c.LandlockABI)
	}
	fmt.Fprintf(w, "sandbox for bash:    %s\n", map[bool]string{true: "available", false: "NOT available"}[c.Available])
	fmt.Fprintf(w, "  Landlock:          %s\n", landlock)
	fmt.Fprintf(w, "  user namespaces:   %s\n", yes(c.UserNamespaces))
	net := yes(c.NetworkNamespaces)
	if !c.NetworkNamespaces && c.LandlockABI >= 4 {
		net += " (network off is done with Landlock's TCP rules; the sandbox's own loopback is cut too)"
	}
	fmt.Fprintf(w, "  network namespace: %s\n", net)
	pidns := yes(c.PidNamespaces)
	if !c.PidNamespaces && c.UserNamespaces {
		pidns += " (a command's background processes outlive it, until pid exits)"
	}
	fmt.Fprintf(w, "  PID namespace:     %s\n", pidns)
	if c.Reason != "" {
		fmt.Fprintf(w, "  why not:           %s\n", c.Reason)
	}
	networkLines(w, c)
	credentialsLine(w)
	if !c.Available {
		fmt.Fprintln(w, "\nbash refuses to run commands until the kernel gives the sandbox, or your settings say\n"+
			`"sandbox": {"mode": "off"} (~/.config/pid/settings.json, or the editor's settings).`)
		return 1
	}
	return 0
}

// credentialsLine says which providers pid login saved a key for (names only, never a
// key), or why the file is not read.
func credentialsLine(w io.Writer) {
	path, _ := credentials.DefaultPath()
	f, err := credentials.Current()
	switch {
	case err != nil:
		fmt.Fprintf(w, "saved keys:          NOT read: %v\n", err)
	case len(f.Credentials) == 0:
		fmt.Fprintf(w, "saved keys:          none (pid login saves one in %s)\n", path)
	default:
		fmt.Fprintf(w, "saved keys:          %s (%s; pid login --check says more)\n", strings.Join(f.Names(), ", "), path)
	}
}

// doctorReport is what `pid doctor --json` prints, for a client's health check (Neovim's
// :checkhealth pid): no key is ever in it, only whether one is there.
type doctorReport struct {
	Version string             `json:"version"`
	Sandbox sandbox.Capability `json:"sandbox"`
	// SavedKeys are the names of the keys pid login saved; SavedKeysError why the file was
	// not read.
	SavedKeys      []string `json:"savedKeys"`
	SavedKeysError string   `json:"savedKeysError,omitempty"`
	// Model is the user settings' model (nil: none), Settings the file it was read from.
	Model    *doctorModel `json:"model"`
	Settings string       `json:"settings"`
	// ModelError says why the settings could not be read.
	ModelError string `json:"modelError,omitempty"`
	// Folder is the current folder and whether the user trusts it (trust.json).
	Folder doctorFolder `json:"folder"`
}

type doctorModel struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	// KeyVariable is the environment variable its key is read from; KeySet whether it is set
	// (not empty); KeySource where the key that will be used comes from ("" for none needed),
	// KeyError why there is none. Scripted models have none of these.
	KeyVariable string `json:"keyVariable,omitempty"`
	KeySet      bool   `json:"keySet"`
	KeySource   string `json:"keySource,omitempty"`
	KeyError    string `json:"keyError,omitempty"`
}

type doctorFolder struct {
	Path    string `json:"path"`
	Trusted bool   `json:"trusted"`
	// TrustError says why trust.json could not be read (nothing is trusted then).
	TrustError string `json:"trustError,omitempty"`
}

// doctorJSON prints the doctorReport as one JSON object; the exit code is doctor's.
func doctorJSON(w io.Writer) int {
	r := doctorReport{Sandbox: sandbox.Probe(), SavedKeys: []string{}}
	r.Version, _ = buildVersion()
	if f, err := credentials.Current(); err != nil {
		r.SavedKeysError = err.Error()
	} else {
		r.SavedKeys = append(r.SavedKeys, f.Names()...)
	}
	cfg, where, err := userModel()
	r.Settings = where
	switch {
	case err != nil:
		r.ModelError = err.Error()
	case cfg != nil:
		m := &doctorModel{Provider: cfg.Provider, ID: cfg.ID}
		if cfg.Provider == provider.OpenAI || cfg.Provider == provider.Anthropic {
			m.KeyVariable = (&provider.Model{Provider: cfg.Provider, APIKeyEnv: cfg.APIKeyEnv}).KeyVariable()
			m.KeySet = strings.TrimSpace(os.Getenv(m.KeyVariable)) != ""
			if from, err := provider.KeySource(*cfg); err != nil {
				m.KeyError = err.Error()
			} else {
				m.KeySource = from
			}
		}
		r.Model = m
	}
	r.Folder.Path, _ = os.Getwd()
	if st, err := trust.Open(""); err != nil {
		r.Folder.TrustError = err.Error()
	} else {
		r.Folder.Trusted = st.Trusted(r.Folder.Path)
	}
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid doctor:", err)
		return 1
	}
	fmt.Fprintf(w, "%s\n", b)
	if !r.Sandbox.Available {
		return 1
	}
	return 0
}

// networkLines says what network the user settings give sandboxed commands: the mode, and
// for the allow-list, pid's proxy with the allowed and denied hosts (the presets' hosts
// included) and the names of the headers it adds (never their values).
func networkLines(w io.Writer, c sandbox.Capability) {
	var user sandbox.Settings
	path, err := settings.UserPath()
	if err == nil {
		data, rerr := os.ReadFile(path)
		switch {
		case rerr == nil:
			f, perr := settings.Parse(data)
			if perr == nil {
				user, perr = sandbox.Parse(f.Sandbox)
			}
			if perr != nil {
				fmt.Fprintf(w, "network for bash:    NOT read (%s: %v)\n", path, perr)
				return
			}
		case !os.IsNotExist(rerr):
			fmt.Fprintf(w, "network for bash:    NOT read (%v)\n", rerr)
			return
		}
	}
	r := sandbox.Resolve(user, sandbox.Settings{}, sandbox.Settings{}, true)
	switch {
	case r.Mode == sandbox.ModeOff:
		fmt.Fprintln(w, "network for bash:    the host's (the sandbox is off)")
		return
	case r.Net.Mode == netproxy.ModeOn:
		fmt.Fprintln(w, "network for bash:    the host's (sandbox.network true)")
		return
	case r.Net.Mode == netproxy.ModeOff:
		fmt.Fprintln(w, "network for bash:    off (sandbox.network false)")
		return
	}
	if c.Available && !c.NetworkNamespaces {
		fmt.Fprintln(w, "network for bash:    off: \"allowlist\" needs a network namespace, which this kernel does not give")
		return
	}
	fmt.Fprintln(w, "network for bash:    allowlist, through pid's proxy (HTTP and SOCKS5 on the session's own 127.0.0.1)")
	list := func(hosts []string, none string) string {
		if len(hosts) == 0 {
			return none
		}
		return strings.Join(hosts, ", ")
	}
	fmt.Fprintf(w, "  allowed hosts:     %s\n", list(r.Net.Allowed, "none (others are asked about, or refused)"))
	fmt.Fprintf(w, "  denied hosts:      %s\n", list(r.Net.Denied, "none"))
	for _, host := range slices.Sorted(maps.Keys(r.Net.InjectHeaders)) {
		fmt.Fprintf(w, "  headers added:     %s: %s (plain http only)\n", host, strings.Join(slices.Sorted(maps.Keys(r.Net.InjectHeaders[host])), ", "))
	}
}

// This file is `pid doctor`: what this machine gives pid, for a person: the sandbox bash
// runs in, the same facts initialize reports as capabilities.experimental.pid.sandbox, and
// the keys pid login saved (their names only).

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/sandbox"
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

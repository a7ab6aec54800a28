//go:build !linux

// This file is the sandbox on systems other than Linux: there is none, so a sandboxed call
// fails closed.

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

const reason = "pid's sandbox needs Linux (Landlock and user namespaces)"

// Probe reports that no sandbox is available here.
func Probe() Capability {
	if c := pretend.Load(); c != nil {
		return *c
	}
	return Capability{Reason: reason}
}

// Cmd is a sandboxed command; see the Linux version.
type Cmd struct {
	*exec.Cmd
	NetworkCut string
}

// Prepare fails: there is no sandbox here.
func Prepare(pol Policy, argv []string, dir string, env []string) (*Cmd, error) {
	return nil, errors.New(reason)
}

// Started is never reached here.
func (c *Cmd) Started() error { return nil }

// Close is never reached here.
func (c *Cmd) Close() {}

// Main fails: there is no helper here.
func Main(args []string) int {
	os.Stderr.WriteString("pid sandbox-exec: " + reason + "\n")
	return 125
}

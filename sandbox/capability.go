// This file is what the sandbox shows the same on every system: the Capability Probe
// reports, and the subcommand that runs the helper (which exists on Linux only).

package sandbox

import "sync/atomic"

// HelperArg is the subcommand that runs the helper: `pid sandbox-exec -- ARGV...`.
const HelperArg = "sandbox-exec"

// Capability is what the kernel offers for a sandbox, as initialize's
// capabilities.experimental.pid.sandbox and `pid doctor` report it. Off Linux, Available is
// false and Reason says that the sandbox needs Linux.
type Capability struct {
	Available      bool `json:"available"`
	LandlockABI    int  `json:"landlockAbi"`
	UserNamespaces bool `json:"userNamespaces"`
	// NetworkNamespaces says a network namespace can be made; without one, the network is
	// cut with Landlock's TCP rules and a seccomp filter that lets only Unix sockets be
	// made (which cut the sandbox's own loopback too).
	NetworkNamespaces bool `json:"networkNamespaces"`
	// PidNamespaces says a PID namespace can be made: every process a command starts ends
	// with it.
	PidNamespaces bool   `json:"pidNamespaces"`
	Reason        string `json:"reason,omitempty"`
}

// pretend, when set, is what Probe reports instead of this kernel's answer (PretendForTest).
var pretend atomic.Pointer[Capability]

// PretendForTest makes Probe report c until the returned restore is called, so that tests
// of other packages can see what a kernel without Landlock (or namespaces) gets: a refusal,
// never an unsandboxed run. It only narrows: with c.Available false nothing more may run.
// For tests only; not safe to overlap with another PretendForTest.
func PretendForTest(c Capability) (restore func()) {
	pretend.Store(&c)
	return func() { pretend.Store(nil) }
}

// This file is what the sandbox shows the same on every system: the Capability Probe
// reports, and the subcommand that runs the helper (which exists on Linux only).

package sandbox

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
	NetworkNamespaces bool   `json:"networkNamespaces"`
	Reason            string `json:"reason,omitempty"`
}

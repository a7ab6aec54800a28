// This file holds the file tools' side of the sandbox: the session's settings handed to
// the launcher that starts bash's commands (package workspace/launch, which contains them
// with the kernel), and the names bash's details give what it reports.

package tools

import "github.com/pid-agent/pid/workspace/launch"

// SandboxConfig is how a session's bash commands are contained (launch.Config).
type SandboxConfig = launch.Config

// SandboxDetails is bash's details.sandbox: how the command was contained (launch.Details).
type SandboxDetails = launch.Details

// UseSandbox sets how the workspace's bash commands are contained. Without it they run in
// the default sandbox (workspace-write, network off).
//
// Contract: called at most once, before the session's first tool call.
func (w *Workspace) UseSandbox(c SandboxConfig) { w.launcher.Configure(c) }

// ForceReadOnlySandbox makes the workspace's bash commands run in a read-only sandbox (on),
// whatever the settings say, or lifts that (off): a mode that must not change files (plan)
// sets it. Safe for concurrent use; it applies from the next command on.
func (w *Workspace) ForceReadOnlySandbox(on bool) { w.launcher.ForceReadOnly(on) }

// BashSandboxed reports whether a bash call would run contained by the kernel
// (launch.Launcher.Sandboxed; unsandboxed is the value of the call's "unsandboxed"
// argument). A mode that lets sandboxed commands run without asking calls it. Safe for
// concurrent use.
func (w *Workspace) BashSandboxed(unsandboxed bool) bool { return w.launcher.Sandboxed(unsandboxed) }

// ForgetHost undoes an "allow always" answer about host for the workspace's commands: the
// person revoked it. Open connections go on. Safe for concurrent use.
func (w *Workspace) ForgetHost(host string) { w.launcher.ForgetHost(host) }

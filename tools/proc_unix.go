//go:build unix

// This file puts bash's shell in a process group of its own and signals that group, so an
// abort reaches every process the command started.

package tools

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the command's process the leader of a new process group.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to every process of the group led by pid. A group that is already
// gone is not an error worth reporting, so nothing is returned.
func signalGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

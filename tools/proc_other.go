//go:build !unix

// This file is the fallback of proc_unix.go where there are no process groups: only the
// shell itself is killed.

package tools

import (
	"os"
	"os/exec"
	"syscall"
)

func ownGroup(cmd *exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

//go:build unix && !linux

// This file is proc_linux.go's fallback for the other Unix systems: no parent-death signal
// there, so a child of a killed pid is ended by the watchdog only.

package procgroup

import "syscall"

// parentDeath sets nothing and reports false: the child can start on any thread.
func parentDeath(*syscall.SysProcAttr) bool { return false }

// hasLiveMember answers true: without /proc, kill(-pgid, 0) is the only test there is.
func hasLiveMember(int) bool { return true }

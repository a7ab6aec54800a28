package mcp

import "syscall"

// diesWithTest makes a child process get SIGKILL when the test binary dies.
func diesWithTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

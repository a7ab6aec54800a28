//go:build !linux

package mcp

import "syscall"

// diesWithTest sets nothing: there is no parent-death signal here (the test's cleanup
// still kills the child).
func diesWithTest() *syscall.SysProcAttr { return nil }

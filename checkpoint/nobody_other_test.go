//go:build !unix

package checkpoint

import "syscall"

// nobodyAttr sets nothing: there is no uid to switch to here (the tests that need it are
// run on Linux).
func nobodyAttr() *syscall.SysProcAttr { return nil }

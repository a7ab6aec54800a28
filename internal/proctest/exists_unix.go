//go:build unix

package proctest

import "syscall"

// exists reports whether process pid exists, zombies included (kill -0).
func exists(pid int) bool { return syscall.Kill(pid, 0) == nil }

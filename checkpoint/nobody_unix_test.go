//go:build unix

package checkpoint

import "syscall"

// nobodyAttr makes a child process run as the user nobody (uid and gid 65534).
func nobodyAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// This file is the network's last cut, for a kernel that gives no network namespace: a
// seccomp filter on the helper's thread (inherited by the command) that lets socket(2)
// make only Unix sockets and refuses io_uring (which can make sockets too). Landlock's TCP
// rules alone would leave UDP (before ABI 10) and other families open.

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch is this build's AUDIT_ARCH_* value; 0 where the filter is not written for it.
func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// seccompNoNetwork installs the filter on the calling thread; no_new_privs must be set. A
// system call of another architecture (a 32-bit program, x32) fails with EPERM whatever it
// is, so it cannot go around the filter.
func seccompNoNetwork() error {
	arch := auditArch()
	if arch == 0 {
		return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		allow = unix.SECCOMP_RET_ALLOW
		// Offsets in struct seccomp_data: nr, arch, instruction pointer, args (the low
		// half of args[0] on a little-endian machine).
		offNr, offArch, offArg0 = 0, 4, 16
	)
	filter := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: arch, Jt: 1, Jf: 0},
		{Code: ret, K: deny},                                  // another architecture
		{Code: ld, K: offNr},                                  //
		{Code: jge, K: 0x40000000, Jt: 0, Jf: 1},              // x32 system calls
		{Code: ret, K: deny},                                  //
		{Code: jeq, K: unix.SYS_IO_URING_SETUP, Jt: 0, Jf: 1}, //
		{Code: ret, K: deny},                                  //
		{Code: jeq, K: unix.SYS_SOCKET, Jt: 1, Jf: 0},         //
		{Code: ret, K: allow},                                 // anything else
		{Code: ld, K: offArg0},                                // socket's domain
		{Code: jeq, K: unix.AF_UNIX, Jt: 0, Jf: 1},            //
		{Code: ret, K: allow},                                 //
		{Code: ret, K: deny},                                  //
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp: %v", e)
	}
	runtime.KeepAlive(filter)
	return nil
}

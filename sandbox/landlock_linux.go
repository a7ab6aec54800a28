// This file speaks Landlock's three system calls directly (golang.org/x/sys/unix has their
// numbers and types): reading the ABI version, and, in the helper only, building a ruleset
// and restricting the calling thread just before it executes the command.

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version, 0 when it has none (or it is off).
func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// File rights, the only ones a rule on a file (not a folder) may carry.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// accessFSResolveUnix is LANDLOCK_ACCESS_FS_RESOLVE_UNIX (ABI 9): connecting to a Unix
// socket by its path, when the process listening is outside the sandbox.
const accessFSResolveUnix = 1 << 16

const readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR

// fsRights returns the file system rights Landlock handles at ABI abi.
func fsRights(abi int) uint64 {
	r := uint64(0x1fff) // ABI 1: execute .. make_sym
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		r |= accessFSResolveUnix // granted nowhere: no connect to a socket outside the sandbox
	}
	return r
}

// devFiles are the device files every command may read and write.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// landlockRuleset is the Landlock ruleset of pol: read and execute everywhere, every right
// beneath pol.Writable, reading and writing the usual device files; TCP bind and connect
// refused when the network is off without a namespace of its own; signals and abstract
// sockets scoped to the sandbox at ABI 6 and later. It returns the ruleset's descriptor.
func landlockRuleset(pol Policy, abi int) (int, error) {
	handled := fsRights(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	if !pol.Network && !pol.NetNS && abi >= 4 {
		// Without a network namespace; the seccomp filter (seccomp_linux.go) cuts the rest.
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %v", e)
	}
	rs := int(fd)
	add := func(path string, rights uint64, mustExist bool) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if !mustExist && errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("%s: %v", path, err)
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= fileRights
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights & handled, Parent_fd: int32(pfd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %v", path, e)
		}
		return nil
	}
	err := add("/", readRights, true)
	for _, w := range pol.Writable {
		if err == nil {
			err = add(w, handled, true)
		}
	}
	for _, d := range devFiles {
		if err == nil {
			err = add(d, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, false)
		}
	}
	if err == nil {
		err = add("/dev/pts", unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV|unix.LANDLOCK_ACCESS_FS_READ_DIR, false)
	}
	if err != nil {
		unix.Close(rs)
		return -1, err
	}
	return rs, nil
}

// landlockRestrict restricts the calling thread (locked to its goroutine, which then
// executes the command) with the ruleset rs. no_new_privs must be set.
func landlockRestrict(rs int) error {
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", e)
	}
	return nil
}

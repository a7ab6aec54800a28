// This file is the helper's code (`pid sandbox-exec -- ARGV...`), which runs in the child
// the daemon started in new user, mount and (network off) network namespaces: it makes the
// protected paths read-only and the secret ones empty, brings the loopback up, restricts
// itself with Landlock, drops every capability, and executes the command. Any failure
// is written to the report pipe (fd 3) and ends the helper with code 125 before anything
// runs.

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// policyEnv carries the Policy's JSON to the helper, which removes it before the exec.
const policyEnv = "PID_SANDBOX_POLICY"

// reportFD is the helper's end of the report pipe (Cmd.ExtraFiles[0]).
const reportFD = 3

// helperFailed is the helper's exit code when it could not set the sandbox up.
const helperFailed = 125

func init() {
	// Any binary that links this package (pid, and the tests of the packages that run bash)
	// is its own helper: intercept before main, and before the tests' flags are parsed.
	if len(os.Args) > 1 && os.Args[1] == HelperArg && os.Getenv(policyEnv) != "" {
		os.Exit(Main(os.Args[2:]))
	}
}

// Main is the helper: args are "--" then the command's argv (argv[0] an absolute path). It
// returns only on failure, with the exit code; otherwise the command replaces it.
//
// Contract: called only in a process the daemon started through Prepare (its environment
// holds the policy, fd 3 is the report pipe), before any other goroutine does work.
func Main(args []string) int {
	if len(args) == 1 && args[0] == "--probe" {
		return 0 // Probe's child: the namespaces could be made
	}
	runtime.LockOSThread() // never unlocked: the restricted thread is the one that executes
	report := os.NewFile(reportFD, "report")
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if report != nil {
			if _, err := report.WriteString(msg); err == nil {
				return helperFailed
			}
		}
		fmt.Fprintln(os.Stderr, "pid sandbox-exec:", msg)
		return helperFailed
	}
	unix.CloseOnExec(reportFD)
	raw, ok := os.LookupEnv(policyEnv)
	os.Unsetenv(policyEnv)
	if !ok {
		return fail("no policy (pid sandbox-exec is started by pid itself)")
	}
	var pol Policy
	if err := json.Unmarshal([]byte(raw), &pol); err != nil {
		return fail("bad policy: %v", err)
	}
	if len(args) < 2 || args[0] != "--" {
		return fail("usage: pid sandbox-exec -- ARGV...")
	}
	argv := args[1:]
	abi := landlockABI()
	if abi < 1 {
		return fail("the kernel has no Landlock")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: %v", err)
	}
	// Our mounts stay in this namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("making the mounts private: %v", err)
	}
	for _, p := range pol.Protected {
		if err := bindReadOnly(p, p); err != nil {
			return fail("making %s read-only: %v", p, err)
		}
	}
	for _, p := range pol.Hidden {
		if err := hide(p); err != nil {
			return fail("hiding %s: %v", p, err)
		}
	}
	if pol.NetNS {
		if err := loopbackUp(); err != nil {
			return fail("bringing the loopback up: %v", err)
		}
	}
	rs, err := landlockRuleset(pol, abi)
	if err != nil {
		return fail("%v", err)
	}
	if err := landlockRestrict(rs); err != nil {
		return fail("%v", err)
	}
	unix.Close(rs)
	if !pol.Network && !pol.NetNS {
		if err := seccompNoNetwork(); err != nil {
			return fail("cutting the network without a network namespace: %v", err)
		}
	}
	if err := dropCaps(); err != nil {
		return fail("dropping capabilities: %v", err)
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	return fail("cannot run %s: %v", argv[0], err)
}

// bindReadOnly mounts src on dst read-only, keeping the flags the kernel locks in a user
// namespace (nosuid, nodev, ...), which a remount must repeat.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range [][2]uintptr{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	return unix.Mount("", dst, "", flags, "")
}

// hide covers p: an empty read-only folder over a folder, /dev/null (read-only) over a file
// or a socket (a connect to it then fails).
func hide(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		if err == unix.ENOENT {
			return nil // under a folder covered already
		}
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500")
	}
	return bindReadOnly("/dev/null", p)
}

// loopbackUp brings up lo, which a new network namespace has down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropCaps empties the calling thread's capabilities (ambient, bounding, then the rest), so
// the command keeps none in the namespace, even when it runs as uid 0 there.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break // past the last capability
			}
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

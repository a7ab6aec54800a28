// This file is the helper's code (`pid sandbox-exec -- ARGV...`), which runs in the child
// the daemon started in new user, mount, PID and (network off) network namespaces: it
// makes the shared places (/tmp, /run...) private and empty, the protected paths read-only
// and the secret ones empty, brings the loopback up, sets the limits, restricts itself with
// Landlock, drops every capability, and runs the command as its child, staying as the PID
// namespace's init until the command ends (so that nothing it started outlives it). Any
// failure is written to the report pipe (fd 3) and ends the helper with code 125 before
// anything runs.

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// policyEnv says the helper was started by pid (its value: "fd", the policy comes on
// policyFD; "probe" for Probe's child); the helper removes it before the command runs.
const policyEnv = "PID_SANDBOX_POLICY"

// reportFD is the helper's end of the report pipe (Cmd.ExtraFiles[0]), policyFD the
// policy pipe's (ExtraFiles[1]).
const (
	reportFD = 3
	policyFD = 4
)

// helperFailed is the helper's exit code when it could not set the sandbox up.
const helperFailed = 125

func init() {
	// Any binary that links this package (pid, and the tests of the packages that run bash)
	// is its own helper: intercept before main, and before the tests' flags are parsed.
	switch {
	case len(os.Args) > 1 && os.Args[1] == HelperArg && os.Getenv(policyEnv) != "":
		os.Exit(Main(os.Args[2:]))
	case len(os.Args) > 2 && os.Args[1] == HelperArg && os.Args[2] == "--holder":
		os.Exit(terminalMain(os.Args[2:])) // a command line run by an ACP client's terminal
	case len(os.Args) > 1 && os.Args[1] == HolderArg && os.Getenv(holdEnv) != "":
		os.Exit(holdMain())
	}
}

// Main is the helper: args are "--"; the policy and the command (its argv, argv[0] an
// absolute path, its environment and folder) come on the policy pipe. It returns only on
// failure, with the exit code; otherwise the command replaces it, or, as the init of a PID
// namespace (Policy.PidNS), it waits for the command and exits as it did.
//
// Contract: called only in a process the daemon started through Prepare (its environment
// holds the policy, fd 3 is the report pipe), before any other goroutine does work.
func Main(args []string) int {
	if len(args) == 1 && args[0] == "--probe" {
		return 0 // Probe's child: the namespaces could be made
	}
	if len(args) > 0 && args[0] == "--holder" {
		return terminalMain(args) // a terminal's command line (Holder.TerminalArgv)
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
	_, ok := os.LookupEnv(policyEnv)
	os.Unsetenv(policyEnv)
	if !ok {
		return fail("no policy (pid sandbox-exec is started by pid itself)")
	}
	if len(args) != 1 || args[0] != "--" {
		return fail("usage: pid sandbox-exec -- (the command comes from pid)")
	}
	// The daemon writes the policy and the command while this process starts (or once a
	// command comes, when it started this one ahead), and closes the pipe.
	unix.CloseOnExec(policyFD)
	pf := os.NewFile(policyFD, "policy")
	raw, err := io.ReadAll(io.LimitReader(pf, 16<<20))
	pf.Close()
	if err != nil || len(raw) == 0 {
		return fail("no policy (%v)", err)
	}
	var l launch
	if err := json.Unmarshal(raw, &l); err != nil {
		return fail("bad policy: %v", err)
	}
	pol, argv, env, wd := l.Policy, l.Argv, l.Env, l.Dir
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) || !filepath.IsAbs(wd) {
		return fail("bad command: %q in %q", argv, wd)
	}
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
	if err := privatize(pol); err != nil {
		return fail("%v", err)
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
	// The folder the command runs in, by its path, once the mounts are made (they are what
	// the path leads through).
	if err := unix.Chdir(wd); err != nil {
		return fail("entering %s: %v", wd, err)
	}
	if pol.PidNS {
		// The namespace's own processes only; a container's /proc may refuse a new mount
		// (parts of it covered), and then the host's stays, which the command can read
		// but not act on (Landlock's scopes).
		_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	if pol.NetNS {
		if err := loopbackUp(); err != nil {
			return fail("bringing the loopback up: %v", err)
		}
	}
	if err := setLimits(pol); err != nil {
		return fail("setting the limits: %v", err)
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
	if !pol.PidNS {
		err = syscall.Exec(argv[0], argv, env)
		return fail("cannot run %s: %v", argv[0], err)
	}
	return initCommand(argv, env, report, fail)
}

// privatize covers the private places with empty tmpfs and binds back what the command
// needs in them: descriptors of those paths are opened first, the places covered, then
// each path is bound from its descriptor at the same place.
func privatize(pol Policy) error {
	fds := make([]int, len(pol.Rebind))
	isDir := make([]bool, len(pol.Rebind))
	for i, p := range pol.Rebind {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("keeping %s: %v", p, err)
		}
		fds[i] = fd
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("keeping %s: %v", p, err)
		}
		isDir[i] = st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, d := range pol.Private {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
			return fmt.Errorf("making %s private: %v", d, err)
		}
	}
	for i, p := range pol.Rebind {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("binding %s back: %v", p, err)
		}
		if isDir[i] {
			err := os.Mkdir(p, 0o755)
			if err != nil && !os.IsExist(err) {
				return fmt.Errorf("binding %s back: %v", p, err)
			}
		} else if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return fmt.Errorf("binding %s back: %v", p, err)
		} else {
			f.Close()
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fds[i]), p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding %s back: %v", p, err)
		}
	}
	for _, l := range pol.Links {
		if err := os.MkdirAll(filepath.Dir(l[0]), 0o755); err == nil {
			os.Symlink(l[1], l[0]) // best effort: a link that cannot be made is only missing
		}
	}
	// No write right there: Landlock grants none outside the writable folders.
	return nil
}

// setLimits sets the command's limits (the daemon has moved the helper into the command's
// cgroup, when there is one, before it gave the policy): RLIMIT_DATA caps each process's memory (its
// heap and private writable mappings, not the address space it reserves, which V8 and Go
// reserve plenty of); RLIMIT_NPROC the processes and threads of the command's user in its
// user namespace (counted per user namespace since Linux 5.14: this command's alone; not
// for a user mapped to root, whom the kernel exempts).
func setLimits(pol Policy) error {
	if pol.MemoryMB > 0 {
		n := uint64(pol.MemoryMB) << 20
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("memory: %v", err)
		}
	}
	if pol.Processes > 0 {
		n := uint64(pol.Processes)
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("processes: %v", err)
		}
	}
	return nil
}

// forwarded are the signals the helper, as init, passes on to every process of its
// namespace (an init gets from outside only the signals it handles).
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// initCommand runs argv as the child of the helper, which is the init of the command's PID
// namespace: it says on the report pipe that the command started (a 0 byte), forwards
// signals, reaps every process that ends in the namespace, and, once the command has ended,
// exits with its code (128+N after signal N, whose number it writes on the report pipe
// first). Its exit ends every process left in the namespace.
func initCommand(argv, env []string, report *os.File, fail func(string, ...any) int) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return fail("cannot run %s: %v", argv[0], err)
	}
	report.Write([]byte{0})
	go func() {
		for s := range sigs {
			unix.Kill(-1, s.(syscall.Signal)) // every process of the namespace but init
		}
	}()
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return helperFailed // ECHILD: cannot happen while the command lives
		}
		if wpid != pid {
			continue // an orphan of the command, reaped
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			report.Write([]byte{byte(ws.Signal())})
			return 128 + int(ws.Signal())
		}
	}
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

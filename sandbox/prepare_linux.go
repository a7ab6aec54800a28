// This file is the daemon's side: Probe (what this kernel can give, asked once) and
// Prepare (the exec.Cmd that starts the helper in its namespaces, with the policy).

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/pid-agent/pid/internal/procgroup"
)

var probe struct {
	once sync.Once
	cap  Capability
}

// Probe reports what this kernel can give, trying it once per process (a child in new user,
// mount and network namespaces, a few milliseconds); later calls return the same answer.
// Safe for concurrent use.
func Probe() Capability {
	if c := pretend.Load(); c != nil {
		return *c
	}
	probe.once.Do(func() { probe.cap = probeNow() })
	return probe.cap
}

func probeNow() Capability {
	c := Capability{LandlockABI: landlockABI()}
	try := func(flags uintptr) error {
		cmd := exec.Command(HelperPath(), HelperArg, "--probe")
		cmd.SysProcAttr = nsAttr(flags)
		cmd.Env = []string{policyEnv + "=probe"}
		return cmd.Run()
	}
	// The PID namespace is tried with the others, and given up alone when refused.
	var err error
	for _, pidns := range []uintptr{syscall.CLONE_NEWPID, 0} {
		if err = try(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | pidns); err == nil {
			c.UserNamespaces, c.NetworkNamespaces = true, true
		} else if err2 := try(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | pidns); err2 == nil {
			c.UserNamespaces, err = true, nil
		} else {
			err = err2
		}
		if c.UserNamespaces {
			c.PidNamespaces = pidns != 0
			break
		}
	}
	var why []string
	if c.LandlockABI < 1 {
		why = append(why, "the kernel has no Landlock (Linux 5.13 or later with lsm=landlock is needed)")
	}
	if !c.UserNamespaces {
		why = append(why, fmt.Sprintf("user namespaces cannot be made (%v; see /proc/sys/kernel/unprivileged_userns_clone and /proc/sys/user/max_user_namespaces)", err))
	}
	if !c.NetworkNamespaces && c.UserNamespaces && auditArch() == 0 {
		why = append(why, "no network namespace, and no seccomp filter for this architecture, to cut the network")
	}
	c.Available = len(why) == 0
	c.Reason = strings.Join(why, "; ")
	return c
}

// noNetNS makes Prepare cut the network without a network namespace, as on a kernel that
// gives none (set by tests of that fallback only); noPidNS likewise runs the command without
// a PID namespace.
var noNetNS, noPidNS bool

// HelperPath returns the program that is the helper: this very binary.
func HelperPath() string { return "/proc/self/exe" }

// nsAttr returns the process attributes of a helper in new namespaces (flags), mapping the
// daemon's user and group to themselves, and keeping across its exec the capabilities it
// needs there to mount and to bring the loopback up (it drops them before the command).
func nsAttr(flags uintptr) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{capSysAdmin, capNetAdmin, capSetpcap},
	}
}

const (
	capSetpcap  = 8
	capNetAdmin = 12
	capSysAdmin = 21
)

// Cmd is a command that runs in the sandbox: start it (StartGroup; or, for a Cmd of Prepare or
// PrepareShape, exec.Cmd.Start or procgroup.StartGroup on its exec.Cmd), give the helper its policy (SendPolicy, unless Prepare had it), then
// call Started.
type Cmd struct {
	*exec.Cmd
	// NetworkCut says how the network is off: "namespace", or "seccomp" (Landlock's TCP
	// rules and a seccomp filter, no network namespace); "" when on.
	NetworkCut string
	// PidNS says the command runs in a PID namespace of its own (nothing it starts
	// outlives it).
	PidNS bool
	// ProcessesBy says what caps the command's processes: "cgroup v2", "cgroup v1" (the
	// pids controller) or "rlimit" (RLIMIT_NPROC); "none" for root (whom RLIMIT_NPROC does
	// not hold) without a cgroup; "" when no limit was asked for.
	ProcessesBy string

	shape  Shape
	argv   []string // the command, its folder and environment, sent with the policy
	dir    string
	env    []string
	netNS  bool
	abi    int
	cgroup string     // the command's cgroup, removed by Finish or Close
	move   chan error // Begin's move into the cgroup
	r, w   *os.File   // the report pipe
	pr, pw *os.File   // the policy pipe
	policy *Policy    // Prepare's, sent by Started
	holder *Holder    // the session's holder that starts the helper; nil: started directly
	pid    int        // the helper's process id, once started
}

// Shape is what the helper must be started with, before its policy is known: whether the
// network is on (the namespaces it is cloned into) and its process limit (the cgroup it
// joins).
type Shape struct {
	Network   bool
	Processes int
}

// Prepare returns the command that runs argv (argv[0] an absolute path) in dir with the
// environment env, inside the sandbox pol. It fails, and nothing may run, when the kernel
// cannot give the sandbox (the error says what is missing).
//
// Contract: the caller sets Stdin/Stdout/Stderr, may set SysProcAttr's process-group and
// parent-death fields (not the others), starts the command, then calls Started once; if the
// start fails it calls Close instead.
func Prepare(pol Policy, argv []string, dir string, env []string) (*Cmd, error) {
	c, err := PrepareShape(Shape{Network: pol.Network, Processes: pol.Processes}, argv, dir, env)
	if err != nil {
		return nil, err
	}
	c.policy = &pol
	return c, nil
}

// PrepareShape is Prepare for a caller that makes the policy while the helper starts (the
// helper's start, a few milliseconds, then overlaps the daemon's look at the protected
// paths), or starts the helper ahead of any command (argv nil, given later with Retarget):
// it gives the policy with SendPolicy, or AbortPolicy, after starting the helper and before
// Started. The helper is started in new namespaces of its own (user, mount, PID and, with
// the network off, network); Holder.Prepare starts it in a session's instead.
func PrepareShape(sh Shape, argv []string, dir string, env []string) (*Cmd, error) {
	c := Probe()
	if !c.Available {
		return nil, errors.New(c.Reason)
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS)
	pidNS := c.PidNamespaces && !noPidNS
	if pidNS {
		flags |= syscall.CLONE_NEWPID
	}
	netNS := !sh.Network && c.NetworkNamespaces && !noNetNS
	if netNS {
		flags |= syscall.CLONE_NEWNET
	}
	cmd, err := newCmd(sh, c.LandlockABI, pidNS, netNS, argv, dir, env)
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = nsAttr(flags)
	return cmd, nil
}

// newCmd returns a Cmd of shape sh whose helper is yet to be started, with its pipes and
// (for root's commands) its cgroup: the exec.Cmd that starts it directly, which a Holder
// uses only for its Stdout and Stderr.
func newCmd(sh Shape, abi int, pidNS, netNS bool, argv []string, dir string, env []string) (*Cmd, error) {
	cmd := &Cmd{shape: sh, abi: abi, argv: argv, dir: dir, env: env, PidNS: pidNS, netNS: netNS}
	if !sh.Network {
		cmd.NetworkCut = "seccomp"
		if netNS {
			cmd.NetworkCut = "namespace"
		}
	}
	if sh.Processes > 0 {
		cmd.ProcessesBy = "rlimit"
		// RLIMIT_NPROC holds for every user but root, whom the kernel exempts: root's
		// commands get a cgroup (when one can be made), which costs the helper a move
		// into it (a few hundred microseconds, more on a loaded machine).
		if os.Geteuid() == 0 {
			dir, version, err := newCommandCgroup(sh.Processes)
			if err != nil {
				return nil, err
			}
			cmd.cgroup, cmd.ProcessesBy = dir, "cgroup "+version
			if dir == "" {
				cmd.ProcessesBy = "none"
			}
		}
	}
	var err error
	if cmd.r, cmd.w, err = os.Pipe(); err == nil {
		if cmd.pr, cmd.pw, err = os.Pipe(); err != nil {
			cmd.r.Close()
			cmd.w.Close()
		}
	}
	if err != nil {
		removeCgroup(cmd.cgroup)
		return nil, err
	}
	// The command comes on the policy pipe: the helper starts the same for any command.
	cmd.Cmd = exec.Command(HelperPath(), HelperArg, "--")
	cmd.Dir = "/"
	cmd.Env = []string{policyEnv + "=fd"}
	cmd.ExtraFiles = []*os.File{cmd.w, cmd.pr} // fds 3 and 4
	return cmd, nil
}

// StartGroup starts the helper in a process group of its own that dies with pid (directly, or
// through the session's Holder when Holder.Prepare made the Cmd), and returns the group.
// Contract: called once, after the caller set Stdout and Stderr (*os.File for a Holder's
// Cmd; Stdin is /dev/null there) and before Begin; on failure nothing started, and the
// caller calls Close.
func (c *Cmd) StartGroup() (*procgroup.Group, error) {
	if c.holder != nil {
		g, pid, err := c.holder.start(c)
		if err != nil {
			return nil, err
		}
		c.pid = pid
		return g, nil
	}
	g, err := procgroup.StartGroup(c.Cmd)
	if err != nil {
		return nil, err
	}
	c.pid = c.Process.Pid
	return g, nil
}

// Pid returns the helper's process id (the id of its process group), once started; 0
// before.
func (c *Cmd) Pid() int {
	if c.pid == 0 && c.Cmd != nil && c.Process != nil {
		return c.Process.Pid // started with exec.Cmd.Start
	}
	return c.pid
}

// Retarget sets the command a helper started ahead (PrepareShape with no argv) runs: argv
// (argv[0] an absolute path) in dir with the environment env. Contract: called before
// SendPolicy.
func (c *Cmd) Retarget(argv []string, dir string, env []string) {
	c.argv, c.dir, c.env = argv, dir, env
}

// Shape returns the shape the helper was started with.
func (c *Cmd) Shape() Shape { return c.shape }

// Begin moves the started helper into the command's cgroup, when it has one, in the
// background: SendPolicy waits for the move, so the caller may make the policy meanwhile.
// Contract: called at most once, right after the start, before SendPolicy.
func (c *Cmd) Begin() {
	pid := c.Pid()
	if c.cgroup == "" || pid == 0 || c.move != nil {
		return
	}
	done := make(chan error, 1)
	c.move = done
	go func() { done <- moveToCgroup(c.cgroup, pid) }()
}

// joined waits for Begin's move, or makes it when Begin was not called.
func (c *Cmd) joined() error {
	switch {
	case c.move != nil:
		return <-c.move
	case c.cgroup != "" && c.Pid() != 0:
		return moveToCgroup(c.cgroup, c.Pid())
	}
	return nil
}

// SendPolicy gives the started helper its policy (whose Network must be the Shape's), which
// it waits for before it does anything; the helper is in the command's cgroup by then.
// Contract: called once, after the start, before Started, instead of AbortPolicy.
func (c *Cmd) SendPolicy(pol Policy) error {
	defer c.pw.Close()
	if pol.Network != c.shape.Network {
		return errors.New("the policy's network is not the one the helper was started with")
	}
	if err := c.joined(); err != nil {
		return fmt.Errorf("moving the helper into the command's cgroup: %v", err)
	}
	pol.ABI, pol.PidNS, pol.NetNS = c.abi, c.PidNS, c.netNS
	if len(c.argv) == 0 {
		return errors.New("no command for the helper")
	}
	raw, err := json.Marshal(launch{Policy: pol, Argv: c.argv, Env: c.env, Dir: c.dir})
	if err != nil {
		return err
	}
	_, err = c.pw.Write(raw)
	return err
}

// AbortPolicy tells the started helper there is no policy: it runs nothing and exits with
// code 125. Contract: called at most once, after the start, instead of SendPolicy.
func (c *Cmd) AbortPolicy() {
	if c.move != nil {
		<-c.move
	}
	c.pw.Close()
}

// Started waits until the helper has started the command (nil) or failed to set the
// sandbox up (its reason; the helper then exits with code 125 and nothing ran). The helper
// says it started with a 0 byte (as an init), or by closing the pipe as it executes the
// command.
func (c *Cmd) Started() error {
	if c.policy != nil {
		pol := *c.policy
		c.policy = nil
		if err := c.SendPolicy(pol); err != nil {
			c.w.Close()
			c.pr.Close()
			return err
		}
	}
	c.w.Close()
	c.pr.Close()
	var first [1]byte
	n, err := c.r.Read(first[:])
	if n == 1 && first[0] == 0 {
		return nil // the rest (a signal's number) comes when the command ends: Signaled
	}
	defer c.r.Close()
	if n == 0 {
		if err == io.EOF {
			return nil
		}
		return err
	}
	rest, err := io.ReadAll(io.LimitReader(c.r, 4096))
	if err != nil {
		return err
	}
	return errors.New(string(first[:n]) + string(rest))
}

// Finish releases what the command held (the report pipe, its cgroup) and returns the
// signal that ended the command, when the helper ran it as an init and a signal did (the
// helper then exits with 128+N). Contract: called once, after Wait, instead of Close.
func (c *Cmd) Finish() (syscall.Signal, bool) {
	defer c.Close()
	var b [1]byte
	if n, _ := c.r.Read(b[:]); n == 1 && b[0] != 0 {
		return syscall.Signal(b[0]), true
	}
	return 0, false
}

// Close releases the report pipe and the cgroup of a command that did not start (or that
// Finish is done with). Safe to call again.
func (c *Cmd) Close() {
	c.w.Close()
	c.r.Close()
	c.pr.Close()
	c.pw.Close()
	if c.cgroup != "" {
		removeCgroup(c.cgroup)
		c.cgroup = ""
	}
}

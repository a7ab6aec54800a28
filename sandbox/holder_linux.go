// This file is the daemon's side of a session's namespace holder (StartHolder): one
// long-lived process per session, in a user namespace and (network off or allowlist) a
// network namespace of its own with the loopback up, which starts every sandboxed command's
// helper of the session as its own child, so that all of them share that network: a server
// one command starts on 127.0.0.1 is reachable by the session's later commands and by
// nothing outside. The daemon cannot do that itself: a multithreaded Go process cannot
// setns(CLONE_NEWUSER), and joining the network namespace needs CAP_SYS_ADMIN in the user
// namespace owning it. The holder's code is in hold_linux.go; this side sends it requests on
// a socketpair (the helper's descriptors with SCM_RIGHTS) and reads back each helper's
// process id and, once the holder has reaped it, its wait status.

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pid-agent/pid/internal/procgroup"
)

// HolderArg is the subcommand that runs a session's namespace holder: `pid sandbox-hold`,
// started by pid only (its environment says how, holdEnv; fd 3 is its control socket).
const HolderArg = "sandbox-hold"

// holdEnv says the holder was started by pid, and how: comma-separated words, "net" (a
// network namespace of its own: bring the loopback up), "proxy" (listen on 127.0.0.1:0 in
// it and pass the listening socket), "pidns" (the helpers get a PID namespace each).
const holdEnv = "PID_SANDBOX_HOLD"

// holdMsg is one message between the daemon (or a terminal's `pid sandbox-exec --holder`)
// and the holder, JSON in one SOCK_SEQPACKET datagram; descriptors travel with it.
type holdMsg struct {
	Op string `json:"op"`
	// ID matches a start request with its answer.
	ID int64 `json:"id,omitempty"`
	// Pid is a started helper's process id (as pid sees it: the holder shares pid's PID
	// namespace).
	Pid int `json:"pid,omitempty"`
	// Status is an ended helper's raw wait status.
	Status int `json:"status,omitempty"`
	// Port is the proxy listener's port (ready).
	Port int `json:"port,omitempty"`
	// Dir is the terminals' folder (terminals), Launch a launch file in it (run).
	Dir    string   `json:"dir,omitempty"`
	Launch string   `json:"launch,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	// Signal is a signal to forward (signal) or that ended the command (exit).
	Signal int `json:"signal,omitempty"`
	// Code is the command's exit code (exit, to a terminal).
	Code  int    `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// maxHoldMsg bounds one message (a terminal's argv is the largest).
const maxHoldMsg = 1 << 20

// sendHold writes m, with the descriptors fds, on c.
func sendHold(c *net.UnixConn, m holdMsg, fds ...int) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxHoldMsg {
		return errors.New("message too long")
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err = c.WriteMsgUnix(b, oob, nil)
	return err
}

// recvHold reads one message from c, and the descriptors that came with it (close-on-exec;
// the caller closes them). io.EOF when the peer closed.
func recvHold(c *net.UnixConn) (holdMsg, []int, error) {
	buf := make([]byte, maxHoldMsg)
	oob := make([]byte, unix.CmsgSpace(8*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return holdMsg{}, nil, err
	}
	var fds []int
	if oobn > 0 {
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err == nil {
			for _, cm := range cms {
				if f, err := unix.ParseUnixRights(&cm); err == nil {
					fds = append(fds, f...)
				}
			}
		}
	}
	if n == 0 && oobn == 0 {
		return holdMsg{}, nil, errEOF
	}
	var m holdMsg
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		closeAll(fds)
		return holdMsg{}, nil, fmt.Errorf("bad message from the holder: %v", err)
	}
	return m, fds, nil
}

// errEOF is recvHold's error once the peer closed its end.
var errEOF = errors.New("closed")

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// socketpair returns a connected pair of SOCK_SEQPACKET Unix sockets, close-on-exec.
func socketpair() (a, b *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "holder"), os.NewFile(uintptr(fds[1]), "holder"), nil
}

// unixConn returns f as a *net.UnixConn (f is closed: the conn holds its own descriptor).
func unixConn(f *os.File) (*net.UnixConn, error) {
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("not a Unix socket")
	}
	return uc, nil
}

// HolderConfig is what a session's holder is made for.
type HolderConfig struct {
	// Network says the session's commands use the host's network: the holder then makes
	// no network namespace. Otherwise it makes one, with the loopback up (where the kernel
	// gives none, the commands' network is cut by seccomp instead, and a server is
	// reachable by nothing, not even the session's other commands).
	Network bool
	// Proxy makes the holder listen on 127.0.0.1:0 in its network namespace and pass the
	// listening socket: ProxyListener. Only without Network.
	Proxy bool
}

// Holder is a session's namespace holder, started by StartHolder; Prepare makes the Cmds
// whose helpers it starts. Safe for concurrent use. Close it with the session.
type Holder struct {
	cfg   HolderConfig
	abi   int
	netNS bool // its own network namespace
	pidNS bool // each helper gets a PID namespace

	group *procgroup.Group
	conn  *net.UnixConn
	lis   net.Listener // the proxy's listener, or nil
	port  int
	done  chan struct{} // closed when the reader has ended (the holder is gone)
	wait  chan error    // the holder's exit, once

	// termMu makes ServeTerminals one at a time, so that a holder gets one terminals folder.
	termMu sync.Mutex

	// mu guards the fields below it.
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan holdMsg
	exits   map[int]chan holdMsg // by helper pid: its exit, once reaped
	gone    error                // why the holder is no more; nil while it serves
	term    string               // the terminals' folder, once served
	closed  bool
}

// StartHolder starts a session's namespace holder: a process in a user namespace and, as
// cfg says, a network namespace of its own (loopback up) and the proxy's listener in it.
// It fails when the kernel cannot give the sandbox, or the holder could not set itself up.
// The holder dies with pid (a parent-death signal, and the watchdog of procgroup), and
// every helper it started dies with it.
func StartHolder(cfg HolderConfig) (*Holder, error) {
	c := Probe()
	if !c.Available {
		return nil, errors.New(c.Reason)
	}
	if cfg.Network && cfg.Proxy {
		return nil, errors.New("a proxy needs a network namespace: not with the host's network")
	}
	h := &Holder{cfg: cfg, abi: c.LandlockABI, pidNS: c.PidNamespaces && !noPidNS,
		pending: map[int64]chan holdMsg{}, exits: map[int]chan holdMsg{}, done: make(chan struct{}), wait: make(chan error, 1)}
	h.netNS = !cfg.Network && c.NetworkNamespaces && !noNetNS
	var words []string
	flags := uintptr(syscall.CLONE_NEWUSER)
	if h.netNS {
		flags |= syscall.CLONE_NEWNET
		words = append(words, "net")
		if cfg.Proxy {
			words = append(words, "proxy")
		}
	}
	if h.pidNS {
		words = append(words, "pidns")
	}
	mine, theirs, err := socketpair()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(HelperPath(), HolderArg)
	cmd.Dir = "/"
	cmd.Env = []string{holdEnv + "=" + joinWords(words)}
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.Stderr = os.Stderr              // a panic of the holder reaches pid's log
	cmd.SysProcAttr = nsAttr(flags)
	h.group, err = procgroup.StartGroup(cmd)
	theirs.Close()
	if err != nil {
		mine.Close()
		return nil, fmt.Errorf("cannot start the sandbox's holder: %v", err)
	}
	go func() { h.wait <- h.group.Wait() }()
	if h.conn, err = unixConn(mine); err != nil {
		h.group.Signal(syscall.SIGKILL)
		<-h.wait
		return nil, err
	}
	m, fds, err := recvHold(h.conn)
	if err == nil && m.Error != "" {
		err = errors.New(m.Error)
	}
	if err == nil && cfg.Proxy && h.netNS {
		if len(fds) != 1 {
			err = errors.New("no listener from the holder")
		} else {
			f := os.NewFile(uintptr(fds[0]), "proxy")
			h.lis, err = net.FileListener(f)
			f.Close()
			fds = nil
			h.port = m.Port
		}
	}
	closeAll(fds)
	if err != nil {
		h.conn.Close()
		h.group.Signal(syscall.SIGKILL)
		<-h.wait
		return nil, fmt.Errorf("the sandbox's holder could not set up: %v", err)
	}
	go h.read()
	return h, nil
}

func joinWords(w []string) string {
	out := ""
	for i, s := range w {
		if i > 0 {
			out += ","
		}
		out += s
	}
	if out == "" {
		return "-"
	}
	return out
}

// read dispatches the holder's messages until its end: answers to start requests, and the
// helpers' exits. Then every waiter learns that the holder is gone.
func (h *Holder) read() {
	defer close(h.done)
	for {
		m, fds, err := recvHold(h.conn)
		closeAll(fds)
		if err != nil {
			h.mu.Lock()
			if h.closed {
				h.gone = errors.New("the session's sandbox was closed")
			} else {
				h.gone = fmt.Errorf("the sandbox's holder ended (%v)", err)
			}
			for id, ch := range h.pending {
				close(ch)
				delete(h.pending, id)
			}
			for pid, ch := range h.exits {
				close(ch)
				delete(h.exits, pid)
			}
			h.mu.Unlock()
			return
		}
		h.mu.Lock()
		switch m.Op {
		case "started":
			if m.Error == "" && m.Pid > 0 {
				// Its exit comes after this answer: the holder starts reaping only then.
				h.exits[m.Pid] = make(chan holdMsg, 1)
			}
			if ch := h.pending[m.ID]; ch != nil {
				ch <- m
				delete(h.pending, m.ID)
			}
		case "exit":
			if ch := h.exits[m.Pid]; ch != nil {
				ch <- m
				delete(h.exits, m.Pid)
			}
		}
		h.mu.Unlock()
	}
}

// Alive reports whether the holder still serves (it may have been killed).
func (h *Holder) Alive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone == nil && !h.closed
}

// NetworkNamespace reports whether the holder has a network namespace of its own.
func (h *Holder) NetworkNamespace() bool { return h.netNS }

// ProxyListener returns the listener the holder made on 127.0.0.1 in its network
// namespace (HolderConfig.Proxy), for pid to serve its proxy on, and the address commands
// reach it at; nil and "" without one. The caller owns the listener (Close closes it too).
func (h *Holder) ProxyListener() (net.Listener, string) {
	if h.lis == nil {
		return nil, ""
	}
	return h.lis, "127.0.0.1:" + strconv.Itoa(h.port)
}

// Prepare returns a Cmd whose helper the holder starts (Cmd.StartGroup), in the holder's
// namespaces, with a mount and a PID namespace of its own; then it is used as PrepareShape's
// (Retarget, Begin, SendPolicy, Started, Finish). sh.Network must be the holder's.
func (h *Holder) Prepare(sh Shape) (*Cmd, error) {
	if sh.Network != h.cfg.Network {
		return nil, errors.New("the command's network is not the one of the session's holder")
	}
	if !h.Alive() {
		return nil, h.why()
	}
	c, err := newCmd(sh, h.abi, h.pidNS, h.netNS, nil, "", nil)
	if err != nil {
		return nil, err
	}
	c.holder = h
	return c, nil
}

// why returns why the holder serves no more.
func (h *Holder) why() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone != nil {
		return h.gone
	}
	return errors.New("the session's sandbox was closed")
}

// start asks the holder to start c's helper with c's descriptors (stdin /dev/null, c's
// Stdout and Stderr, the report pipe's write end, the policy pipe's read end), and returns
// its process group, tracked by procgroup (its wait is the holder's report).
func (h *Holder) start(c *Cmd) (*procgroup.Group, int, error) {
	out, ok1 := c.Stdout.(*os.File)
	errf, ok2 := c.Stderr.(*os.File)
	if !ok1 || !ok2 {
		return nil, 0, errors.New("a holder's command needs files for its output")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, 0, err
	}
	defer null.Close()
	ch := make(chan holdMsg, 1)
	h.mu.Lock()
	if h.gone != nil || h.closed {
		h.mu.Unlock()
		return nil, 0, h.why()
	}
	h.nextID++
	id := h.nextID
	h.pending[id] = ch
	h.mu.Unlock()
	err = sendHold(h.conn, holdMsg{Op: "start", ID: id},
		int(null.Fd()), int(out.Fd()), int(errf.Fd()), int(c.w.Fd()), int(c.pr.Fd()))
	if err != nil {
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
		return nil, 0, fmt.Errorf("cannot reach the sandbox's holder: %v", err)
	}
	m, ok := <-ch
	if !ok {
		return nil, 0, h.why()
	}
	if m.Error != "" {
		return nil, 0, fmt.Errorf("the sandbox's holder could not start the helper: %s", m.Error)
	}
	h.mu.Lock()
	exit := h.exits[m.Pid]
	gone := h.gone
	h.mu.Unlock()
	if exit == nil && gone != nil {
		return nil, 0, gone
	}
	g := procgroup.Track(m.Pid, func() (syscall.WaitStatus, error) {
		if exit == nil {
			return 0, h.why()
		}
		e, ok := <-exit
		if !ok {
			return 0, h.why()
		}
		return syscall.WaitStatus(e.Status), nil
	})
	return g, m.Pid, nil
}

// Close ends the holder: every helper it started is killed (the holder kills their
// groups, and they die with it), its network namespace goes, and the proxy's listener is
// closed. It waits for the holder to exit. Safe to call again.
func (h *Holder) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.done
		return nil
	}
	h.closed = true
	term := h.term
	h.mu.Unlock()
	h.conn.Close() // the holder sees the end of its control socket, kills its helpers, exits
	if h.lis != nil {
		h.lis.Close()
	}
	<-h.done
	err := <-h.wait
	if term != "" {
		os.RemoveAll(term)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed, or exited on its own: either way gone
	}
	return err
}

// ServeTerminals makes the holder accept commands from processes pid did not start (an
// ACP client's terminal running TerminalArgv's command line), on a Unix socket in a folder
// of its own that it makes in base: base must exist, belong to this user and be reachable
// by nobody else (mode 0700), be hidden from sandboxed commands (pid's state folder is:
// Build hides it), and be short enough for a socket's path (at most 100 bytes with the
// folder's name and "/s"). The launch files TerminalArgv writes in the holder's folder are
// what it runs; Close removes the folder. Each holder has its own folder, so a session's two
// holders (the host's network and its own) both serve terminals. Safe to call again, and
// concurrently: a holder that serves terminals already is left as it is.
func (h *Holder) ServeTerminals(base string) error {
	h.termMu.Lock()
	defer h.termMu.Unlock()
	h.mu.Lock()
	term := h.term
	h.mu.Unlock()
	if term != "" {
		return nil
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s must be a folder of this user that nobody else can reach (0700)", base)
	}
	dir, err := os.MkdirTemp(base, "")
	if err != nil {
		return err
	}
	if err := h.listenTerminals(dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	h.mu.Lock()
	h.term = dir
	h.mu.Unlock()
	return nil
}

// listenTerminals makes the socket dir/s and hands it to the holder.
func (h *Holder) listenTerminals(dir string) error {
	sock := filepath.Join(dir, "s")
	if len(sock) > 100 {
		return fmt.Errorf("%s: the path is too long for a Unix socket", sock)
	}
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(false) // Close removes the folder
	f, err := l.File()
	l.Close()
	if err != nil {
		return err
	}
	defer f.Close()
	if err := sendHold(h.conn, holdMsg{Op: "terminals", Dir: dir}, int(f.Fd())); err != nil {
		return fmt.Errorf("cannot reach the sandbox's holder: %v", err)
	}
	return nil
}

// TerminalArgv returns the command line that runs argv (argv[0] an absolute path) in dir
// with the environment env, in the sandbox pol, through this holder (in the session's
// network), from any process of this user that is not sandboxed (an ACP client's
// terminal): [pidPath, "sandbox-exec", "--holder", SOCKET, "--launch", FILE, "--",
// argv...]. pidPath is the absolute path of pid's binary. The policy, environment and
// folder go in FILE, a launch file made in the terminals' folder (ServeTerminals first),
// mode 0600, which the holder reads once and removes; the holder checks that the command
// line's argv is the file's. The command exits as the command did (128+N after signal N);
// signals it gets (SIGTERM, SIGINT, SIGHUP...) reach the command; if it dies, the command
// is killed; 125 when the sandbox could not be set up (the reason on its stderr).
func (h *Holder) TerminalArgv(pidPath string, pol Policy, argv []string, dir string, env []string) ([]string, error) {
	h.mu.Lock()
	term := h.term
	h.mu.Unlock()
	if term == "" {
		return nil, errors.New("the holder serves no terminals (ServeTerminals)")
	}
	if !filepath.IsAbs(pidPath) || len(argv) == 0 || !filepath.IsAbs(argv[0]) || !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("bad command: %q %q in %q", pidPath, argv, dir)
	}
	if pol.Network != h.cfg.Network {
		return nil, errors.New("the policy's network is not the one of the session's holder")
	}
	pol.ABI, pol.PidNS, pol.NetNS = h.abi, h.pidNS, h.netNS
	raw, err := json.Marshal(launch{Policy: pol, Argv: argv, Env: env, Dir: dir})
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(term, "l-")
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(raw)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	out := []string{pidPath, HelperArg, "--holder", filepath.Join(term, "s"), "--launch", f.Name(), "--"}
	return append(out, slices.Clone(argv)...), nil
}

// This file is a session's namespace holder itself (`pid sandbox-hold`, holdMain), which
// holder_linux.go starts: it brings its network namespace's loopback up, passes the proxy's
// listener, then starts helpers on request, each as its own child in a new mount and PID
// namespace inside the holder's user namespace (where it has the capabilities to make them),
// reaps them and says how they ended. It also serves the terminals' socket: a command line
// that an ACP client runs (`pid sandbox-exec --holder SOCKET --launch FILE -- ARGV`,
// terminalMain below) hands its own stdin, stdout and stderr to the holder, which runs the
// launch pid wrote in FILE with them. When the daemon's end of the control socket closes
// (the session closed, or pid died), the holder kills every helper and exits; its
// parent-death signal, and each helper's, does the same if pid is killed.

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// hold is the holder's state.
type hold struct {
	ctl   *net.UnixConn
	pidNS bool
	// forks carries the requests to start a helper to the main goroutine, whose thread
	// (locked, never ended) forks them all: a child's parent-death signal fires when the
	// thread that forked it ends.
	forks chan forkReq

	// wmu serialises writes on ctl.
	wmu sync.Mutex
	// mu guards the fields below it.
	mu   sync.Mutex
	live map[int]bool // the helpers not yet reaped
	term string       // the terminals' folder
}

// forkReq asks the main goroutine to start a helper with the descriptors files (0 to 4 in
// the child). done gets its pid (or the error); exit, when set, gets its wait status once
// reaped, instead of the control socket.
type forkReq struct {
	files []int
	done  chan forkRes
	exit  chan unix.WaitStatus
}

type forkRes struct {
	pid int
	err error
}

// holdMain is the holder. It returns its exit code.
func holdMain() int {
	runtime.LockOSThread() // the main thread: every helper is forked from it
	words := strings.Split(os.Getenv(holdEnv), ",")
	os.Unsetenv(holdEnv)
	unix.CloseOnExec(3)
	ctl, err := unixConn(os.NewFile(3, "control"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid sandbox-hold:", err)
		return helperFailed
	}
	h := &hold{ctl: ctl, pidNS: slices.Contains(words, "pidns"), forks: make(chan forkReq), live: map[int]bool{}}
	fail := func(format string, a ...any) int {
		h.send(holdMsg{Op: "ready", Error: fmt.Sprintf(format, a...)})
		return helperFailed
	}
	ready := holdMsg{Op: "ready"}
	var fds []int
	if slices.Contains(words, "net") {
		if err := loopbackUp(); err != nil {
			return fail("bringing the loopback up: %v", err)
		}
		if slices.Contains(words, "proxy") {
			fd, port, err := listenLoopback()
			if err != nil {
				return fail("listening on 127.0.0.1 for the proxy: %v", err)
			}
			defer unix.Close(fd)
			ready.Port, fds = port, []int{fd}
		}
	}
	if err := h.send(ready, fds...); err != nil {
		return helperFailed
	}
	if len(fds) > 0 {
		unix.Close(fds[0]) // pid has it now
	}
	msgs := make(chan holdMsg)
	files := make(chan []int)
	go func() {
		defer close(msgs)
		for {
			m, fds, err := recvHold(ctl)
			if err != nil {
				return
			}
			msgs <- m
			files <- fds
		}
	}()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				h.killAll()
				return 0
			}
			fds := <-files
			switch m.Op {
			case "start":
				if len(fds) != 5 {
					closeAll(fds)
					h.send(holdMsg{Op: "started", ID: m.ID, Error: "bad request"})
					continue
				}
				pid, err := h.fork(fds)
				closeAll(fds)
				if err != nil {
					h.send(holdMsg{Op: "started", ID: m.ID, Error: err.Error()})
					continue
				}
				h.send(holdMsg{Op: "started", ID: m.ID, Pid: pid})
				go h.reap(pid, nil) // its exit is sent after the answer
			case "terminals":
				if len(fds) != 1 || !filepath.IsAbs(m.Dir) {
					closeAll(fds)
					continue
				}
				h.mu.Lock()
				h.term = m.Dir
				h.mu.Unlock()
				go h.serveTerminals(fds[0])
			default:
				closeAll(fds)
			}
		case r := <-h.forks:
			pid, err := h.fork(r.files)
			if err == nil {
				go h.reap(pid, r.exit)
			}
			r.done <- forkRes{pid, err}
		}
	}
}

// send writes m on the control socket. Safe for concurrent use.
func (h *hold) send(m holdMsg, fds ...int) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return sendHold(h.ctl, m, fds...)
}

// fork starts a helper with files as its descriptors 0 to 4, in a process group of its
// own, in new mount and (pidNS) PID namespaces, keeping the capabilities it needs there.
// Contract: called from the main goroutine only.
func (h *hold) fork(files []int) (int, error) {
	flags := uintptr(syscall.CLONE_NEWNS)
	if h.pidNS {
		flags |= syscall.CLONE_NEWPID
	}
	fs := make([]uintptr, len(files))
	for i, f := range files {
		fs[i] = uintptr(f)
	}
	pid, err := syscall.ForkExec(HelperPath(), []string{HelperPath(), HelperArg, "--"}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{policyEnv + "=fd"},
		Files: fs,
		Sys: &syscall.SysProcAttr{
			Cloneflags:  flags,
			Setpgid:     true,
			Pdeathsig:   syscall.SIGKILL,
			AmbientCaps: []uintptr{capSysAdmin, capNetAdmin, capSetpcap},
		},
	})
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	h.live[pid] = true
	h.mu.Unlock()
	return pid, nil
}

// reap waits for the helper pid and says how it ended: on exit, or on the control socket.
func (h *hold) reap(pid int, exit chan unix.WaitStatus) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	h.mu.Lock()
	delete(h.live, pid)
	h.mu.Unlock()
	if exit != nil {
		exit <- ws
		return
	}
	h.send(holdMsg{Op: "exit", Pid: pid, Status: int(ws)})
}

// killAll kills every helper's process group (with a PID namespace, every process of it).
func (h *hold) killAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for pid := range h.live {
		unix.Kill(-pid, unix.SIGKILL)
	}
}

// listenLoopback listens on 127.0.0.1:0 (TCP) and returns the socket and its port.
func listenLoopback() (int, int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return 0, 0, err
	}
	if err := unix.Listen(fd, 512); err != nil {
		unix.Close(fd)
		return 0, 0, err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return 0, 0, err
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// serveTerminals accepts the terminals' connections on the listening socket fd.
func (h *hold) serveTerminals(fd int) {
	f := os.NewFile(uintptr(fd), "terminals")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return
	}
	for {
		c, err := ul.AcceptUnix()
		if err != nil {
			return
		}
		go h.serveTerminal(c)
	}
}

// serveTerminal runs one terminal's command: the launch file it names (which must be a
// file of this user's that nobody else can read, in the terminals' folder: pid wrote it),
// with the descriptors it sent as stdin, stdout and stderr; it forwards the signals the
// terminal's process asks for, kills the command when that process goes, and sends back
// how the command ended.
func (h *hold) serveTerminal(c *net.UnixConn) {
	defer c.Close()
	if !sameUser(c) {
		return
	}
	m, fds, err := recvHold(c)
	if err != nil {
		closeAll(fds)
		return
	}
	refuse := func(format string, a ...any) {
		closeAll(fds)
		sendHold(c, holdMsg{Op: "error", Error: fmt.Sprintf(format, a...)})
	}
	if m.Op != "run" || len(fds) != 3 {
		refuse("bad request")
		return
	}
	h.mu.Lock()
	term := h.term
	h.mu.Unlock()
	l, err := readLaunch(term, m.Launch)
	if err != nil {
		refuse("%v", err)
		return
	}
	if !slices.Equal(l.Argv, m.Argv) {
		refuse("the command line's command is not the launch file's")
		return
	}
	rr, rw, err := os.Pipe()
	if err != nil {
		refuse("%v", err)
		return
	}
	defer rr.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		rw.Close()
		refuse("%v", err)
		return
	}
	exit := make(chan unix.WaitStatus, 1)
	done := make(chan forkRes, 1)
	h.forks <- forkReq{files: []int{fds[0], fds[1], fds[2], int(rw.Fd()), int(pr.Fd())}, done: done, exit: exit}
	res := <-done
	closeAll(fds)
	rw.Close()
	pr.Close()
	if res.err != nil {
		pw.Close()
		sendHold(c, holdMsg{Op: "error", Error: "cannot start the helper: " + res.err.Error()})
		return
	}
	raw, _ := json.Marshal(l)
	pw.Write(raw)
	pw.Close()
	if err := startedOn(rr); err != nil {
		<-exit
		sendHold(c, holdMsg{Op: "error", Error: err.Error()})
		return
	}
	if sendHold(c, holdMsg{Op: "started", Pid: res.pid}) != nil {
		unix.Kill(-res.pid, unix.SIGKILL)
	}
	// The terminal's process: its signals, or its end.
	go func() {
		for {
			m, fds, err := recvHold(c)
			closeAll(fds)
			if err != nil {
				unix.Kill(-res.pid, unix.SIGKILL) // it went: the command goes too
				return
			}
			if m.Op == "signal" && m.Signal > 0 && m.Signal < 65 {
				unix.Kill(-res.pid, unix.Signal(m.Signal))
			}
		}
	}()
	ws := <-exit
	out := holdMsg{Op: "exit", Code: ws.ExitStatus()}
	var b [1]byte
	if n, _ := rr.Read(b[:]); n == 1 && b[0] != 0 {
		out.Signal, out.Code = int(b[0]), 128+int(b[0]) // the helper, as init, says what ended the command
	} else if ws.Signaled() {
		out.Signal, out.Code = int(ws.Signal()), 128+int(ws.Signal())
	}
	sendHold(c, out)
}

// sameUser reports whether the peer of c runs as the holder's user.
func sameUser(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return err == nil && cred != nil && int(cred.Uid) == os.Getuid()
}

// readLaunch reads and removes the launch file p, which must lie right in dir, be a
// regular file (not a link) of this user's that nobody else may read or write.
func readLaunch(dir, p string) (launch, error) {
	var l launch
	if dir == "" || filepath.Dir(p) != dir || !strings.HasPrefix(filepath.Base(p), "l-") {
		return l, fmt.Errorf("%s is not a launch file of this session", p)
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return l, fmt.Errorf("the launch file: %v (each is good for one command)", err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	os.Remove(p) // one use
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return l, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return l, fmt.Errorf("%s is not a launch file pid wrote", p)
	}
	raw, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return l, fmt.Errorf("bad launch file: %v", err)
	}
	if len(l.Argv) == 0 {
		return l, errors.New("bad launch file: no command")
	}
	return l, nil
}

// startedOn reads a helper's report pipe until it says the command started (a 0 byte, or
// the pipe closed by the exec) or why it could not set the sandbox up.
func startedOn(r *os.File) error {
	var first [1]byte
	n, err := r.Read(first[:])
	if n == 1 && first[0] == 0 {
		return nil
	}
	if n == 0 {
		if err == io.EOF {
			return nil
		}
		return err
	}
	rest, _ := io.ReadAll(io.LimitReader(r, 4096))
	return errors.New(string(first[:n]) + string(rest))
}

// terminalMain is `pid sandbox-exec --holder SOCKET --launch FILE -- ARGV...`, run by a
// process pid did not start (an ACP client's terminal): it hands its stdin, stdout and
// stderr to the session's holder, which runs the launch pid wrote in FILE, passes on the
// signals it gets, and exits as the command did. It returns its exit code.
func terminalMain(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "pid sandbox-exec: "+format+"\n", a...)
		return helperFailed
	}
	var sock, file string
	for len(args) >= 2 && args[0] != "--" {
		switch args[0] {
		case "--holder":
			sock = args[1]
		case "--launch":
			file = args[1]
		default:
			return fail("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 || args[0] != "--" || sock == "" || file == "" {
		return fail("usage: pid sandbox-exec --holder SOCKET --launch FILE -- COMMAND... (pid writes this command line)")
	}
	argv := args[1:]
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		return fail("cannot reach the session's sandbox (%v): is the pid session still open?", err)
	}
	defer c.Close()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := sendHold(c, holdMsg{Op: "run", Launch: file, Argv: argv}, 0, 1, 2); err != nil {
		return fail("cannot reach the session's sandbox: %v", err)
	}
	msgs := make(chan holdMsg)
	go func() {
		defer close(msgs)
		for {
			m, fds, err := recvHold(c)
			closeAll(fds)
			if err != nil {
				return
			}
			msgs <- m
		}
	}()
	for {
		select {
		case s := <-sigs:
			sendHold(c, holdMsg{Op: "signal", Signal: int(s.(syscall.Signal))})
		case m, ok := <-msgs:
			switch {
			case !ok:
				return fail("the session's sandbox went away")
			case m.Op == "error":
				return fail("%s", m.Error)
			case m.Op == "exit":
				return m.Code
			}
		}
	}
}

//go:build linux

package sandbox_test

// A session's namespace holder, with real helpers: the commands it starts share its network
// namespace (a server one starts on 127.0.0.1 answers the next), and nothing else does (the
// host, another holder's commands); its proxy listener is reachable from inside only; Close
// ends every process; a terminal's command line (a plain child process, as an ACP client's
// terminal runs it) runs in the same sandbox and network. The server and the client are this
// test binary (testRole), so the tests need no other program.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/sandbox"
)

// roleEnv makes this test binary a tiny server or client instead of running the tests:
// "serve" listens on 127.0.0.1:0, prints "port N" and answers every connection with
// "hello from PID\n"; "dial HOST:PORT" connects and prints what it reads, or the error.
const roleEnv = "PID_SANDBOX_TEST_ROLE"

func init() {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(testRole(role))
	}
}

func testRole(role string) int {
	switch {
	case role == "serve":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		fmt.Printf("port %d\n", l.Addr().(*net.TCPAddr).Port)
		for {
			c, err := l.Accept()
			if err != nil {
				return 1
			}
			fmt.Fprintf(c, "hello from %d\n", os.Getpid())
			c.Close()
		}
	case strings.HasPrefix(role, "dial "):
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(role, "dial "), 10*time.Second)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		b, _ := io.ReadAll(c)
		c.Close()
		fmt.Print(string(b))
		return 0
	}
	return 2
}

// started is a command a holder started.
type started struct {
	c     *sandbox.Cmd
	group *procgroup.Group
	out   *bufio.Reader
	pr    *os.File
}

// startVia starts this test binary in role inside the sandbox pol through h.
func startVia(t *testing.T, h *sandbox.Holder, pol sandbox.Policy, dir, role string) *started {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.Prepare(sandbox.Shape{Network: pol.Network})
	if err != nil {
		t.Fatal(err)
	}
	c.Retarget([]string{self}, dir, []string{roleEnv + "=" + role})
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stdout, c.Stderr = pw, pw
	g, err := c.StartGroup()
	pw.Close()
	if err != nil {
		c.Close()
		pr.Close()
		t.Fatal(err)
	}
	if err := c.SendPolicy(pol); err != nil {
		t.Fatal(err)
	}
	if err := c.Started(); err != nil {
		g.Wait()
		t.Fatalf("sandbox setup: %v", err)
	}
	return &started{c: c, group: g, out: bufio.NewReader(pr), pr: pr}
}

// wait waits for the command and returns the rest of its output and its exit code.
func (s *started) wait(t *testing.T) (string, int) {
	t.Helper()
	rest, _ := io.ReadAll(s.out)
	s.pr.Close()
	err := s.group.Wait()
	s.c.Finish()
	st, ok := s.group.Status()
	if err != nil || !ok {
		t.Fatalf("wait: %v (status known: %v)", err, ok)
	}
	return string(rest), st.ExitStatus()
}

func startHolder(t *testing.T, cfg sandbox.HolderConfig) *sandbox.Holder {
	t.Helper()
	h, err := sandbox.StartHolder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// serve starts the server role through h and returns it with its port.
func serve(t *testing.T, h *sandbox.Holder, pol sandbox.Policy, dir string) (*started, int) {
	t.Helper()
	srv := startVia(t, h, pol, dir, "serve")
	line, err := srv.out.ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "port ")))
	if err != nil || perr != nil {
		t.Fatalf("the server said %q (%v)", line, err)
	}
	return srv, port
}

func TestHolderCommandsShareOneNetwork(t *testing.T) {
	if c := needSandbox(t); !c.NetworkNamespaces {
		t.Fatalf("no network namespace on this kernel: %+v", c)
	}
	ws := t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws}}
	h := startHolder(t, sandbox.HolderConfig{})
	srv, port := serve(t, h, pol, ws)
	addr := "127.0.0.1:" + strconv.Itoa(port)

	// A later command of the same session reaches it.
	out, code := startVia(t, h, pol, ws, "dial "+addr).wait(t)
	if code != 0 || !strings.HasPrefix(out, "hello from ") {
		t.Errorf("the session's next command: exit %d, %q", code, out)
	}
	// Another session's command does not: its holder has a network of its own.
	other := startHolder(t, sandbox.HolderConfig{})
	out, code = startVia(t, other, pol, ws, "dial "+addr).wait(t)
	if code == 0 || !strings.Contains(out, "connection refused") {
		t.Errorf("another session's command: exit %d, %q", code, out)
	}
	// Nor does the host: the server's 127.0.0.1 is the namespace's.
	if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		b, _ := io.ReadAll(c)
		c.Close()
		if strings.HasPrefix(string(b), "hello from ") {
			t.Errorf("the host reached the session's server: %q", b)
		}
	}
	srv.group.Signal(syscall.SIGTERM)
	if _, code := srv.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Errorf("server exit code %d", code)
	}
}

func TestHolderCloseLeavesNoProcess(t *testing.T) {
	needSandbox(t)
	ws := t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws}}
	h, err := sandbox.StartHolder(sandbox.HolderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, h, pol, ws)
	pgid := srv.c.Pid()
	if len(proctest.Group(t, pgid)) == 0 {
		t.Fatal("the server's group is not there")
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.group.Wait(); err == nil {
		t.Error("the server's wait knows an exit status after its holder was closed")
	}
	srv.pr.Close()
	srv.c.Close()
	proctest.WaitUntil(t, 10*time.Second, "the server's group to end", func() bool { return len(proctest.Group(t, pgid)) == 0 })
	if _, err := h.Prepare(sandbox.Shape{}); err == nil {
		t.Error("a closed holder prepares commands")
	}
}

func TestHolderProxyListenerIsInsideOnly(t *testing.T) {
	if c := needSandbox(t); !c.NetworkNamespaces {
		t.Fatalf("no network namespace on this kernel: %+v", c)
	}
	ws := t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws}}
	h := startHolder(t, sandbox.HolderConfig{Proxy: true})
	l, addr := h.ProxyListener()
	if l == nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("listener %v at %q", l, addr)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "pid's side\n")
			c.Close()
		}
	}()
	out, code := startVia(t, h, pol, ws, "dial "+addr).wait(t)
	if code != 0 || out != "pid's side\n" {
		t.Errorf("a command dialling the proxy's address: exit %d, %q", code, out)
	}
	if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) == "pid's side\n" {
			t.Error("the host's 127.0.0.1 reaches the listener made in the namespace")
		}
	}
	h.Close()
	<-served
}

func TestHolderRunsATerminalsCommandLine(t *testing.T) {
	if c := needSandbox(t); !c.NetworkNamespaces {
		t.Fatalf("no network namespace on this kernel: %+v", c)
	}
	ws, outside := t.TempDir(), t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws}}
	h := startHolder(t, sandbox.HolderConfig{})
	srv, port := serve(t, h, pol, ws)
	defer func() {
		srv.group.Signal(syscall.SIGKILL)
		srv.wait(t)
	}()
	term, err := os.MkdirTemp("", "pidt")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(term)
	if err := h.ServeTerminals(term); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	bash, _ := exec.LookPath("bash")
	script := fmt.Sprintf("echo x > %s; echo in > %s/in; exec env %s='dial 127.0.0.1:%d' %s",
		filepath.Join(outside, "out"), ws, roleEnv, port, self)
	argv, err := h.TerminalArgv(self, pol, []string{bash, "-c", script}, ws, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != self || argv[1] != "sandbox-exec" || !filepath.IsAbs(argv[3]) || !filepath.IsAbs(argv[5]) {
		t.Errorf("command line %q", argv)
	}
	// The terminal: a plain child of this process, with nothing from pid but the command line.
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Permission denied") || !strings.Contains(string(out), "hello from ") {
		t.Errorf("terminal's command: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("the terminal's command wrote outside the workspace")
	}
	if readFile(t, filepath.Join(ws, "in")) != "in\n" {
		t.Error("the terminal's command did not write in the workspace")
	}
	// The launch file was good for one command.
	again := exec.Command(argv[0], argv[1:]...)
	if out, err := again.CombinedOutput(); err == nil || !strings.Contains(string(out), "launch file") {
		t.Errorf("a launch file ran twice: %v %s", err, out)
	}
	// Exit codes and signals come back as the command's.
	argv, _ = h.TerminalArgv(self, pol, []string{bash, "-c", "exit 7"}, ws, nil)
	if err := exec.Command(argv[0], argv[1:]...).Run(); err == nil || err.(*exec.ExitError).ExitCode() != 7 {
		t.Errorf("exit 7 came back as %v", err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

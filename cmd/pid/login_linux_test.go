package main

// pid login driven through a real pseudo-terminal, as a person types into it: the key is
// never echoed (the answers around it are), the key lands in a 0600 file in a 0700 folder,
// the model in the user's settings next to what was there, and a credentials file that is a
// link or that others may read is refused before any key is asked for.

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptyRun is pid running on the slave side of a pseudo-terminal.
type ptyRun struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    []byte
	seen   int // how much of out the last expect consumed
	more   chan struct{}
	done   chan struct{} // closed when the master reads no more (pid and its terminal gone)
}

// startPty starts pid with args on a new pseudo-terminal (its controlling terminal, in a
// session of its own) with env.
func startPty(t *testing.T, env []string, args ...string) *ptyRun {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN) // ptsname
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Non-blocking, so that the master's reads go through Go's poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	master := os.NewFile(uintptr(fd), "/dev/ptmx")
	cmd := exec.Command(pidBin, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	r := &ptyRun{t: t, master: master, cmd: cmd, more: make(chan struct{}, 1), done: make(chan struct{})}
	go r.read()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
		<-r.done
		master.Close()
	})
	return r
}

// read copies what pid writes to the terminal into r.out until the terminal closes.
func (r *ptyRun) read() {
	defer close(r.done)
	buf := make([]byte, 4096)
	for {
		n, err := r.master.Read(buf)
		if n > 0 {
			r.mu.Lock()
			r.out = append(r.out, buf[:n]...)
			r.mu.Unlock()
			select {
			case r.more <- struct{}{}:
			default:
			}
		}
		if err != nil { // EIO once pid and its terminal are gone
			return
		}
	}
}

// expect waits until the output after the last expect holds s.
func (r *ptyRun) expect(s string) {
	r.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if i := strings.Index(string(r.out[r.seen:]), s); i >= 0 {
			r.seen += i + len(s)
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-r.done:
			r.mu.Lock()
			ok := strings.Contains(string(r.out[r.seen:]), s)
			r.mu.Unlock()
			if !ok {
				r.t.Fatalf("the terminal closed without %q; it showed:\n%s", s, r.output())
			}
		case <-deadline.C:
			r.t.Fatalf("waited for %q; the terminal showed:\n%s", s, r.output())
		}
	}
}

// typeIn writes s as typed keys (a carriage return for Enter).
func (r *ptyRun) typeIn(s string) {
	r.t.Helper()
	if _, err := r.master.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// wait returns pid's exit code once the terminal has shown everything.
func (r *ptyRun) wait() int {
	r.t.Helper()
	err := r.cmd.Wait()
	<-r.done
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.t.Fatal(err)
	}
	return r.cmd.ProcessState.ExitCode()
}

func (r *ptyRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.out)
}

// loginEnv is pid's environment for the login tests: its own home and config folders, no
// key in the environment.
func loginEnv(t *testing.T) (env []string, config string) {
	root := t.TempDir()
	config = filepath.Join(root, "config")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "TERM":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+filepath.Join(root, "home"), "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+filepath.Join(root, "state"), "TERM=dumb")
	return env, config
}

const typedKey = "sk-ant-api03-Tq7Wm2Xr9Lp4Zk8Vn3Hc6Jd1Fs5Gb0Yy"

func TestLoginThroughATerminal(t *testing.T) {
	env, config := loginEnv(t)
	dir := filepath.Join(config, "pid")
	if err := os.MkdirAll(dir, 0o755); err != nil { // as a person's mkdir leaves it
		t.Fatal(err)
	}
	userSettings := "{\n  \"permissions\": {\"allow\": [\"read\"]},\n  \"theme\": \"dark\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startPty(t, env, "login")
	r.expect("Choose 1-3: ")
	r.typeIn("1\r")
	r.expect("it is not shown): ")
	r.typeIn(typedKey + "\r")
	r.expect("Choose 1-4 [1]: ")
	r.typeIn("2\r")
	if code := r.wait(); code != 0 {
		t.Fatalf("pid login exited %d:\n%s", code, r.output())
	}
	out := r.output()
	// The answers are echoed (so this terminal echoes), the key is not, nor any part of it.
	if !strings.Contains(out, "Choose 1-3: 1") || !strings.Contains(out, "Choose 1-4 [1]: 2") {
		t.Errorf("the typed answers were not echoed, so the test proves nothing:\n%s", out)
	}
	for i := 0; i+8 <= len(typedKey); i++ {
		if strings.Contains(out, typedKey[i:i+8]) {
			t.Fatalf("the terminal showed %q of the key:\n%s", typedKey[i:i+8], out)
		}
	}
	path := filepath.Join(dir, "credentials.json")
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() || di.Mode().Perm() != 0o700 {
		t.Errorf("credentials.json %v, its folder %v; want a 0600 file in a 0700 folder", fi.Mode(), di.Mode().Perm())
	}
	var saved struct {
		Credentials map[string]struct{ Provider, BaseURL, APIKey string }
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &saved); err != nil || saved.Credentials["anthropic"].APIKey != typedKey ||
		saved.Credentials["anthropic"].BaseURL != "https://api.anthropic.com" {
		t.Errorf("credentials.json: %s (%v)", b, err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "settings.json"))
	want := "{\n  \"model\": {\"provider\": \"anthropic\", \"id\": \"claude-opus-4-6\"},\n  \"permissions\": {\"allow\": [\"read\"]},\n  \"theme\": \"dark\"\n}\n"
	if string(b) != want {
		t.Errorf("settings.json:\n%s\nwant:\n%s", b, want)
	}

	// --check says what is set, and never the key.
	cmd := exec.Command(pidBin, "login", "--check")
	cmd.Env = env
	check, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(check), "anthropic/claude-opus-4-6") || !strings.Contains(string(check), `credentials file ("anthropic")`) {
		t.Errorf("pid login --check: %v\n%s", err, check)
	}
	for i := 0; i+8 <= len(typedKey); i++ {
		if strings.Contains(string(check), typedKey[i:i+8]) {
			t.Fatalf("pid login --check showed %q of the key:\n%s", typedKey[i:i+8], check)
		}
	}
	// pid doctor names the provider, not the key.
	cmd = exec.Command(pidBin, "doctor")
	cmd.Env = env
	doc, _ := cmd.CombinedOutput()
	if !strings.Contains(string(doc), "saved keys:          anthropic (") || strings.Contains(string(doc), typedKey[:12]) {
		t.Errorf("pid doctor:\n%s", doc)
	}
	// pid logout removes it.
	cmd = exec.Command(pidBin, "logout", "anthropic")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "anthropic") {
		t.Errorf("pid logout anthropic: %v\n%s", err, out)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after pid logout, credentials.json: %v", err)
	}
}

// A credentials file that is a link, or that others may read, is refused before any key is
// asked for, and left as it is.
func TestLoginRefusesAFileThatIsNotPrivate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"symlink", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "keys.json")
			if err := os.WriteFile(target, []byte(`{"credentials": {}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"group-readable", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`{"credentials": {}}`), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o640); err != nil {
				t.Fatal(err)
			}
		}, "run chmod 600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, config := loginEnv(t)
			dir := filepath.Join(config, "pid")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "credentials.json")
			tc.setup(t, path)
			before, _ := os.Lstat(path)
			r := startPty(t, env, "login")
			r.expect(tc.want)
			if code := r.wait(); code != 1 {
				t.Errorf("pid login exited %d, want 1", code)
			}
			if out := r.output(); strings.Contains(out, "API key for") || strings.Contains(out, "Choose") {
				t.Errorf("pid login asked questions before refusing:\n%s", out)
			}
			after, err := os.Lstat(path)
			if err != nil || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the refused file changed: %v -> %v (%v)", before.Mode(), after, err)
			}
		})
	}
}

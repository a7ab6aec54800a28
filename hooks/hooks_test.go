//go:build unix

package hooks

// Tests of the settings' parsing and of running one hook: its input on stdin, exit codes 0
// (JSON read), 2 (blocks, stderr the reason) and others (failed), a timeout that kills the
// hook's whole process group, and a cancel.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/proctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	set, err := Parse(json.RawMessage(`{"PreToolUse": [{"matcher": "bash|mcp__github__.*", "hooks": [{"type": "command", "command": "a", "timeout": 5}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "b"}]}]}`), "user")
	if err != nil {
		t.Fatal(err)
	}
	if got := set.For(PreToolUse, "bash"); len(got) != 1 || got[0].Timeout != 5*time.Second || got[0].Source != "user" {
		t.Errorf("For(PreToolUse, bash) = %+v", got)
	}
	if len(set.For(PreToolUse, "mcp__github__issue")) != 1 || len(set.For(PreToolUse, "edit")) != 0 || len(set.For(PreToolUse, "xbash")) != 0 {
		t.Errorf("the matcher is a whole-name regular expression")
	}
	if got := set.For(Stop, ""); len(got) != 1 || got[0].Timeout != DefaultTimeout {
		t.Errorf("Stop: %+v", got)
	}
	for _, bad := range []string{`{"Nope": []}`, `{"PreToolUse": [{"matcher": "(", "hooks": []}]}`,
		`{"PreToolUse": [{"hooks": [{"type": "http", "command": "a"}]}]}`, `{"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": -1}]}]}`, `[]`} {
		if _, err := Parse(json.RawMessage(bad), "user"); err == nil {
			t.Errorf("Parse(%s) accepted it", bad)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := Input{SessionID: "s1", HookEventName: PreToolUse, ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	r := Run(t.Context(), Hook{Event: PreToolUse, Command: `cat; echo '{"x":1}' >&2`}, in, dir, Env(dir))
	if r.ExitCode != 0 || r.Err != nil || !strings.Contains(string(r.Stdout), `"tool_name":"bash"`) || !strings.Contains(string(r.Stdout), `"hook_event_name":"PreToolUse"`) {
		t.Errorf("stdin: %+v %s", r, r.Stdout)
	}
	r = Run(t.Context(), Hook{Command: `echo "$PID_PROJECT_DIR"; pwd`}, in, dir, Env("/proj"))
	if lines := strings.Fields(string(r.Stdout)); len(lines) != 2 || lines[0] != "/proj" || lines[1] != dir {
		t.Errorf("env and cwd: %q", r.Stdout)
	}
	r = Run(t.Context(), Hook{Command: `echo '{"decision":"block"}'`}, in, dir, nil)
	if o, ok := r.Output(); !ok || o.Decision != "block" {
		t.Errorf("Output: %+v %v", o, ok)
	}
	r = Run(t.Context(), Hook{Command: `echo plain words`}, in, dir, nil)
	if _, ok := r.Output(); ok || r.Context() != "plain words" {
		t.Errorf("plain stdout: Context %q", r.Context())
	}
	r = Run(t.Context(), Hook{Command: `echo why >&2; exit 2`}, in, dir, nil)
	if !r.Blocked() || r.Reason() != "why" {
		t.Errorf("exit 2: %+v", r)
	}
	r = Run(t.Context(), Hook{Command: `exit 3`}, in, dir, nil)
	if r.Err == nil || r.Blocked() || !strings.Contains(r.Err.Error(), "code 3") {
		t.Errorf("exit 3: %+v", r)
	}
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	start := time.Now()
	r := Run(t.Context(), Hook{Command: `sleep 30 & echo $! > ` + pidFile + `; wait`, Timeout: 300 * time.Millisecond}, Input{}, dir, nil)
	if !errors.Is(r.Err, ErrTimeout) {
		t.Fatalf("err %v, want a timeout", r.Err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v", d)
	}
	data, _ := os.ReadFile(pidFile)
	var pid int
	if _, err := fmtSscan(strings.TrimSpace(string(data)), &pid); err != nil || pid == 0 {
		t.Fatalf("child pid %q", data)
	}
	// The background child went with the group (a zombie reaped by init counts as gone).
	proctest.WaitUntil(t, 5*time.Second, fmt.Sprintf("the hook's background child %d to end with its timeout", pid),
		func() bool { return syscall.Kill(pid, 0) != nil })

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r = Run(ctx, Hook{Command: `sleep 30`}, Input{}, dir, nil)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "cancelled") {
		t.Errorf("a cancelled hook: %+v", r)
	}
}

func fmtSscan(s string, v *int) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
	}
	*v = n
	return 1, nil
}

// Issue 31 L12: a hook that prints 100 MB costs no memory: the first MaxOutput bytes are
// kept, the rest counted and said (Cut), and the hook's decision is still read: exit 2 with
// its reason on stderr, or a JSON decision followed by 100 MB of white space.
func TestRunCapsOutput(t *testing.T) {
	dir := t.TempDir()
	const total = 100_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := Run(t.Context(), Hook{Command: `head -c 100000000 /dev/zero; echo "too loud" >&2; exit 2`}, Input{}, dir, nil)
	runtime.ReadMemStats(&after)
	if len(r.Stdout) != MaxOutput || r.StdoutDropped != total-MaxOutput {
		t.Errorf("kept %d bytes and dropped %d, want %d kept of %d", len(r.Stdout), r.StdoutDropped, MaxOutput, total)
	}
	t.Logf("100 MB of output: %d bytes kept, %d allocated while the hook ran", len(r.Stdout), after.TotalAlloc-before.TotalAlloc)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
		t.Errorf("running the hook allocated %d bytes, want at most 8 MiB for 100 MB of output", grown)
	}
	if !r.Blocked() || r.Reason() != "too loud" {
		t.Errorf("the exit-2 decision was lost: blocked %v, reason %q, err %v", r.Blocked(), r.Reason(), r.Err)
	}
	if cut := r.Cut(); !strings.Contains(cut, "100000000 bytes to stdout") || !strings.Contains(cut, "1048576") {
		t.Errorf("Cut() = %q, want it to say how much was written and kept", cut)
	}

	r = Run(t.Context(), Hook{Command: `printf '{"decision":"block","reason":"quiet please"}'; head -c 100000000 /dev/zero | tr '\0' ' '`}, Input{}, dir, nil)
	if o, ok := r.Output(); !ok || o.Decision != "block" || o.Reason != "quiet please" {
		t.Errorf("the JSON decision before 100 MB of spaces was not read: %+v %v (err %v)", o, ok, r.Err)
	}
	if r.StdoutDropped != total+int64(len(`{"decision":"block","reason":"quiet please"}`))-MaxOutput {
		t.Errorf("dropped %d", r.StdoutDropped)
	}
}

package session_test

// Tests of the session's SessionStart hooks: a session that is closed stops the hooks still
// running for it, and waits for them (issue 33).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
	"github.com/pid-agent/pid/session"
)

// A SessionStart hook that is still running when its session closes is killed, and
// CloseSession returns once it has exited: nothing of a closed session runs on (the hook
// used to run on an unowned goroutine until its own timeout).
func TestCloseStopsSessionStartHooks(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "hook.pid")
	hooks, _ := json.Marshal(map[string]any{"SessionStart": []any{map[string]any{"hooks": []any{map[string]any{
		"type": "command", "command": fmt.Sprintf("echo $$ > %s.new && mv %s.new %s && exec sleep 300", pidFile, pidFile, pidFile)}}}}})
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{dir})
	defer h.Close()
	s, err := h.New(session.Config{Cwd: dir, Hooks: hooks}, session.Options{Face: face{}})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	proctest.WaitUntil(t, 10*time.Second, "the SessionStart hook to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if err := h.CloseSession(s.ID()); err != nil {
		t.Fatal(err)
	}
	if proctest.Alive(pid) {
		t.Errorf("the SessionStart hook (process %d) still runs after its session was closed", pid)
	}
}

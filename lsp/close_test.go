//go:build unix

package lsp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/proctest"
)

// Close ends every goroutine the Manager started, and returns once they have ended, also
// for a server whose output a process of its own session keeps open after the server's
// group was stopped (a daemon the server spawned): the connection's reader, the process's
// watcher and the handshake are the Manager's, not left to end when that output closes.
func TestCloseEndsEveryGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	f := filepath.Join(dir, "a.tst")
	os.WriteFile(f, []byte("BROKEN\n"), 0o644)
	pidFile := filepath.Join(dir, "daemon.pid")
	// The daemon leaves the server's process group (setsid) with the server's stdout.
	cfg := &ServerConfig{Command: []string{"sh", "-c", "setsid sleep 300 & echo $! > " + pidFile + "; exec " + testServer(t)}, Extensions: []string{".tst"}}
	m := NewManager(Options{Backoff: time.Hour})
	ds, err := m.Diagnostics(t.Context(), request(dir, cfg, f), time.Now().Add(10*time.Second))
	if err != nil || len(ds) != 1 {
		t.Fatalf("diagnostics = %+v, %v", ds, err)
	}
	b, err := os.ReadFile(pidFile)
	daemon, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || daemon == 0 {
		t.Fatalf("the daemon's pid: %q, %v", b, err)
	}
	defer func() {
		syscall.Kill(daemon, syscall.SIGKILL)
		proctest.WaitUntil(t, 10*time.Second, "the test's daemon to exit", func() bool { return !proctest.Alive(daemon) })
	}()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		m.Close()
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second): // a hang guard, not a timing: Close waits for nothing that is not its own
		t.Fatal("Close waits for a process outside the server's group to close the server's output")
	}
	if !proctest.Alive(daemon) {
		t.Fatal("the daemon is gone: the test proves nothing")
	}
}

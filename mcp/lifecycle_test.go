package mcp

// Servers' lives: a start that never holds anyone up, starts that fail (with the reason and
// stderr), the backoff between restarts, lingering after the last release, and a server
// reached over streamable HTTP.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
)

func TestStartRunsInTheBackground(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	log := newStatusLog()
	m := newTestManager(t, Options{OnStatus: log.record})
	h := m.Acquire("slow", serverConfig(t, "-gate", gate))
	defer h.Release()
	// The server is held in its start until the gate opens: Acquire returned all the same.
	if st := h.Status(); st.Status != StatusStarting || len(h.Tools()) != 0 {
		t.Fatalf("right after Acquire: %+v with %d tools, want starting with none", st, len(h.Tools()))
	}
	log.wait(t, "starting", 0, func(s ServerStatus) bool { return s.Status == StatusStarting })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.WaitReady(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitReady with a done context while starting = %v", err)
	}
	type result struct {
		text string
		err  error
	}
	called := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		res, err := h.Call(ctx, "echo", json.RawMessage(`{"text":"waited"}`), nil)
		called <- result{text(res), err}
	}()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	if r := <-called; r.err != nil || r.text != "waited" {
		t.Fatalf("a call made while the server started = %q, %v", r.text, r.err)
	}
	if st, _ := log.wait(t, "ready", 0, func(s ServerStatus) bool { return s.Status == StatusReady }); st.Tools != len(h.Tools()) || st.Tools == 0 {
		t.Errorf("ready status = %+v", st)
	}
}

func TestFailedStartsSayWhy(t *testing.T) {
	m := newTestManager(t, Options{})
	cases := []struct {
		name string
		cfg  ServerConfig
		want []string
	}{
		{"missing", ServerConfig{Command: "pid-no-such-mcp-server"}, []string{`"pid-no-such-mcp-server"`, "not on pid's PATH"}},
		{"exits", serverConfig(t, "-fail-start", "config file /etc/x.toml is missing"), []string{"exited (exit status 2) before it answered", "config file /etc/x.toml is missing"}},
		{"unset-variable", ServerConfig{Command: "${PID_MCP_TEST_UNSET_VARIABLE}"}, []string{"PID_MCP_TEST_UNSET_VARIABLE is not set"}},
		{"bad-url", ServerConfig{URL: "http://127.0.0.1:1/mcp"}, []string{"cannot connect to http://127.0.0.1:1/mcp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := m.Acquire(c.name, c.cfg)
			defer h.Release()
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err := h.WaitReady(ctx)
			if err == nil {
				t.Fatal("WaitReady succeeded")
			}
			st := h.Status()
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) || !strings.Contains(st.Error, w) {
					t.Errorf("error %q / status %q lacks %q", err, st.Error, w)
				}
			}
			if st.Status != StatusFailed || !strings.Contains(err.Error(), `MCP server "`+c.name+`"`) {
				t.Errorf("status %+v, error %v", st, err)
			}
			// A call tries once more (no backoff after a first failure) and says why.
			if _, err := h.Call(ctx, "echo", nil, nil); err == nil || !strings.Contains(err.Error(), c.want[0]) {
				t.Errorf("a call to a failed server = %v", err)
			}
		})
	}
	if n := serverProcs(t); len(n) != 0 {
		t.Errorf("failed starts left processes: %v", n)
	}
}

func TestRestartBackoffGrows(t *testing.T) {
	s := newServer(NewManager(Options{}), "x", ServerConfig{}, "k")
	var delays []time.Duration
	for range 8 {
		before := time.Now()
		s.failLocked("down", time.Time{})
		delays = append(delays, s.retryAt.Sub(before).Round(100*time.Millisecond))
	}
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	// A connection that stayed up long enough starts the count again.
	s.failLocked("down", time.Now().Add(-2*stableAfter))
	if d := time.Until(s.retryAt); d > 100*time.Millisecond {
		t.Errorf("after a stable run the next restart waits %v, want none", d)
	}
}

func TestReleaseLingersThenStops(t *testing.T) {
	m := newTestManager(t, Options{Linger: time.Hour})
	cfg := serverConfig(t)
	h := ready(t, m, "test", cfg)
	pid := serverPid(t, h)
	h.Release()
	h.Release() // idempotent
	if _, err := call(t, h, "echo", `{}`, nil); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("a call through a released handle = %v", err)
	}
	if got := m.Servers(); len(got) != 1 || got[0].Status != StatusReady {
		t.Fatalf("a lingering server is not listed: %+v", got)
	}
	again := ready(t, m, "test", cfg)
	if p := serverPid(t, again); p != pid {
		t.Errorf("taken back during its linger, the server runs in %d, want %d", p, pid)
	}

	now := newTestManager(t, Options{Linger: -1})
	h2 := ready(t, now, "test", cfg)
	pid2 := serverPid(t, h2)
	h2.Release()
	proctest.WaitUntil(t, testTimeout, "the released server to exit", func() bool { return !proctest.Alive(pid2) })
	if got := now.Servers(); len(got) != 0 {
		t.Errorf("a released server is still listed: %+v", got)
	}
	h3 := ready(t, now, "test", cfg)
	if p := serverPid(t, h3); p == pid2 {
		t.Errorf("a server acquired after the release runs in the old process %d", p)
	}
}

func TestLingerExpires(t *testing.T) {
	m := newTestManager(t, Options{Linger: time.Millisecond})
	h := ready(t, m, "test", serverConfig(t))
	pid := serverPid(t, h)
	h.Release()
	proctest.WaitUntil(t, testTimeout, "the lingering server to stop", func() bool { return !proctest.Alive(pid) && len(m.Servers()) == 0 })
}

func TestStreamableHTTP(t *testing.T) {
	url, kill := httpServer(t)
	t.Setenv("PID_MCP_TEST_TOKEN", "s3cret")
	m := newTestManager(t, Options{})
	cfg := ServerConfig{URL: url, Headers: map[string]string{"X-Pid-Test": "Bearer ${PID_MCP_TEST_TOKEN}"}}
	h := ready(t, m, "remote", cfg)
	if !strings.HasPrefix(h.Tools()[0].Name, "mcp__remote__") || len(h.Tools()) != 13 {
		t.Fatalf("tools over HTTP: %v", h.Tools())
	}
	res, err := call(t, h, "echo", `{"text":"over http"}`, nil)
	if err != nil || text(res) != "over http" {
		t.Fatalf("echo over HTTP = %q, %v", text(res), err)
	}
	res, err = call(t, h, "whoami", `{"header":"X-Pid-Test"}`, nil)
	if d, _ := res.Details.(map[string]any); err != nil || d["header"] != "Bearer s3cret" {
		t.Errorf("the server saw header %v (%v), want the configured one with the variable expanded", res.Details, err)
	}
	_, err = call(t, h, "fail", `{"text":"remote failure"}`, nil)
	if err == nil || err.Error() != "remote failure" {
		t.Errorf("fail over HTTP = %v", err)
	}
	testCancel(t, h) // progress reaches onUpdate, and the cancel reaches the server

	// The server goes away: the call fails naming it, the server is failed, and the next
	// call tries to connect again.
	kill()
	_, err = call(t, h, "echo", `{"text":"anyone?"}`, nil)
	if err == nil || !strings.Contains(err.Error(), `MCP server "remote"`) || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "the next call connects again") {
		t.Fatalf("a call to a server that went away = %v", err)
	}
	if st := h.Status(); st.Status != StatusFailed || !strings.Contains(st.Error, url) {
		t.Errorf("status of a server that went away = %+v", st)
	}
	if _, err := call(t, h, "echo", `{}`, nil); err == nil || !strings.Contains(err.Error(), "cannot connect to "+url) {
		t.Errorf("the next call = %v, want a new connection that fails", err)
	}
}

func TestStopEscalatesToSIGKILLAndLeavesNoOrphan(t *testing.T) {
	m := NewManager(Options{StopGrace: 50 * time.Millisecond})
	h := m.Acquire("stubborn", serverConfig(t, "-stubborn"))
	defer h.Release()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := h.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := h.Call(ctx, "whoami", nil, nil)
	var who struct{ Pid, Child int }
	if err != nil || json.Unmarshal([]byte(text(res)), &who) != nil || who.Child == 0 {
		t.Fatalf("whoami = %q, %v", text(res), err)
	}
	// It ignores the end of stdin and SIGTERM: only SIGKILL, after two graces, ends it,
	// and its child with it.
	start := time.Now()
	m.Close()
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("Close took %v, want the two graces of 50ms before SIGKILL", took)
	}
	if proctest.Alive(who.Pid) {
		t.Errorf("the stubborn server %d outlived Close", who.Pid)
	}
	proctest.WaitUntil(t, testTimeout, "the server's child to die", func() bool { return !proctest.Alive(who.Child) })
}

// A server that reads its input and never answers initialize is stopped at the start
// timeout, and the error says it timed out (and after how long), not that it exited
// (closing its stdin made it exit with status 0).
func TestStartTimeoutSaysItTimedOut(t *testing.T) {
	m := newTestManager(t, Options{StartTimeout: 300 * time.Millisecond})
	h := m.Acquire("mute", ServerConfig{Command: "sh", Args: []string{"-c", "cat >/dev/null"}})
	defer h.Release()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := h.WaitReady(ctx)
	if err == nil {
		t.Fatal("WaitReady succeeded for a server that never answers")
	}
	for _, want := range []string{`"sh" did not answer initialize`, "within 300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "exited") {
		t.Errorf("error %q says the server exited; pid stopped it at the timeout", err)
	}
}

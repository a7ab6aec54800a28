package mcp

// ReleaseNow (a folder's trust revoked): the server another handle holds keeps running;
// once the last handle is given back with ReleaseNow it stops at once, whatever the linger.

import (
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
)

func TestReleaseNowSkipsTheLinger(t *testing.T) {
	m := newTestManager(t, Options{Linger: time.Hour})
	cfg := serverConfig(t)
	h := ready(t, m, "test", cfg)
	other := ready(t, m, "test", cfg)
	pid := serverPid(t, h)
	h.ReleaseNow()
	h.ReleaseNow() // idempotent
	if !proctest.Alive(pid) || len(m.Servers()) != 1 {
		t.Fatal("ReleaseNow stopped a server another handle holds")
	}
	if p := serverPid(t, other); p != pid {
		t.Fatalf("the other handle's server runs in %d, want %d", p, pid)
	}
	other.ReleaseNow()
	proctest.WaitUntil(t, testTimeout, "the server to exit without its hour of linger", func() bool { return !proctest.Alive(pid) && len(m.Servers()) == 0 })
}

//go:build unix

// This file tests that a folder's trust governs its MCP servers in the running sessions,
// through the real binary and the test MCP server: trusting the folder starts the servers
// its settings name (they used to start only in the next session), and trust/revoke stops
// them (they used to keep running) (issue 19).

package rpc

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/proctest"
)

func TestTrustStartsAndRevokeStopsWorkspaceMCPServers(t *testing.T) {
	xdgDirs(t)
	_, ws := newWorkspaceDir(t, map[string]string{
		".pid/settings.json": mustJSON(obj{"mcpServers": obj{"t": obj{"command": "pidtestmcp", "load": "eager"}}}),
	})
	d := startProcess(t, processOptions{})
	initWorkspace(d, obj{}, ws)
	sid := d.newSession(obj{"permissions": obj{"tools": obj{"mcp__t__*": "allow"}}})
	status := func() string {
		for _, s := range d.call("mcp/servers", obj{}).Get("servers").Array() {
			if s.Get("name").String() == "t" {
				return s.Get("status").String()
			}
		}
		return ""
	}
	if st := status(); st != "untrusted" {
		t.Fatalf("before trust, t is %q, want untrusted", st)
	}

	// Trusted mid-session: the server starts for the running session, and its tool runs.
	d.call("trust/grant", obj{"folder": ws})
	awaitServer(t, d, "t")
	m, _ := wsOne(t, d, sid, nil, "w1", "mcp__t__whoami", obj{})
	wsWantOK(t, m)
	pid := int(m.Get("details.pid").Int())
	if pid <= 0 {
		t.Fatalf("whoami gave no process id: %s", m.Raw)
	}

	// Revoked: the server's process ends, the session lists it as untrusted again, and its
	// tool no longer runs.
	d.call("trust/revoke", obj{"folder": ws})
	proctest.WaitUntil(t, 10*time.Second, fmt.Sprintf("the MCP server (process %d) to end after trust/revoke", pid), func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	if st := status(); st != "untrusted" {
		t.Errorf("after revoke, t is %q, want untrusted", st)
	}
	m, _ = wsOne(t, d, sid, nil, "w2", "mcp__t__whoami", obj{})
	if !m.Get("isError").Bool() || !strings.Contains(m.Get("content.0.text").String(), "t") {
		t.Errorf("a call of the revoked folder's server: %s", m.Raw)
	}
}

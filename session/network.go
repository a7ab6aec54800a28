// This file is a session's network outside its commands' sandbox (issue 37): the Asker of
// the hosts the allow-list does not know (package hostpolicy decides: network/allowHost to
// an editor that declared it, a refusal in auto mode or when the editor cannot ask, the
// workspace's remembered "allowAlways" answers), the proxy the fetch tool goes through, and
// the resolver a test may map names with.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync/atomic"

	"github.com/pid-agent/pid/hostpolicy"
	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/webfetch"
)

// NetworkTool is the pseudo-tool name of a remembered answer about a host: a
// permissions/list entry {tool: "network", pattern: HOST, decision: "allow"} lets every
// sandboxed command and fetch call of the workspace reach HOST without asking.
const NetworkTool = "network"

// HostQuestion is network/allowHost's question: a command (or a fetch call) of the
// session wants to reach a host the allow-list does not know; its connection waits.
type HostQuestion struct {
	// ToolCallID is the call whose command connects (a job's id for a background job).
	ToolCallID string
	Host       string
	Port       int
	// Command is what the person reads: the command line, or "fetch URL".
	Command string
}

// HostAsker is what a face implements when it can put a HostQuestion to the person. A
// face without it (or whose CanAskHost is false) gets every unknown host refused, the
// host named in the tool's result.
type HostAsker interface {
	// CanAskHost reports whether the client declared it can be asked about hosts
	// (capabilities.experimental.pid.networkApproval). Contract: any goroutine; never
	// blocks.
	CanAskHost() bool
	// AskHost asks the person and returns "allow", "allowAlways" or "deny" (anything
	// else denies). Contract: called from the proxy's goroutines, concurrently for
	// different hosts; must return once ctx ends (at most 60 s after the question); must
	// not call back into the session but for its ID. An error refuses the host.
	AskHost(ctx context.Context, s *Session, q HostQuestion) (string, error)
}

// hostAsker is a session's netproxy.Asker. The session is set once it is built; before
// that, no command runs.
type hostAsker struct {
	s atomic.Pointer[Session]
}

// AskHost implements netproxy.Asker (contract there) for the session once it is built
// (hostpolicy.Decide; before that, every host is refused): the workspace's remembered
// hosts, the session's mode now and its face's HostAsker decide.
func (a *hostAsker) AskHost(ctx context.Context, q netproxy.Question) (netproxy.Answer, error) {
	s := a.s.Load()
	if s == nil {
		return netproxy.Answer{Decision: netproxy.Deny}, nil
	}
	p := hostpolicy.Party{Remembered: s.rememberedHost, Auto: s.Mode() == ModeAuto, Remember: s.rememberHost}
	if ask, ok := s.face.(HostAsker); ok && ask.CanAskHost() {
		p.Ask = func(ctx context.Context, q netproxy.Question) (string, error) {
			return ask.AskHost(ctx, s, HostQuestion{ToolCallID: q.Caller.ID, Host: q.Host, Port: q.Port, Command: q.Caller.Command})
		}
	}
	return hostpolicy.Decide(ctx, q, p)
}

// rememberedHost reports whether the workspace remembered host as allowed always (in the
// store, or this session's memory when the store is unavailable). Exact names only.
func (s *Session) rememberedHost(host string) bool {
	scope := permissions.Scope(s.root())
	hit := func(e permissions.Remembered) bool {
		return e.Tool == NetworkTool && e.Scope == scope && e.Pattern == host && e.Decision == permissions.Allow
	}
	if st := s.host.store; st != nil {
		if l, err := st.List(); err == nil && slices.ContainsFunc(l.Permissions, hit) {
			return true
		}
	}
	l, _ := s.memory.List()
	return slices.ContainsFunc(l.Permissions, hit)
}

// rememberHost keeps an allowAlways answer about host for the workspace: in the store
// (listed and revocable in permissions/list), else in the session's memory.
func (s *Session) rememberHost(host string) {
	if st := s.host.store; st != nil {
		_, err := st.Remember(s.root(), NetworkTool, "", host, permissions.Allow)
		if err == nil {
			return
		}
		s.face.Warn(s, fmt.Sprintf("could not store the answer allowing %s always, kept for this session only: %v", host, err))
	}
	if _, err := s.memory.Remember(s.root(), NetworkTool, "", host, permissions.Allow); err != nil {
		s.face.Warn(s, fmt.Sprintf("the answer allowing %s applied to this session only: %v", host, err))
	}
}

// sessionNet is a session's network outside its commands: the Asker (also given to the
// commands' proxy) and the proxy and Fetcher of the fetch tool.
type sessionNet struct {
	asker   *hostAsker
	proxy   *netproxy.Proxy
	fetcher *webfetch.Fetcher
}

// newSessionNet makes a session's network from its resolved sandbox settings r. fetch runs
// in pid itself, outside any sandbox, so it always goes through a Proxy: with the sandbox
// off it may reach any host but the denied ones (never a private address), with the
// network off none.
func (h *Host) newSessionNet(r sandbox.Resolved, asker *hostAsker) (*sessionNet, error) {
	n := &sessionNet{asker: asker}
	set := r.Net
	if r.Mode == sandbox.ModeOff {
		set.Mode = netproxy.ModeOn
	}
	p, err := netproxy.New(netproxy.Config{Network: set, Asker: n.asker, Resolver: debugResolver(), Logf: h.proxyLog})
	if err != nil {
		return nil, invalid("sandbox: %v", err)
	}
	n.proxy = p
	n.fetcher = webfetch.New(webfetch.Config{Proxy: p, Redactor: h.redactor})
	return n, nil
}

// proxyLog is the proxies' log: one line per refusal and per problem.
func (h *Host) proxyLog(format string, args ...any) {
	h.log.Info("network proxy: " + fmt.Sprintf(format, args...))
}

// close ends fetch's proxy (its connections and questions).
func (n *sessionNet) close() {
	if n != nil {
		n.proxy.Close()
	}
}

// forget undoes a remembered host for the session's live proxies: the person revoked it.
func (n *sessionNet) forget(host string) {
	if n != nil {
		n.proxy.ForgetHost(host)
	}
}

// fetchTool returns the fetch tool of the session.
func (n *sessionNet) fetchTool() toolexec.Tool { return n.fetcher.Tool() }

// fetchToolSpec is fetch's name, description and parameters, for BuiltinTools.
func fetchToolSpec() toolexec.Tool {
	p, err := netproxy.New(netproxy.Config{Network: netproxy.Resolved{Mode: netproxy.ModeOff}})
	if err != nil {
		panic(err) // a constant configuration
	}
	defer p.Close()
	t := webfetch.New(webfetch.Config{Proxy: p}).Tool()
	t.Execute = nil
	return t
}

// forgetHost is called after a remembered answer was revoked: when it was about a host,
// the live sessions of its workspace stop letting it through (their open connections go
// on).
func (h *Host) forgetHost(e permissions.Remembered) {
	if e.Tool != NetworkTool || e.Pattern == "" {
		return
	}
	h.mu.Lock()
	var live []*Session
	for _, s := range h.sessions {
		live = append(live, s)
	}
	h.mu.Unlock()
	for _, s := range live {
		if permissions.Scope(s.root()) == e.Scope {
			s.net.forget(e.Pattern)
			s.ws.ForgetHost(e.Pattern)
		}
	}
}

// debugEnvResolve maps names to addresses for the proxies' resolver, for tests that stand
// a local server in for a registry: "name=ip,name=ip". Names not listed resolve as usual.
const debugEnvResolve = "PID_DEBUG_RESOLVE"

// debugResolver returns the resolver PID_DEBUG_RESOLVE asks for (hostpolicy.ParseResolve),
// nil (the system's) when it is unset or malformed.
func debugResolver() netproxy.Resolver {
	return hostpolicy.ParseResolve(os.Getenv(debugEnvResolve))
}

// SandboxReport is initialize's capabilities.experimental.pid.sandbox: what the kernel
// gives the sandbox, and the network the settings give commands: Network is
// "allowlist", true or false as the settings write it, Proxy says commands reach the
// outside only through pid's proxy (allowlist, with a sandbox and a network namespace).
type SandboxReport struct {
	SandboxCapability
	Network netproxy.Mode `json:"network"`
	Proxy   bool          `json:"proxy"`
}

// SandboxReport reports the sandbox for the user's settings and the editor's "sandbox"
// settings (initializationOptions; nil for none), before any workspace narrows them.
// Contract: safe for concurrent use; a malformed editor value counts as absent.
func (h *Host) SandboxReport(editor json.RawMessage) SandboxReport {
	c := SandboxStatus()
	var user sandbox.Settings
	if h.loader != nil {
		user, _, _ = h.loader.Sandbox("")
	}
	ed, _ := sandbox.Parse(editor)
	r := sandbox.Resolve(user, ed, sandbox.Settings{}, true)
	rep := SandboxReport{SandboxCapability: c, Network: r.Net.Mode}
	if r.Mode == sandbox.ModeOff {
		rep.Network = netproxy.ModeOn
	}
	rep.Proxy = c.Available && c.NetworkNamespaces && r.Mode != sandbox.ModeOff && r.Net.Mode == netproxy.ModeAllowlist
	return rep
}

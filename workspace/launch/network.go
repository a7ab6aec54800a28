// This file holds the allowlist network of a session's sandboxed commands (issue 37):
// pid's proxy (package netproxy) served on the listener the session's namespace holder
// made on its own 127.0.0.1, a Client (token) per command whose variables point the
// command at it, and the hosts it refused, named in the command's result.

package launch

import (
	"strings"
	"sync"

	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/sandbox"
)

// netBox is the proxy of a session's commands, made at the first command of the
// allowlist network and closed with the launcher.
type netBox struct {
	// mu guards the fields below it.
	mu    sync.Mutex
	proxy *netproxy.Proxy
	addr  string         // where commands reach it: the holder's 127.0.0.1:PORT
	serve sync.WaitGroup // the Serve loops
}

// wantsProxy reports whether the commands of the holder for network (the host's, or the
// session's own) reach the outside through pid's proxy: the settings ask for the allowlist.
func (l *Launcher) wantsProxy(network bool) bool {
	return !network && l.netSettings().Mode == netproxy.ModeAllowlist
}

// netSettings returns the network settings the launcher was given (the default's
// without).
func (l *Launcher) netSettings() netproxy.Resolved {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg == nil {
		return sandbox.Default().Net
	}
	return l.cfg.Settings.Net
}

// serveProxy serves the session's proxy (made at the first call) on the listener of the
// holder h, when it has one; a holder started again after dying gives a new listener,
// served by the same proxy (its allow answers kept). The error says why the proxy could
// not be made (the settings are not valid).
func (l *Launcher) serveProxy(h *sandbox.Holder) error {
	ln, addr := h.ProxyListener()
	if ln == nil {
		return nil
	}
	l.mu.Lock()
	cfg := l.cfg
	l.mu.Unlock()
	n := &l.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proxy == nil {
		pc := netproxy.Config{Network: l.netSettings()}
		if cfg != nil {
			pc.Asker, pc.Resolver, pc.Logf = cfg.Asker, cfg.Resolver, cfg.Logf
		}
		p, err := netproxy.New(pc)
		if err != nil {
			ln.Close()
			return err
		}
		n.proxy = p
	}
	n.addr = addr
	p := n.proxy
	n.serve.Add(1)
	go func() {
		defer n.serve.Done()
		p.Serve(ln)
	}()
	return nil
}

// proxyClient registers a command (the call id, a job's id for a job, and its command
// line) with the session's proxy and returns its Client and the variables that point
// it at the proxy; nil without a proxy.
func (l *Launcher) proxyClient(id, command string) (*netproxy.Client, []string) {
	n := &l.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proxy == nil {
		return nil, nil
	}
	c := n.proxy.Register(netproxy.Caller{ID: id, Command: command})
	return c, c.Env(n.addr)
}

// ForgetHost undoes an "allow always" answer about host for the session's commands: the
// person revoked it. Open connections go on. Safe for concurrent use.
func (l *Launcher) ForgetHost(host string) {
	n := &l.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proxy != nil {
		n.proxy.ForgetHost(host)
	}
}

// closeProxy ends the proxy (its connections and questions) and waits for its Serve
// loops. Called by Close once the holders are closed.
func (l *Launcher) closeProxy() {
	n := &l.net
	n.mu.Lock()
	p := n.proxy
	n.mu.Unlock()
	if p != nil {
		p.Close()
	}
	n.serve.Wait()
}

// ProxyRefusals records what the proxy refused to the command in its details and returns
// the lines for its result ("" when nothing was refused), then ends the command's token (a
// process it left behind is refused from now on). Contract: called once, once the command
// ended; safe on a nil Sandboxed (an unsandboxed command), which returns "".
func (s *Sandboxed) ProxyRefusals() string {
	if s == nil || s.client == nil {
		return ""
	}
	rs := s.client.Refusals()
	s.client.Close()
	if len(rs) == 0 {
		return ""
	}
	s.mu.Lock()
	s.details.RefusedHosts = rs
	s.mu.Unlock()
	return "\n\n" + netproxy.Summary(rs)
}

// injectedEnv returns the variables the proxy reads for injectHeaders ("env:NAME"): no
// command sees them, whatever their names look like, since the point of injecting a
// header is that the command never holds its value.
func injectedEnv(n netproxy.Resolved) []string {
	var out []string
	for _, hs := range n.InjectHeaders {
		for _, v := range hs {
			if name, ok := strings.CutPrefix(v, "env:"); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// Package netproxy is the network of a sandboxed session in "allowlist" mode: an HTTP proxy
// (CONNECT for https, absolute-URI requests for plain http) and a SOCKS5 proxy (CONNECT) on
// one listener the caller gives (a Unix socket, or a TCP listener made inside the session's
// network namespace), which resolve names themselves and connect only where the host rules
// let them: the allowed hosts (settings and presets), never the denied ones, never a
// private, loopback or link-local address unless listed as an exact IP (checked on the
// address actually dialled, after resolution, so DNS rebinding cannot reach one), and for
// any other host the person's answer through an Asker. Every refusal is recorded for the
// command whose connection it was (a Client, named by the token in the proxy credentials),
// and plain-http requests to a host from settings get headers whose values stay in pid.
//
// The entry points: ParseSettings and Resolve (the settings and their merge), New (a
// Proxy for a session), Proxy.Register (a Client for one command or tool call, whose Env
// points the command at the proxy), Proxy.Serve, and Proxy.Dial for pid's own tools (fetch).
//
// This file holds the Proxy, its Clients, the Asker contract and the decision for one
// connection: the rules, the question, the resolution and the checked dial.
package netproxy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// AskTimeout is how long a connection waits for the Asker's answer before it is refused.
const AskTimeout = 60 * time.Second

const (
	// maxConns caps the client connections served at once (each costs goroutines and an
	// upstream socket); more are closed at once.
	maxConns = 512
	// handshakeTimeout bounds the time a client takes to say what it wants.
	handshakeTimeout = 30 * time.Second
	// dialTimeout bounds one resolution and one connection attempt.
	dialTimeout = 15 * time.Second
)

// ErrClosed is returned by Serve once the Proxy is closed.
var ErrClosed = errors.New("netproxy: proxy closed")

// Decision is an Asker's answer.
type Decision string

// The answers.
const (
	// Allow lets the caller (the command or tool call) reach the host for the rest of its
	// life.
	Allow Decision = "allow"
	// AllowAlways lets every caller of this Proxy reach the host; the Asker remembers it for
	// the workspace itself.
	AllowAlways Decision = "allowAlways"
	// Deny refuses the host to the caller for the rest of its life, without asking again.
	Deny Decision = "deny"
)

// Caller says who a connection is for, as a question shows it.
type Caller struct {
	// ID is the tool call's id (or a job's); "" for a connection without credentials.
	ID string
	// Command is what the person sees: the command line, or "fetch URL".
	Command string
}

// Question asks about one unknown host.
type Question struct {
	Caller Caller
	// Host is the host as normalised (lower case; an IP's canonical text); Port the port
	// of the connection that asks (the answer covers the host, every port).
	Host string
	Port int
}

// Answer is the person's (or the caller's policy's) decision.
type Answer struct {
	Decision Decision
	// Reason, for Deny, is the refusal's reason as the command's result shows it
	// (ReasonNotAllowed when empty); an auto mode that refuses without asking says here
	// how the person can allow the host.
	Reason string
}

// Asker decides about hosts the rules do not know.
//
// Contract: the Proxy calls AskHost from its own goroutine, concurrently for different
// hosts and callers, never twice at once for one caller and host (connections that need the
// same answer wait for one question). It must answer within ctx: ctx ends AskTimeout (60 s)
// after the question, or when the Proxy closes, and the Proxy stops waiting then and
// refuses the connection whatever comes later. It must not call the Proxy's Close. It is
// never asked about denied hosts nor about private, loopback or link-local addresses. An
// error refuses the host to the caller (reason "not in the allowed hosts; could not ask:
// ..."), as Deny does; a panic is caught and counts as an error.
type Asker interface {
	AskHost(ctx context.Context, q Question) (Answer, error)
}

// AskerFunc is a function as an Asker.
type AskerFunc func(ctx context.Context, q Question) (Answer, error)

// AskHost calls f.
func (f AskerFunc) AskHost(ctx context.Context, q Question) (Answer, error) { return f(ctx, q) }

// Resolver looks up the addresses of a name. *net.Resolver is one.
//
// Contract: called concurrently by the Proxy with network "ip"; it must return within ctx
// (which has a deadline) and may return IPv4-mapped IPv6 addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what a Proxy needs.
type Config struct {
	// Network is the session's resolved settings (Resolve).
	Network Resolved
	// Asker is asked about unknown hosts; nil refuses them ("not in the allowed hosts").
	Asker Asker
	// Resolver resolves names; nil is net.DefaultResolver.
	Resolver Resolver
	// Getenv reads the variables injectHeaders names, at request time; nil is
	// os.LookupEnv. It must be safe for concurrent use.
	Getenv func(string) (string, bool)
	// Logf, if set, is given one line per refusal and per problem (never a header's
	// value). It must be safe for concurrent use and must not block.
	Logf func(format string, args ...any)

	// dial replaces the checked dialer in this package's tests (to see what is dialled
	// without dialling it).
	dial func(ctx context.Context, ap netip.AddrPort) (net.Conn, error)
}

// Proxy is a session's proxy. Safe for concurrent use.
type Proxy struct {
	rules    *Rules
	inject   map[string]map[string]string
	asker    Asker
	resolver Resolver
	getenv   func(string) (string, bool)
	logf     func(format string, args ...any)
	dialFn   func(ctx context.Context, ap netip.AddrPort) (net.Conn, error)

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	sem    chan struct{}
	http   *http.Server
	httpL  *chanListener
	anon   *Client
	wg     sync.WaitGroup // connections being served

	// mu guards the fields below, and the Clients' fields it is named for.
	mu        sync.Mutex
	clients   map[string]*Client // by token
	always    map[string]bool    // hosts allowed for every caller (AllowAlways, AllowHost)
	asks      map[askKey]*pendingAsk
	conns     map[net.Conn]struct{}
	listeners map[net.Listener]struct{}
	httpOn    bool
	closed    bool
}

// New returns a Proxy for the settings in cfg. It serves nothing until Serve. The error says
// what in cfg.Network is not valid (Resolve's output always is).
func New(cfg Config) (*Proxy, error) {
	mode := cfg.Network.Mode
	if mode == "" {
		mode = ModeAllowlist
	}
	rules, err := compileRules(mode, cfg.Network.Allowed, cfg.Network.Denied)
	if err != nil {
		return nil, err
	}
	inject := map[string]map[string]string{}
	if err := (Settings{InjectHeaders: cfg.Network.InjectHeaders}).Validate(); err != nil {
		return nil, err
	}
	for h, hs := range cfg.Network.InjectHeaders {
		n, _, _ := normalizeHost(h)
		inject[n] = hs
	}
	p := &Proxy{
		rules:     rules,
		inject:    inject,
		asker:     cfg.Asker,
		resolver:  cfg.Resolver,
		getenv:    cfg.Getenv,
		logf:      cfg.Logf,
		dialFn:    cfg.dial,
		sem:       make(chan struct{}, maxConns),
		clients:   map[string]*Client{},
		always:    map[string]bool{},
		asks:      map[askKey]*pendingAsk{},
		conns:     map[net.Conn]struct{}{},
		listeners: map[net.Listener]struct{}{},
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.getenv == nil {
		p.getenv = os.LookupEnv
	}
	if p.logf == nil {
		p.logf = func(string, ...any) {}
	}
	if p.dialFn == nil {
		p.dialFn = dialChecked
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.anon = &Client{p: p}
	p.httpL = newChanListener()
	p.http = newHTTPServer(p)
	return p, nil
}

// Client is one command's (or tool call's) view of the Proxy: the token its connections
// present, and what was refused to them.
type Client struct {
	p      *Proxy
	caller Caller
	token  string

	// Guarded by p.mu.
	refusals []Refusal
	once     map[string]bool   // hosts the person allowed to this caller
	no       map[string]string // hosts refused to this caller without asking again: why
}

// Register returns a Client for one caller, with a fresh token. Safe for concurrent use.
func (p *Proxy) Register(c Caller) *Client {
	cl := &Client{p: p, caller: c, token: "pid-" + rand.Text()}
	p.mu.Lock()
	p.clients[cl.token] = cl
	p.mu.Unlock()
	return cl
}

// Anonymous returns the Client of connections that present no credentials (a tool that
// ignores the proxy URL's user): its refusals are the session's, not a command's.
func (p *Proxy) Anonymous() *Client { return p.anon }

// Token returns the credential the caller's connections present: the user of the proxy
// URL (http://TOKEN@127.0.0.1:PORT), or the SOCKS5 user name.
func (c *Client) Token() string { return c.token }

// Caller returns who the Client is for.
func (c *Client) Caller() Caller { return c.caller }

// Refusals returns the refusals recorded for the Client's connections so far, in the order
// they first happened. Safe for concurrent use, also after Close.
func (c *Client) Refusals() []Refusal {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return append([]Refusal(nil), c.refusals...)
}

// Close ends the Client's token: later connections presenting it are refused with 407 (or a
// SOCKS authentication failure); open ones go on. Its refusals stay readable.
func (c *Client) Close() {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	delete(c.p.clients, c.token)
}

// Env returns the environment that points a command at the proxy listening at addr
// (host:port as the command reaches it, 127.0.0.1:PORT in its network namespace) with the
// Client's token: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (socks5h, so names are resolved by
// the proxy) in upper and lower case, NO_PROXY and no_proxy, and NODE_USE_ENV_PROXY=1 (Node's
// own fetch honours the variables only with it).
func (c *Client) Env(addr string) []string {
	h := "http://" + c.token + "@" + addr
	s := "socks5h://" + c.token + "@" + addr
	return []string{
		"HTTP_PROXY=" + h, "HTTPS_PROXY=" + h, "ALL_PROXY=" + s,
		"http_proxy=" + h, "https_proxy=" + h, "all_proxy=" + s,
		"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1",
		"NODE_USE_ENV_PROXY=1",
	}
}

// clientOf returns the Client whose token a connection presented ("" for none: the
// anonymous Client), and false for a token that is unknown or closed.
func (p *Proxy) clientOf(token string) (*Client, bool) {
	if token == "" {
		return p.anon, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.clients[token]
	return c, ok
}

// AllowHost lets host (an exact host name or a public IP) through for every caller from now
// on, as an AllowAlways answer does: the session calls it with the hosts remembered for the
// workspace, and when the person allows one "always" in another session. Safe for
// concurrent use.
func (p *Proxy) AllowHost(host string) error {
	h, ip, why := normalizeHost(host)
	switch {
	case why != "":
		return fmt.Errorf("%q is %s", host, why)
	case ip.IsValid() && specialAddress(ip) != "":
		return fmt.Errorf("%s is %s: only an exact IP in sandbox.allowedHosts lets one through", h, specialAddress(ip))
	case h == "localhost" || len(h) > 10 && h[len(h)-10:] == ".localhost":
		return fmt.Errorf("%s is always refused", h)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.always[h] = true
	return nil
}

// ForgetHost undoes AllowHost (and an AllowAlways answer) for host: the person revoked it.
// Open connections go on. Safe for concurrent use.
func (p *Proxy) ForgetHost(host string) {
	h, _, _ := normalizeHost(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.always, h)
}

// target is a destination the rules let through: the host as normalised, its address when
// it is an IP, the port.
type target struct {
	host string
	ip   netip.Addr
	port int
}

// refuse records a refusal for c and returns it as an error.
func (p *Proxy) refuse(c *Client, host string, port int, reason string) error {
	r := Refusal{Host: printable(host), Port: port, Reason: reason}
	p.mu.Lock()
	c.refusals = addRefusal(c.refusals, r)
	p.mu.Unlock()
	p.logf("netproxy: refused %s for %q", r.String(), c.caller.ID)
	r.Count = 1
	return &RefusedError{Refusal: r}
}

// Authorize decides whether c may connect to host:port, asking the Asker about an unknown
// host (waiting at most AskTimeout): nil when it may, a *RefusedError (recorded for c) when
// it may not, ctx's error when ctx ended first. It does not resolve the name: a private
// address it resolves to is refused at Dial. Safe for concurrent use.
func (p *Proxy) Authorize(ctx context.Context, c *Client, host string, port int) error {
	_, err := p.authorize(ctx, c, host, port)
	return err
}

// authorize is Authorize, returning the normalised target.
func (p *Proxy) authorize(ctx context.Context, c *Client, host string, port int) (target, error) {
	h, ip, why := normalizeHost(host)
	if why != "" {
		return target{}, p.refuse(c, host, port, why)
	}
	if port < 1 || port > 65535 {
		return target{}, p.refuse(c, h, port, "not a valid port")
	}
	t := target{host: h, ip: ip, port: port}
	if p.rules.mode == ModeOff {
		return t, p.refuse(c, h, port, ReasonOff)
	}
	if h == "localhost" || len(h) > 10 && h[len(h)-10:] == ".localhost" {
		return t, p.refuse(c, h, port, ReasonLocalhost)
	}
	v := p.rules.check(h)
	if v == denied {
		return t, p.refuse(c, h, port, ReasonDenied)
	}
	if ip.IsValid() {
		if what := specialAddress(ip); what != "" && !p.rules.listsIP(ip) {
			return t, p.refuse(c, h, port, what)
		}
	}
	if v == allowed || p.rules.mode == ModeOn {
		return t, nil
	}
	ok, reason, err := p.ask(ctx, c, t)
	if err != nil {
		return t, err
	}
	if !ok {
		return t, p.refuse(c, h, port, reason)
	}
	return t, nil
}

// askKey names one question: a caller and a host.
type askKey struct {
	c    *Client
	host string
}

// pendingAsk is a question being asked; done is closed once ok and reason are set.
type pendingAsk struct {
	done   chan struct{}
	ok     bool
	reason string
}

// ask returns whether the person lets c reach t.host, asking unless an earlier answer
// holds, and the refusal's reason when not. Connections waiting for the same answer share
// one question.
func (p *Proxy) ask(ctx context.Context, c *Client, t target) (bool, string, error) {
	p.mu.Lock()
	switch {
	case p.always[t.host] || c.once[t.host]:
		p.mu.Unlock()
		return true, "", nil
	case c.no[t.host] != "":
		why := c.no[t.host]
		p.mu.Unlock()
		return false, why, nil
	case p.asker == nil:
		p.mu.Unlock()
		return false, ReasonNotAllowed, nil
	case p.closed:
		p.mu.Unlock()
		return false, "the proxy is closing", nil
	}
	key := askKey{c, t.host}
	pa := p.asks[key]
	if pa == nil {
		pa = &pendingAsk{done: make(chan struct{})}
		p.asks[key] = pa
		go p.runAsk(key, pa, Question{Caller: c.caller, Host: t.host, Port: t.port})
	}
	p.mu.Unlock()
	select {
	case <-pa.done:
		return pa.ok, pa.reason, nil
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}

// runAsk asks the Asker and publishes its answer, or a refusal once AskTimeout passed.
func (p *Proxy) runAsk(key askKey, pa *pendingAsk, q Question) {
	actx, cancel := context.WithTimeout(p.ctx, AskTimeout)
	defer cancel()
	type reply struct {
		a   Answer
		err error
	}
	res := make(chan reply, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				res <- reply{err: fmt.Errorf("the question failed: %v", v)}
			}
		}()
		a, err := p.asker.AskHost(actx, q)
		res <- reply{a, err}
	}()
	var ok bool
	var reason string
	always := false
	select {
	case r := <-res:
		switch {
		case r.err != nil && actx.Err() != nil && p.ctx.Err() == nil:
			reason = reasonNoAnswer // an Asker that gave up at the deadline
		case r.err != nil:
			reason = ReasonNotAllowed + "; could not ask: " + r.err.Error()
		case r.a.Decision == Allow:
			ok = true
		case r.a.Decision == AllowAlways:
			ok, always = true, true
		case r.a.Decision == Deny && r.a.Reason != "":
			reason = r.a.Reason
		case r.a.Decision == Deny:
			reason = ReasonNotAllowed
		default:
			reason = fmt.Sprintf("%s; the answer %q is not allow, allowAlways or deny", ReasonNotAllowed, r.a.Decision)
		}
	case <-actx.Done():
		reason = reasonNoAnswer
		if p.ctx.Err() != nil {
			reason = "the proxy is closing"
		}
	}
	p.mu.Lock()
	switch {
	case always:
		p.always[key.host] = true
	case ok:
		if key.c.once == nil {
			key.c.once = map[string]bool{}
		}
		key.c.once[key.host] = true
	default:
		if key.c.no == nil {
			key.c.no = map[string]string{}
		}
		key.c.no[key.host] = reason
	}
	delete(p.asks, key)
	pa.ok, pa.reason = ok, reason
	p.mu.Unlock()
	close(pa.done)
}

// Dial connects to host:port for c as a proxied connection of c's would: Authorize, then
// the resolution and the checked dial (dialTarget). The connection belongs to the caller.
// Errors: a *RefusedError (recorded for c), or a resolution or connection error. Safe for
// concurrent use.
func (p *Proxy) Dial(ctx context.Context, c *Client, host string, port int) (net.Conn, error) {
	t, err := p.authorize(ctx, c, host, port)
	if err != nil {
		return nil, err
	}
	return p.dialTarget(ctx, c, t)
}

// dialTarget resolves t's name (once), keeps the addresses that may be dialled (not
// denied; not private, loopback or link-local unless listed as an exact IP), and dials them
// in turn, each by the address that was checked, so that a resolver answering differently
// the next time changes nothing. A name whose every address is refused is a refusal.
func (p *Proxy) dialTarget(ctx context.Context, c *Client, t target) (net.Conn, error) {
	addrs := []netip.Addr{t.ip}
	if !t.ip.IsValid() {
		lctx, cancel := context.WithTimeout(ctx, dialTimeout)
		ips, err := p.resolver.LookupNetIP(lctx, "ip", t.host)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s does not resolve: %w", t.host, err)
		}
		addrs = ips
	}
	var usable []netip.Addr
	why := ""
	for _, ip := range addrs {
		ip = ip.Unmap()
		what := specialAddress(ip)
		if what != "" && p.rules.listsIP(ip) {
			what = ""
		}
		if what == "" && p.rules.check(ip.String()) == denied {
			what = "an address in the denied hosts"
		}
		if what != "" {
			if why == "" {
				why = what + " (" + ip.String() + ")"
				if !t.ip.IsValid() {
					why = "resolves to " + why
				}
			}
			continue
		}
		usable = append(usable, ip)
	}
	if len(usable) == 0 {
		if why == "" {
			return nil, fmt.Errorf("%s has no address", t.host)
		}
		return nil, p.refuse(c, t.host, t.port, why)
	}
	var firstErr error
	for _, ip := range usable {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		conn, err := p.dialFn(dctx, netip.AddrPortFrom(ip, uint16(t.port)))
		cancel()
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// errNotChecked is returned when the kernel is about to connect somewhere else than the
// address that was checked; it cannot happen unless this file is changed so that a name is
// dialled, and guards against that.
var errNotChecked = errors.New("netproxy: the address being connected is not the one checked")

// dialChecked connects to ap, and only to ap: the socket's address is compared with it
// just before connect(2).
func dialChecked(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
		got, err := netip.ParseAddrPort(address)
		if err != nil || got.Addr().Unmap() != ap.Addr().Unmap() || got.Port() != ap.Port() {
			return errNotChecked
		}
		return nil
	}}
	return d.DialContext(ctx, "tcp", ap.String())
}

// Close stops every Serve, closes every connection (tunnels included) and refuses the
// questions still waiting. It waits for the connections' goroutines, not for an Asker
// that has not returned. Safe to call more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	ls := make([]net.Listener, 0, len(p.listeners))
	for l := range p.listeners {
		ls = append(ls, l)
	}
	cs := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	p.cancel()
	for _, l := range ls {
		l.Close()
	}
	p.httpL.Close()
	p.http.Close()
	for _, c := range cs {
		c.Close()
	}
	p.wg.Wait()
	return nil
}

// Serve accepts connections on l until l fails or the Proxy closes, serving each as HTTP or
// SOCKS5 (told apart by their first byte). It closes l when it returns, with ErrClosed
// after Close, or l's error. Serve may run on several listeners at once.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	if !p.httpOn {
		p.httpOn = true
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.http.Serve(p.httpL)
		}()
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
		l.Close()
	}()
	var backoff time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if p.ctx.Err() != nil {
				return ErrClosed
			}
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				p.logf("netproxy: accept: %v; retrying in %v", err, backoff)
				select {
				case <-time.After(backoff):
				case <-p.ctx.Done():
				}
				continue
			}
			return err
		}
		backoff = 0
		select {
		case p.sem <- struct{}{}:
		default:
			p.logf("netproxy: %d connections already open; closing a new one", maxConns)
			conn.Close()
			continue
		}
		tc := p.track(conn, func() { <-p.sem })
		if tc == nil {
			return ErrClosed
		}
		go p.handle(tc)
	}
}

// handle tells HTTP from SOCKS5 by the first byte and serves the connection.
func (p *Proxy) handle(c *trackedConn) {
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	b, err := c.r.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	if b[0] == socksVersion {
		p.serveSOCKS(c)
		return
	}
	if !p.httpL.deliver(c) {
		c.Close()
	}
}

// printable returns s with bytes other than printable ASCII replaced by '?', at most 255
// bytes: a host name from a client goes into results and logs.
func printable(s string) string {
	if len(s) > 255 {
		s = s[:255]
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x21 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// hostPort splits "host:port" with a numeric port.
func hostPort(s string) (string, int, error) {
	h, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("%q is not a port", ps)
	}
	return h, port, nil
}

// The proxy over real sockets: allowed hosts through HTTP CONNECT, plain HTTP and SOCKS5
// (curl when installed, and Go clients over a Unix socket), refusals named per command,
// the Asker's answers, private addresses refused after resolution, DNS rebinding, header
// injection, credentials, SOCKS commands that are not supported, and Close.

package netproxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	xproxy "golang.org/x/net/proxy"
)

// only keeps the variables of env named in names.
func only(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		n, _, _ := strings.Cut(kv, "=")
		if slices.Contains(names, n) {
			out = append(out, kv)
		}
	}
	return out
}

// TestAllowedHostWithCurl: curl, given a Client's environment and nothing else, reaches an
// allowed host (a name the proxy's resolver maps to 127.0.0.2, listed as an exact IP) with
// plain http, https through CONNECT, and SOCKS5 with names resolved by the proxy; the
// token never reaches the server.
func TestAllowedHostWithCurl(t *testing.T) {
	plain := newServer(t, "127.0.0.2", "registry", false)
	secure := newServer(t, "127.0.0.2", "registry-tls", true)
	res := newResolver(map[string]string{"registry.test": "127.0.0.2"})
	p, addr := startProxy(t, Config{
		Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
		Resolver: res,
	}, nil, nil)
	c := p.Register(Caller{ID: "call-1", Command: "curl registry.test"})
	env := c.Env(addr)

	code, out := curl(t, env, fmt.Sprintf("http://registry.test:%d/plain", plain.port()))
	if code != 0 || out != "hello from registry: GET /plain\n" {
		t.Errorf("plain http: exit %d, output %q", code, out)
	}
	code, out = curl(t, env, "-k", fmt.Sprintf("https://registry.test:%d/tls", secure.port()))
	if code != 0 || out != "hello from registry-tls: GET /tls\n" {
		t.Errorf("https through CONNECT: exit %d, output %q", code, out)
	}
	socksEnv := only(env, "ALL_PROXY", "all_proxy", "NO_PROXY")
	if !strings.HasPrefix(socksEnv[0], "ALL_PROXY=socks5h://pid-") {
		t.Fatalf("ALL_PROXY is %q, want socks5h with the token", socksEnv[0])
	}
	code, out = curl(t, socksEnv, "-k", fmt.Sprintf("https://registry.test:%d/socks", secure.port()))
	if code != 0 || out != "hello from registry-tls: GET /socks\n" {
		t.Errorf("https through SOCKS5: exit %d, output %q", code, out)
	}
	if got := c.Refusals(); len(got) != 0 {
		t.Errorf("refusals %v, want none", got)
	}
	for _, r := range plain.requests() {
		if h := r.Header.Get("Proxy-Authorization"); h != "" {
			t.Errorf("the server got the proxy credentials: %q", h)
		}
	}
}

// TestUnixSocketGoClients: Go clients reach an allowed host through a proxy served on a
// Unix socket, by CONNECT, plain http and SOCKS5 (with the token as the user name).
func TestUnixSocketGoClients(t *testing.T) {
	plain := newServer(t, "127.0.0.2", "registry", false)
	secure := newServer(t, "127.0.0.2", "registry-tls", true)
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{
		Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
		Resolver: newResolver(map[string]string{"registry.test": "127.0.0.2"}),
	}, nil, l)
	c := p.Register(Caller{ID: "call-1"})
	hc := proxyClient("unix", path, c.Token())
	if code, body := get(t, hc, fmt.Sprintf("https://registry.test:%d/a", secure.port())); code != 200 || body != "hello from registry-tls: GET /a\n" {
		t.Errorf("CONNECT: %d %q", code, body)
	}
	if code, body := get(t, hc, fmt.Sprintf("http://registry.test:%d/b", plain.port())); code != 200 || body != "hello from registry: GET /b\n" {
		t.Errorf("plain: %d %q", code, body)
	}
	d, err := xproxy.SOCKS5("unix", path, &xproxy.Auth{User: c.Token(), Password: "x"}, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.Dial("tcp", fmt.Sprintf("registry.test:%d", plain.port()))
	if err != nil {
		t.Fatalf("SOCKS5: %v", err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /c HTTP/1.0\r\nHost: registry.test\r\n\r\n")
	b, _ := io.ReadAll(conn)
	if !strings.HasSuffix(string(b), "hello from registry: GET /c\n") {
		t.Errorf("SOCKS5: got %q", b)
	}
}

// TestUnlistedHostRefusedAndNamed: without an Asker, a host not in the allowed hosts is
// refused by every route, the refusals are recorded for the command (with host:port and
// reason, repeats counted) and summarised in the bash result's words, and the name is not
// even resolved (no DNS query leaks it).
func TestUnlistedHostRefusedAndNamed(t *testing.T) {
	plain := newServer(t, "127.0.0.2", "registry", false)
	secure := newServer(t, "127.0.0.2", "registry-tls", true)
	res := newResolver(map[string]string{"unknown.test": "127.0.0.2", "registry.test": "127.0.0.2"})
	g := &guardDialer{}
	p, addr := startProxy(t, Config{
		Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
		Resolver: res,
	}, g, nil)
	c := p.Register(Caller{ID: "call-2", Command: "curl unknown.test"})
	env := c.Env(addr)

	code, out := curl(t, env, fmt.Sprintf("http://unknown.test:%d/", plain.port()))
	want := fmt.Sprintf("pid's proxy refused: unknown.test:%d (not in the allowed hosts)\n", plain.port())
	if code != 0 || out != want {
		t.Errorf("plain http: exit %d, output %q, want the 403's text %q", code, out, want)
	}
	if code, out := curl(t, env, "-k", fmt.Sprintf("https://unknown.test:%d/", secure.port())); code == 0 || !strings.Contains(out, "403") {
		t.Errorf("https: exit %d, output %q, want a failure naming the 403", code, out)
	}
	if code, out := curl(t, only(env, "ALL_PROXY"), "-k", fmt.Sprintf("https://unknown.test:%d/", secure.port())); code == 0 {
		t.Errorf("SOCKS5: exit 0, output %q", out)
	}
	wantRefusals := []Refusal{
		{Host: "unknown.test", Port: plain.port(), Reason: ReasonNotAllowed, Count: 1},
		{Host: "unknown.test", Port: secure.port(), Reason: ReasonNotAllowed, Count: 2},
	}
	if diff := cmp.Diff(wantRefusals, c.Refusals()); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	wantSummary := fmt.Sprintf("[pid's proxy refused: unknown.test:%d (not in the allowed hosts)]\n[pid's proxy refused: unknown.test:%d (not in the allowed hosts) ×2]", plain.port(), secure.port())
	if got := Summary(c.Refusals()); got != wantSummary {
		t.Errorf("Summary:\n%s\nwant:\n%s", got, wantSummary)
	}
	if n := res.count("unknown.test"); n != 0 {
		t.Errorf("unknown.test was resolved %d times before anyone allowed it", n)
	}
	if len(plain.requests())+len(secure.requests()) != 0 || len(g.list()) != 0 {
		t.Errorf("something was dialled: %v", g.list())
	}
	if got := p.Anonymous().Refusals(); len(got) != 0 {
		t.Errorf("the anonymous client got %v", got)
	}
}

// TestAskerAnswers: allowAlways lets every caller through without asking again (until
// ForgetHost); allow lets the caller that was asked through for its life, and another
// caller is asked again; deny refuses the caller with the Asker's reason without asking
// again, and another caller is asked.
func TestAskerAnswers(t *testing.T) {
	srv := newServer(t, "127.0.0.2", "registry", false)
	asker := &recordingAsker{answers: map[string]Answer{
		"always.test": {Decision: AllowAlways},
		"once.test":   {Decision: Allow},
		"no.test":     {Decision: Deny, Reason: "the person said no"},
	}}
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{
		Network:  Resolved{Allowed: []string{"127.0.0.2"}},
		Asker:    asker,
		Resolver: newResolver(map[string]string{"always.test": "127.0.0.2", "once.test": "127.0.0.2", "no.test": "127.0.0.2"}),
	}, nil, l)
	c1 := p.Register(Caller{ID: "call-1", Command: "npm install"})
	c2 := p.Register(Caller{ID: "call-2", Command: "pip install x"})
	h1 := proxyClient("unix", path, c1.Token())
	h2 := proxyClient("unix", path, c2.Token())
	url := func(host string) string { return fmt.Sprintf("http://%s:%d/", host, srv.port()) }
	mustGet := func(hc *http.Client, host string, wantCode int) {
		t.Helper()
		if code, body := get(t, hc, url(host)); code != wantCode {
			t.Errorf("%s: %d %q, want %d", host, code, body, wantCode)
		}
	}
	mustGet(h1, "always.test", 200)
	mustGet(h1, "always.test", 200)
	mustGet(h2, "always.test", 200)
	mustGet(h1, "once.test", 200)
	mustGet(h1, "once.test", 200)
	mustGet(h2, "once.test", 200)
	mustGet(h1, "no.test", 403)
	mustGet(h1, "no.test", 403)
	mustGet(h2, "no.test", 403)
	p.ForgetHost("always.test")
	mustGet(h2, "always.test", 200)

	port := srv.port()
	want := []Question{
		{Caller: Caller{ID: "call-1", Command: "npm install"}, Host: "always.test", Port: port},
		{Caller: Caller{ID: "call-1", Command: "npm install"}, Host: "once.test", Port: port},
		{Caller: Caller{ID: "call-2", Command: "pip install x"}, Host: "once.test", Port: port},
		{Caller: Caller{ID: "call-1", Command: "npm install"}, Host: "no.test", Port: port},
		{Caller: Caller{ID: "call-2", Command: "pip install x"}, Host: "no.test", Port: port},
		{Caller: Caller{ID: "call-2", Command: "pip install x"}, Host: "always.test", Port: port},
	}
	if diff := cmp.Diff(want, asker.questions()); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Refusal{{Host: "no.test", Port: port, Reason: "the person said no", Count: 2}}, c1.Refusals()); diff != "" {
		t.Errorf("call-1's refusals (-want +got):\n%s", diff)
	}
	if code, body := get(t, h2, url("no.test")); code != 403 || body != fmt.Sprintf("pid's proxy refused: no.test:%d (the person said no)\n", port) {
		t.Errorf("the refusal's text: %d %q", code, body)
	}
}

// TestPrivateAddressesRefused: names in the allowed hosts that resolve to loopback,
// link-local (the metadata service), IPv4-mapped IPv6 forms of those, or unique-local
// addresses are refused after resolution, and so are IP literals of those kinds and
// localhost; the Asker (which would allow anything) is never asked, nothing is dialled,
// and localhost is not even resolved.
func TestPrivateAddressesRefused(t *testing.T) {
	local := newServer(t, "127.0.0.1", "host-local", false)
	port := local.port()
	asker := &recordingAsker{answers: map[string]Answer{}}
	res := newResolver(map[string]string{
		"loop.test":        "127.0.0.1",
		"meta.test":        "169.254.169.254",
		"mapped.test":      "::ffff:127.0.0.1",
		"mapped-meta.test": "::ffff:169.254.169.254",
		"ula.test":         "fd00::1",
		"nat64.test":       "64:ff9b::7f00:1",
		"localhost":        "127.0.0.1",
	})
	g := &guardDialer{}
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{
		Network: Resolved{Allowed: []string{"loop.test", "meta.test", "mapped.test", "mapped-meta.test", "ula.test", "nat64.test"}},
		Asker: AskerFunc(func(ctx context.Context, q Question) (Answer, error) {
			asker.AskHost(ctx, q)
			return Answer{Decision: Allow}, nil
		}),
		Resolver: res,
	}, g, l)
	c := p.Register(Caller{ID: "call-3"})
	hc := proxyClient("unix", path, c.Token())
	for _, tc := range []struct{ host, reason string }{
		{"loop.test", "resolves to a loopback address (127.0.0.1)"},
		{"meta.test", "resolves to a link-local address (169.254.169.254)"},
		{"mapped.test", "resolves to a loopback address (127.0.0.1)"},
		{"mapped-meta.test", "resolves to a link-local address (169.254.169.254)"},
		{"ula.test", "resolves to a unique-local address (fd00::1)"},
		{"nat64.test", "resolves to a loopback address (inside an IPv6 address) (64:ff9b::7f00:1)"},
		{"127.0.0.1", "a loopback address"},
		{"169.254.169.254", "a link-local address"},
		{"[::ffff:127.0.0.1]", "a loopback address"},
		{"[::1]", "a loopback address"},
		{"10.1.2.3", "a private address"},
		{"100.64.0.1", "a shared (CGNAT) address"},
		{"[::]", "an unspecified address"},
		{"localhost", ReasonLocalhost},
		{"api.localhost", ReasonLocalhost},
	} {
		for _, scheme := range []string{"http", "https"} {
			code, body := get(t, hc, fmt.Sprintf("%s://%s:%d/", scheme, tc.host, port))
			if scheme == "http" && (code != 403 || !strings.HasSuffix(body, "("+tc.reason+")\n")) {
				t.Errorf("%s %s: %d %q, want 403 with (%s)", scheme, tc.host, code, body, tc.reason)
			}
			if scheme == "https" && (code != 0 || !strings.Contains(body, "Forbidden")) {
				t.Errorf("%s %s: %d %q, want the CONNECT refused", scheme, tc.host, code, body)
			}
		}
	}
	// And through SOCKS5, by IPv4-mapped IPv6 address.
	d, err := xproxy.SOCKS5("unix", path, &xproxy.Auth{User: c.Token(), Password: "x"}, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := d.Dial("tcp", fmt.Sprintf("[::ffff:127.0.0.1]:%d", port)); err == nil {
		conn.Close()
		t.Error("SOCKS5 to ::ffff:127.0.0.1 was let through")
	}
	if q := asker.questions(); len(q) != 0 {
		t.Errorf("the Asker was asked %v", q)
	}
	if d := g.list(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
	if len(local.requests()) != 0 {
		t.Error("the host's local server got a request")
	}
	if n := res.count("localhost"); n != 0 {
		t.Errorf("localhost was resolved %d times", n)
	}
	got := map[string]bool{}
	for _, r := range c.Refusals() {
		got[r.Host] = true
	}
	for _, h := range []string{"loop.test", "meta.test", "127.0.0.1", "::1", "localhost", "10.1.2.3"} {
		if !got[h] {
			t.Errorf("no refusal recorded for %s: %v", h, c.Refusals())
		}
	}
}

// TestDNSRebinding: a resolver that answers a public address, then a loopback one: the
// connection goes to the address that was checked (one lookup, that address dialled), and
// the next connection, whose lookup answers loopback, is refused without a dial. A name
// with both kinds of address is dialled only on the public one.
func TestDNSRebinding(t *testing.T) {
	srv := newServer(t, "127.0.0.2", "registry", false)
	res := newResolver(map[string]string{
		"rebind.test": "203.0.113.10 then 127.0.0.1",
		"mixed.test":  "127.0.0.1,203.0.113.11",
	})
	g := &guardDialer{redirect: map[netip.Addr]netip.Addr{
		netip.MustParseAddr("203.0.113.10"): netip.MustParseAddr("127.0.0.2"),
		netip.MustParseAddr("203.0.113.11"): netip.MustParseAddr("127.0.0.2"),
	}}
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{Network: Resolved{Allowed: []string{"rebind.test", "mixed.test"}}, Resolver: res}, g, l)
	c := p.Register(Caller{ID: "call-4"})
	hc := proxyClient("unix", path, c.Token())
	url := fmt.Sprintf("http://rebind.test:%d/", srv.port())
	if code, body := get(t, hc, url); code != 200 {
		t.Fatalf("first: %d %q", code, body)
	}
	if n := res.count("rebind.test"); n != 1 {
		t.Errorf("%d lookups for one connection, want 1", n)
	}
	want := []string{fmt.Sprintf("203.0.113.10:%d", srv.port())}
	if diff := cmp.Diff(want, g.list()); diff != "" {
		t.Errorf("dialled (-want +got):\n%s", diff)
	}
	code, body := get(t, hc, url)
	if wantBody := fmt.Sprintf("pid's proxy refused: rebind.test:%d (resolves to a loopback address (127.0.0.1))\n", srv.port()); code != 403 || body != wantBody {
		t.Errorf("second: %d %q, want 403 %q", code, body, wantBody)
	}
	if diff := cmp.Diff(want, g.list()); diff != "" {
		t.Errorf("the second connection dialled (-want +got):\n%s", diff)
	}
	if code, _ := get(t, hc, fmt.Sprintf("http://mixed.test:%d/", srv.port())); code != 200 {
		t.Errorf("mixed.test: %d", code)
	}
	want = append(want, fmt.Sprintf("203.0.113.11:%d", srv.port()))
	if diff := cmp.Diff(want, g.list()); diff != "" {
		t.Errorf("mixed.test dialled (-want +got):\n%s", diff)
	}
}

// TestHeaderInjection: a plain-http request to a host named in injectHeaders reaches the
// server with the header's value from pid's environment (replacing the command's own);
// the value appears nowhere the command sees (curl's verbose output, its environment),
// nor in the proxy's log; another host gets nothing; TRACE, which would echo it, is not
// forwarded.
func TestHeaderInjection(t *testing.T) {
	const secretValue = "Bearer tok-9f8e7d6c5b4a3f2e1d"
	srv := newServer(t, "127.0.0.2", "api", false)
	var logMu sync.Mutex
	var logs strings.Builder
	p, addr := startProxy(t, Config{
		Network: Resolved{
			Allowed:       []string{"api.test", "other.test", "127.0.0.2"},
			InjectHeaders: map[string]map[string]string{"API.test": {"Authorization": "env:EXAMPLE_TOKEN", "X-Api-Key": "env:UNSET_VAR"}},
		},
		Resolver: newResolver(map[string]string{"api.test": "127.0.0.2", "other.test": "127.0.0.2"}),
		Getenv: func(name string) (string, bool) {
			if name == "EXAMPLE_TOKEN" {
				return secretValue, true
			}
			return "", false
		},
		Logf: func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(&logs, format+"\n", args...)
		},
	}, nil, nil)
	c := p.Register(Caller{ID: "call-5"})
	env := c.Env(addr)
	code, out := curl(t, env, "-v", "-H", "Authorization: Bearer from-the-command", fmt.Sprintf("http://api.test:%d/v1", srv.port()))
	if code != 0 || !strings.Contains(out, "hello from api: GET /v1") {
		t.Fatalf("exit %d, output %q", code, out)
	}
	code, out2 := curl(t, env, "-v", fmt.Sprintf("http://other.test:%d/v2", srv.port()))
	if code != 0 {
		t.Fatalf("other.test: exit %d, output %q", code, out2)
	}
	code, out3 := curl(t, env, "-v", "-X", "TRACE", fmt.Sprintf("http://api.test:%d/v3", srv.port()))
	if code != 0 || !strings.Contains(out3, "405") {
		t.Errorf("TRACE: exit %d, output %q", code, out3)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("the server got %d requests, want 2 (TRACE is not forwarded)", len(reqs))
	}
	if got := reqs[0].Header.Values("Authorization"); !slices.Equal(got, []string{secretValue}) {
		t.Errorf("api.test got Authorization %q, want the injected value only", got)
	}
	if got := reqs[0].Header.Get("X-Api-Key"); got != "" {
		t.Errorf("X-Api-Key from an unset variable: %q", got)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "" {
		t.Errorf("other.test got Authorization %q", got)
	}
	logMu.Lock()
	logged := logs.String()
	logMu.Unlock()
	for what, s := range map[string]string{"curl's output": out + out2 + out3, "the environment": strings.Join(env, "\n"), "the log": logged, "the refusals": Summary(c.Refusals())} {
		if strings.Contains(s, "tok-9f8e7d6c5b4a3f2e1d") {
			t.Errorf("the injected value is in %s: %q", what, s)
		}
	}
	if !strings.Contains(logged, "UNSET_VAR is not set") {
		t.Errorf("the log does not say the unset variable: %q", logged)
	}
}

// TestCredentials: an unknown token and a closed Client's token get 407 (HTTP) or an
// authentication failure (SOCKS5); a connection without credentials is the anonymous
// Client's, whose refusals are its own.
func TestCredentials(t *testing.T) {
	srv := newServer(t, "127.0.0.2", "registry", false)
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{Network: Resolved{Allowed: []string{"127.0.0.2"}}}, nil, l)
	c := p.Register(Caller{ID: "call-6"})
	url := fmt.Sprintf("http://127.0.0.2:%d/", srv.port())
	if code, _ := get(t, proxyClient("unix", path, c.Token()), url); code != 200 {
		t.Errorf("valid token: %d", code)
	}
	if code, _ := get(t, proxyClient("unix", path, "pid-forged"), url); code != 407 {
		t.Errorf("unknown token: %d, want 407", code)
	}
	c.Close()
	if code, _ := get(t, proxyClient("unix", path, c.Token()), url); code != 407 {
		t.Errorf("closed client's token: %d, want 407", code)
	}
	d, _ := xproxy.SOCKS5("unix", path, &xproxy.Auth{User: c.Token(), Password: "x"}, xproxy.Direct)
	if conn, err := d.Dial("tcp", fmt.Sprintf("127.0.0.2:%d", srv.port())); err == nil {
		conn.Close()
		t.Error("SOCKS5 with a closed client's token was let through")
	}
	anon := proxyClient("unix", path, "")
	if code, _ := get(t, anon, url); code != 200 {
		t.Errorf("no credentials: %d", code)
	}
	if code, _ := get(t, anon, "http://unlisted.test/"); code != 403 {
		t.Errorf("no credentials, unlisted host: %d", code)
	}
	if diff := cmp.Diff([]Refusal{{Host: "unlisted.test", Port: 80, Reason: ReasonNotAllowed, Count: 1}}, p.Anonymous().Refusals()); diff != "" {
		t.Errorf("anonymous refusals (-want +got):\n%s", diff)
	}
	if len(c.Refusals()) != 0 {
		t.Errorf("call-6's refusals: %v", c.Refusals())
	}
}

// TestSOCKSUnsupported: BIND, UDP ASSOCIATE and an unknown address type get the SOCKS5
// replies that say so, and nothing is dialled.
func TestSOCKSUnsupported(t *testing.T) {
	g := &guardDialer{}
	l, path := unixListener(t)
	startProxy(t, Config{Network: Resolved{Allowed: []string{"127.0.0.2"}}}, g, l)
	for _, tc := range []struct {
		name    string
		request []byte
		reply   byte
	}{
		{"BIND", []byte{5, 2, 0, 1, 127, 0, 0, 2, 0, 80}, socksCommandUnsupported},
		{"UDP ASSOCIATE", []byte{5, 3, 0, 1, 127, 0, 0, 2, 0, 80}, socksCommandUnsupported},
		{"address type 9", []byte{5, 1, 0, 9}, socksAddrUnsupported},
	} {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte{5, 1, 0})
		var greet [2]byte
		io.ReadFull(conn, greet[:])
		conn.Write(tc.request)
		var reply [10]byte
		_, err = io.ReadFull(conn, reply[:])
		conn.Close()
		if err != nil || greet != [2]byte{5, 0} || reply[1] != tc.reply {
			t.Errorf("%s: greeting %v, reply %v (%v), want reply code %d", tc.name, greet, reply, err, tc.reply)
		}
	}
	if len(g.list()) != 0 {
		t.Errorf("dialled %v", g.list())
	}
}

// TestCloseEndsTunnels: Close ends an open tunnel (the client reads EOF) and Serve returns
// ErrClosed (checked by startProxy's cleanup); goleak checks no goroutine is left.
func TestCloseEndsTunnels(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	l, path := unixListener(t)
	p, _ := startProxy(t, Config{Network: Resolved{Allowed: []string{"127.0.0.2"}}}, nil, l)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", echo.Addr())
	want := "HTTP/1.1 200 Connection established\r\n\r\n"
	buf := make([]byte, len(want)+4)
	if _, err := io.ReadFull(conn, buf[:len(want)]); err != nil || string(buf[:len(want)]) != want {
		t.Fatalf("CONNECT answer %q (%v)", buf, err)
	}
	conn.Write([]byte("ping"))
	if _, err := io.ReadFull(conn, buf[:4]); err != nil || string(buf[:4]) != "ping" {
		t.Fatalf("echo %q (%v)", buf[:4], err)
	}
	p.Close()
	if n, err := conn.Read(buf); err != io.EOF {
		t.Errorf("after Close the tunnel read %d bytes, %v; want EOF", n, err)
	}
}

// TestSOCKSDomainRequest: a SOCKS5 CONNECT by domain name, written byte by byte, reaches an
// allowed host and gets a success reply with the bound address 0.0.0.0:0.
func TestSOCKSDomainRequest(t *testing.T) {
	srv := newServer(t, "127.0.0.2", "registry", false)
	l, path := unixListener(t)
	startProxy(t, Config{
		Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
		Resolver: newResolver(map[string]string{"registry.test": "127.0.0.2"}),
	}, nil, l)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte{5, 1, 0})
	var greet [2]byte
	io.ReadFull(conn, greet[:])
	req := []byte{5, 1, 0, 3, byte(len("registry.test"))}
	req = append(req, "registry.test"...)
	req = binary.BigEndian.AppendUint16(req, uint16(srv.port()))
	conn.Write(req)
	var reply [10]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil || reply != [10]byte{5, 0, 0, 1} {
		t.Fatalf("reply %v (%v)", reply, err)
	}
	fmt.Fprintf(conn, "GET /d HTTP/1.0\r\nHost: registry.test\r\n\r\n")
	b, _ := io.ReadAll(conn)
	if !strings.HasSuffix(string(b), "hello from registry: GET /d\n") {
		t.Errorf("got %q", b)
	}
}

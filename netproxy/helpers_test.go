// What the tests share: goleak over the package, a resolver from a map, a dialer that
// never leaves the machine (and records what it dialled), test servers on 127.0.0.2, and
// a proxy serving on a real listener.

package netproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mapResolver resolves names from a map; a name with several answers gives them in turn,
// one per lookup (the last one sticks), which is how the rebinding test answers. It counts
// lookups.
type mapResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int
}

func newResolver(m map[string]string) *mapResolver {
	r := &mapResolver{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	for name, ips := range m {
		r.set(name, strings.Split(ips, " then ")...)
	}
	return r
}

// set gives name's answers, each a comma-separated list of addresses.
func (r *mapResolver) set(name string, answers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as [][]netip.Addr
	for _, a := range answers {
		var ips []netip.Addr
		for _, s := range strings.Split(a, ",") {
			ips = append(ips, netip.MustParseAddr(strings.TrimSpace(s)))
		}
		as = append(as, ips)
	}
	r.answers[name] = as
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.lookups[host]
	r.lookups[host]++
	as := r.answers[host]
	if len(as) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return as[min(n, len(as)-1)], nil
}

func (r *mapResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// guardDialer dials only loopback addresses (so a wrong proxy cannot send a test's traffic
// off the machine), through the real checked dialer, after mapping addresses listed in
// redirect (a stand-in public address) to a local one. It records every address it was
// asked to dial.
type guardDialer struct {
	mu       sync.Mutex
	dialled  []string
	redirect map[netip.Addr]netip.Addr
}

func (g *guardDialer) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	g.mu.Lock()
	g.dialled = append(g.dialled, ap.String())
	to, ok := g.redirect[ap.Addr()]
	g.mu.Unlock()
	if ok {
		ap = netip.AddrPortFrom(to, ap.Port())
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return nil, fmt.Errorf("test: %s is not on this machine: not dialled", ap)
	}
	return dialChecked(ctx, ap)
}

func (g *guardDialer) list() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.dialled...)
}

// server is a test server standing in for a registry: it answers every request with
// "hello from NAME" and records the requests' headers.
type server struct {
	*httptest.Server
	name string
	mu   sync.Mutex
	reqs []*http.Request
}

// newServer starts a server on ip:0 (TLS when tls is set).
func newServer(t *testing.T, ip, name string, useTLS bool) *server {
	t.Helper()
	s := &server{name: name}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		w.Header().Set("X-Served-By", name)
		fmt.Fprintf(w, "hello from %s: %s %s\n", name, r.Method, r.URL.Path)
	}))
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.Listener.Close()
	s.Listener = l
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *server) port() int { return s.Listener.Addr().(*net.TCPAddr).Port }

func (s *server) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// startProxy makes a Proxy from cfg (its dialer the guard) and serves it on l, a new TCP
// listener on 127.0.0.1 when nil. It returns the proxy and its address.
func startProxy(t *testing.T, cfg Config, g *guardDialer, l net.Listener) (*Proxy, string) {
	t.Helper()
	if g == nil {
		g = &guardDialer{}
	}
	cfg.dial = g.dial
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil {
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	return p, l.Addr().String()
}

// unixListener listens on a Unix socket in a temporary folder.
func unixListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return l, path
}

// curl runs curl with env (a Client's Env), returning its exit code and output (stdout and
// stderr). The command's environment is env and PATH only, as a sandboxed command's
// proxy variables would be.
func curl(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	path, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	cmd := exec.Command(path, append([]string{"-sS", "--max-time", "20"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// proxyClient returns an http.Client that reaches the proxy at addr with the token's
// credentials, dialling network (tcp or unix) and trusting any certificate (the test
// servers' are made for 127.0.0.1, not for the test names).
func proxyClient(network, addr, token string) *http.Client {
	u := &url.URL{Scheme: "http", Host: "proxy.invalid"}
	if token != "" {
		u.User = url.User(token)
	}
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(u),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true,
	}}
}

// get fetches url with c and returns the status and body.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// recordingAsker answers from a map by host (deny when absent) and records the questions.
type recordingAsker struct {
	mu      sync.Mutex
	answers map[string]Answer
	asked   []Question
}

func (a *recordingAsker) AskHost(_ context.Context, q Question) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if ans, ok := a.answers[q.Host]; ok {
		return ans, nil
	}
	return Answer{Decision: Deny}, nil
}

func (a *recordingAsker) questions() []Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Question(nil), a.asked...)
}

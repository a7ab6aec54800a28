// This file holds the HTTP proxy: CONNECT, which opens a tunnel (https), and absolute-URI
// requests for plain http, forwarded with the headers settings inject for their host.

package netproxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"
)

// newHTTPServer returns the http.Server of p's HTTP connections.
func newHTTPServer(p *Proxy) *http.Server {
	return &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: handshakeTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
}

// serveHTTP serves one request made to the proxy.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := p.clientOf(proxyUser(r.Header.Get("Proxy-Authorization")))
	if !ok {
		w.Header().Set("Proxy-Authenticate", `Basic realm="pid"`)
		http.Error(w, "pid's proxy: these credentials are not (or no longer) valid: use the proxy variables of the command's own environment", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, c)
		return
	}
	p.forward(w, r, c)
}

// proxyUser returns the user of a Basic Proxy-Authorization header ("" when there is none or
// it is not Basic).
func proxyUser(h string) string {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "\x00invalid" // an unknown token: refused, not anonymous
	}
	user, _, _ := strings.Cut(string(b), ":")
	return user
}

// refused answers a refused request: 403 with the refusal, or 502 for a destination that
// could not be reached.
func refused(w http.ResponseWriter, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		w.Header().Set("X-Pid-Proxy-Refused", re.Refusal.Reason)
		http.Error(w, re.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "pid's proxy could not connect: "+err.Error(), http.StatusBadGateway)
}

// connect serves CONNECT host:port: the decision, the dial, then a tunnel.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, c *Client) {
	host, port, err := hostPort(r.Host)
	if err != nil {
		http.Error(w, "pid's proxy: CONNECT needs host:port: "+err.Error(), http.StatusBadRequest)
		return
	}
	up, err := p.Dial(r.Context(), c, host, port)
	if err != nil {
		refused(w, err)
		return
	}
	upc := p.track(up, nil)
	if upc == nil {
		http.Error(w, "pid's proxy is closing", http.StatusServiceUnavailable)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upc.Close()
		http.Error(w, "pid's proxy cannot tunnel this connection", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		upc.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		upc.Close()
		return
	}
	// Bytes the client sent after the request (a TLS hello) are in rw's buffer.
	splice(&bufferedConn{Conn: conn, r: rw.Reader}, upc)
}

// bufferedConn reads a hijacked connection through the server's buffer.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the connection when it can.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// forward serves a plain-http request in absolute form (GET http://host/path): the decision,
// then the request sent on a connection of its own to the checked address, with the
// headers settings inject for the host. The credentials (Proxy-Authorization) and the other
// hop-by-hop headers are not forwarded.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, c *Client) {
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "this is pid's proxy: send requests with an absolute http:// URI, or CONNECT for https", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "pid's proxy forwards http:// requests only; use CONNECT for https", http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodTrace {
		// TRACE echoes the request, injected headers included.
		http.Error(w, "pid's proxy does not forward TRACE", http.StatusMethodNotAllowed)
		return
	}
	host := r.URL.Hostname()
	port := 80
	if ps := r.URL.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil {
			http.Error(w, "pid's proxy: not a port: "+ps, http.StatusBadRequest)
			return
		}
		port = n
	}
	t, err := p.authorize(r.Context(), c, host, port)
	if err != nil {
		refused(w, err)
		return
	}
	var (
		once    sync.Once
		mu      sync.Mutex // guards dialErr: the transport may dial after giving up on it
		dialErr error
	)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *r.URL
			pr.Out.URL = &u
			pr.Out.Host = r.URL.Host
			pr.Out.RequestURI = ""
			p.injectHeaders(pr.Out.Header, t.host)
		},
		Transport: &http.Transport{
			// Proxy stays nil: the environment's proxy variables are not for pid.
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var conn net.Conn
				err := errors.New("pid's proxy dials once per request")
				once.Do(func() {
					conn, err = p.dialTarget(ctx, c, t)
					mu.Lock()
					dialErr = err
					mu.Unlock()
				})
				return conn, err
			},
			DisableKeepAlives:     true,
			ResponseHeaderTimeout: 2 * time.Minute,
		},
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			mu.Lock()
			err := dialErr
			mu.Unlock()
			if err == nil {
				// Not the transport's words, which may quote the request.
				err = fmt.Errorf("%s did not answer", net.JoinHostPort(t.host, strconv.Itoa(t.port)))
			}
			refused(w, err)
		},
	}
	rp.ServeHTTP(w, r)
}

// injectHeaders sets, on a request to host, the headers settings name for it, each from
// its environment variable (left out when the variable is unset or empty). The values are
// never logged.
func (p *Proxy) injectHeaders(h http.Header, host string) {
	for name, ref := range p.inject[host] {
		env := strings.TrimPrefix(ref, "env:")
		v, ok := p.getenv(env)
		if !ok || v == "" {
			p.logf("netproxy: injectHeaders: %s for %s not added: %s is not set", name, host, env)
			continue
		}
		h.Set(name, v)
	}
}

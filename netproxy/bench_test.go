//go:build linux

// The cost of a command's first connection through the proxy against a direct one: a new
// TCP connection and one HTTP request to a server on 127.0.0.2, directly, through CONNECT
// and through SOCKS5 (the proxy on 127.0.0.1 TCP, as a command in the namespace reaches
// it, and on a Unix socket). Not run by go test; go test -run '^$' -bench FirstConnection.
// Linux only (the CPU time comes from getrusage).

package netproxy

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkFirstConnection measures one new connection and one request/response per op.
func BenchmarkFirstConnection(b *testing.B) {
	srv := newServer(&testing.T{}, "127.0.0.2", "registry", false)
	defer srv.Close()
	target := fmt.Sprintf("registry.test:%d", srv.port())
	direct := srv.Listener.Addr().String()
	newProxy := func(b *testing.B, network string) (string, string) {
		p, err := New(Config{
			Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
			Resolver: newResolver(map[string]string{"registry.test": "127.0.0.2"}),
		})
		if err != nil {
			b.Fatal(err)
		}
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = b.TempDir() + "/p.sock"
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			b.Fatal(err)
		}
		go p.Serve(l)
		b.Cleanup(func() { p.Close() })
		return l.Addr().String(), p.Register(Caller{ID: "bench"}).Token()
	}
	request := func(b *testing.B, c net.Conn) {
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: registry.test\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.Close()
	}
	b.Run("direct", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			c, err := net.Dial("tcp", direct)
			if err != nil {
				b.Fatal(err)
			}
			request(b, c)
		}
	})
	for _, network := range []string{"tcp", "unix"} {
		b.Run("connect-"+network, func(b *testing.B) {
			addr, token := newProxy(b, network)
			auth := "Basic " + basic(token)
			defer cpuPerOp(b)()
			for b.Loop() {
				c, err := net.Dial(network, addr)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\nProxy-Authorization: %s\r\n\r\n", target, auth)
				want := "HTTP/1.1 200 Connection established\r\n\r\n"
				buf := make([]byte, len(want))
				if _, err := io.ReadFull(c, buf); err != nil || string(buf) != want {
					b.Fatalf("%q %v", buf, err)
				}
				request(b, c)
			}
		})
		b.Run("socks5-"+network, func(b *testing.B) {
			addr, token := newProxy(b, network)
			host, ps, _ := strings.Cut(target, ":")
			var port int
			fmt.Sscan(ps, &port)
			hello := append([]byte{5, 1, 2, 1, byte(len(token))}, token...)
			hello = append(hello, 1, 'x')
			req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
			req = binary.BigEndian.AppendUint16(req, uint16(port))
			defer cpuPerOp(b)()
			for b.Loop() {
				c, err := net.Dial(network, addr)
				if err != nil {
					b.Fatal(err)
				}
				c.Write(hello)
				var r [4]byte
				if _, err := io.ReadFull(c, r[:]); err != nil || r != [4]byte{5, 2, 1, 0} {
					b.Fatalf("auth %v %v", r, err)
				}
				c.Write(req)
				var rep [10]byte
				if _, err := io.ReadFull(c, rep[:]); err != nil || rep[1] != 0 {
					b.Fatalf("reply %v %v", rep, err)
				}
				request(b, c)
			}
		})
	}
}

func basic(user string) string {
	return base64Std(user + ":x")
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// cpuPerOp reports the process's CPU time (user and system, every thread: the client, the
// proxy and the server) per op, which a loaded machine changes less than the wall time.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCurlFirstConnection is a command's first connection as a command makes it: one
// curl process per op, fetching from the server on 127.0.0.2 directly, through the proxy's
// HTTP side (an http:// URL, as HTTP_PROXY) and its SOCKS5 side (socks5h://, as
// ALL_PROXY), the proxy on 127.0.0.1 TCP. Needs curl on PATH.
func BenchmarkCurlFirstConnection(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Fatalf("this benchmark runs curl: %v", err)
	}
	srv := newServer(&testing.T{}, "127.0.0.2", "registry", false)
	defer srv.Close()
	p, err := New(Config{
		Network:  Resolved{Allowed: []string{"registry.test", "127.0.0.2"}},
		Resolver: newResolver(map[string]string{"registry.test": "127.0.0.2"}),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(l)
	token := p.Register(Caller{ID: "bench"}).Token()
	run := func(b *testing.B, args ...string) {
		defer cpuChildrenPerOp(b)()
		for b.Loop() {
			out, err := exec.Command(curl, append([]string{"-sS", "-o", "/dev/null", "-w", "%{http_code}"}, args...)...).CombinedOutput()
			if err != nil || string(out) != "200" {
				b.Fatalf("curl: %v %s", err, out)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		run(b, "--noproxy", "*", fmt.Sprintf("http://127.0.0.2:%d/x", srv.port()))
	})
	b.Run("http-proxy", func(b *testing.B) {
		run(b, "-x", "http://"+token+"@"+l.Addr().String(), fmt.Sprintf("http://registry.test:%d/x", srv.port()))
	})
	b.Run("socks5h", func(b *testing.B) {
		run(b, "-x", "socks5h://"+token+"@"+l.Addr().String(), fmt.Sprintf("http://registry.test:%d/x", srv.port()))
	})
}

// cpuChildrenPerOp reports the CPU time of this process and its waited-for children (curl)
// per op.
func cpuChildrenPerOp(b *testing.B) func() {
	start := cpuTime() + childCPUTime()
	return func() {
		b.ReportMetric(float64(cpuTime()+childCPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func childCPUTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// This file holds the plumbing of connections: the tracked connection (so Close can end
// every one), the listener that hands HTTP connections to the http.Server, and the splice
// of a tunnel.

package netproxy

import (
	"bufio"
	"io"
	"net"
	"sync"
)

// trackedConn is a client or upstream connection the Proxy closes on Close; r reads it
// (holding the byte peeked to tell HTTP from SOCKS5).
type trackedConn struct {
	net.Conn
	r       *bufio.Reader
	p       *Proxy
	once    sync.Once
	onClose func()
}

// track registers c, returning nil (and closing c) when the Proxy is closed. onClose, if
// set, runs once when the connection is closed.
func (p *Proxy) track(c net.Conn, onClose func()) *trackedConn {
	tc := &trackedConn{Conn: c, r: bufio.NewReaderSize(c, 4<<10), p: p, onClose: onClose}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		if onClose != nil {
			onClose()
		}
		return nil
	}
	p.conns[tc] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	return tc
}

func (c *trackedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// Close closes the connection and forgets it; safe to call more than once.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
		if c.onClose != nil {
			c.onClose()
		}
		c.p.wg.Done()
	})
	return err
}

// CloseWrite half-closes the connection when it can.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// chanListener is the net.Listener the http.Server serves: the connections Serve found to
// speak HTTP.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

// deliver hands c to the http.Server; false when the listener is closed.
func (l *chanListener) deliver(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return pipeAddr{} }

// pipeAddr is chanListener's address.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pid-proxy" }
func (pipeAddr) String() string  { return "pid-proxy" }

// splice copies between a client and an upstream connection both ways until both
// directions end (half-closing each as its source ends), then closes both.
func splice(client io.ReadWriteCloser, upstream net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(dst, src io.ReadWriter) {
		defer wg.Done()
		_, err := io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
			cw.CloseWrite()
			return
		}
		// An error (or no half-close): end both directions.
		client.Close()
		upstream.Close()
	}
	go half(upstream, client)
	go half(client, upstream)
	wg.Wait()
	client.Close()
	upstream.Close()
}

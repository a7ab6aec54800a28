// This file holds the SOCKS5 proxy (RFC 1928): CONNECT to a domain name, an IPv4 or an
// IPv6 address, without authentication or with a user name (RFC 1929) that is a Client's
// token. BIND and UDP ASSOCIATE are refused.

package netproxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"time"
)

const socksVersion = 5

// SOCKS5 methods, commands, address types and replies.
const (
	socksNoAuth       = 0x00
	socksUserPass     = 0x02
	socksNoAcceptable = 0xff

	socksConnect = 0x01

	socksIPv4   = 0x01
	socksDomain = 0x03
	socksIPv6   = 0x04

	socksSucceeded          = 0x00
	socksGeneralFailure     = 0x01
	socksNotAllowed         = 0x02
	socksHostUnreachable    = 0x04
	socksCommandUnsupported = 0x07
	socksAddrUnsupported    = 0x08
)

// serveSOCKS serves one SOCKS5 connection: the greeting, the authentication, one CONNECT,
// then a tunnel.
func (p *Proxy) serveSOCKS(c *trackedConn) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	cl, err := p.socksHandshake(c)
	if err != nil {
		c.Close()
		return
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != socksVersion {
		c.Close()
		return
	}
	host, port, atypOK, err := readSocksAddr(c, hdr[3])
	if err != nil {
		c.Close()
		return
	}
	if !atypOK {
		socksReply(c, socksAddrUnsupported)
		c.Close()
		return
	}
	if hdr[1] != socksConnect {
		socksReply(c, socksCommandUnsupported)
		c.Close()
		return
	}
	// The decision may wait for the person: no deadline meanwhile (the question has its own).
	c.SetDeadline(time.Time{})
	up, err := p.Dial(p.ctx, cl, host, port)
	if err != nil {
		var re *RefusedError
		code := byte(socksHostUnreachable)
		if errors.As(err, &re) {
			code = socksNotAllowed
		}
		socksReply(c, code)
		c.Close()
		return
	}
	upc := p.track(up, nil)
	if upc == nil {
		socksReply(c, socksGeneralFailure)
		c.Close()
		return
	}
	if err := socksReply(c, socksSucceeded); err != nil {
		c.Close()
		upc.Close()
		return
	}
	splice(c, upc)
}

// socksHandshake reads the greeting and, when the client offers it, the user name and
// password, returning the Client the user name names (the anonymous one without).
func (p *Proxy) socksHandshake(c *trackedConn) (*Client, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return nil, err
	}
	offers := func(m byte) bool {
		for _, x := range methods {
			if x == m {
				return true
			}
		}
		return false
	}
	switch {
	case offers(socksUserPass):
		if _, err := c.Write([]byte{socksVersion, socksUserPass}); err != nil {
			return nil, err
		}
		// RFC 1929: version 1, user, password.
		var v [2]byte
		if _, err := io.ReadFull(c, v[:]); err != nil {
			return nil, err
		}
		user := make([]byte, v[1])
		if _, err := io.ReadFull(c, user); err != nil {
			return nil, err
		}
		var plen [1]byte
		if _, err := io.ReadFull(c, plen[:]); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(c, make([]byte, plen[0])); err != nil {
			return nil, err
		}
		cl, ok := p.clientOf(string(user))
		if v[0] != 1 || !ok {
			c.Write([]byte{1, 1})
			return nil, errors.New("unknown token")
		}
		if _, err := c.Write([]byte{1, 0}); err != nil {
			return nil, err
		}
		return cl, nil
	case offers(socksNoAuth):
		if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
			return nil, err
		}
		return p.anon, nil
	}
	c.Write([]byte{socksVersion, socksNoAcceptable})
	return nil, errors.New("no acceptable method")
}

// readSocksAddr reads a request's address and port; ok is false for an address type SOCKS5
// does not define.
func readSocksAddr(r io.Reader, atyp byte) (host string, port int, ok bool, err error) {
	switch atyp {
	case socksIPv4, socksIPv6:
		n := 4
		if atyp == socksIPv6 {
			n = 16
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", 0, false, err
		}
		ip, _ := netip.AddrFromSlice(b[:n])
		return ip.String(), int(binary.BigEndian.Uint16(b[n:])), true, nil
	case socksDomain:
		var l [1]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return "", 0, false, err
		}
		b := make([]byte, int(l[0])+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", 0, false, err
		}
		return string(b[:l[0]]), int(binary.BigEndian.Uint16(b[l[0]:])), true, nil
	}
	return "", 0, false, nil
}

// socksReply writes a reply with the bound address 0.0.0.0:0 (the proxy's own address is
// none of the client's business).
func socksReply(w io.Writer, code byte) error {
	_, err := w.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

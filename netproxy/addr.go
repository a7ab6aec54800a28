// This file says which addresses are refused without asking: loopback, private, link-local
// (the cloud metadata service's 169.254.169.254 among them), unique-local, shared (CGNAT),
// unspecified, multicast and reserved ones, in IPv4 and IPv6, and IPv4 addresses embedded
// in IPv6 ones (IPv4-mapped, IPv4-compatible, NAT64, 6to4) by the IPv4 address they carry.

package netproxy

import (
	"net/netip"
)

// specialRange is a range of addresses refused without asking, and how a refusal names it.
type specialRange struct {
	prefix netip.Prefix
	what   string
}

var specialRanges = func() []specialRange {
	var out []specialRange
	add := func(what string, prefixes ...string) {
		for _, p := range prefixes {
			out = append(out, specialRange{netip.MustParsePrefix(p), what})
		}
	}
	add("an unspecified address", "0.0.0.0/32", "::/128")
	add("a loopback address", "127.0.0.0/8", "::1/128")
	add("a private address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
	add("a link-local address", "169.254.0.0/16", "fe80::/10")
	add("a shared (CGNAT) address", "100.64.0.0/10")
	add("a unique-local address", "fc00::/7")
	add("a multicast address", "224.0.0.0/4", "ff00::/8")
	add("a reserved address",
		"0.0.0.0/8",      // "this network"
		"192.0.0.0/24",   // IETF protocol assignments
		"198.18.0.0/15",  // benchmarking: used inside networks
		"240.0.0.0/4",    // reserved, and the broadcast address
		"fec0::/10",      // deprecated site-local
		"100::/64",       // discard-only
		"2001::/32",      // Teredo: the IPv4 address it carries is obfuscated
		"2001:10::/28",   // ORCHID
		"2001:20::/28",   // ORCHIDv2
		"5f00::/16",      // SRv6 SIDs
		"3fff::/20",      // documentation (RFC 9637)
		"2001:db8::/32",  // documentation
		"64:ff9b:1::/48") // local-use NAT64
	return out
}()

// Prefixes of IPv6 ranges that carry an IPv4 address, checked by that address.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // the IPv4 address in the last 32 bits
	compat    = netip.MustParsePrefix("::/96")        // IPv4-compatible (deprecated), same
	sixToFour = netip.MustParsePrefix("2002::/16")    // the IPv4 address in bits 16-47
)

// specialAddress returns how a refusal names ip when it is never to be dialled without being
// listed as an exact IP ("a loopback address"), or "" for an ordinary address. Pure.
func specialAddress(ip netip.Addr) string {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return "an invalid address"
	}
	if ip.Zone() != "" {
		return "a link-local address"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	if ip.Is6() {
		b := ip.As16()
		var v4 [4]byte
		switch {
		case nat64.Contains(ip), compat.Contains(ip):
			copy(v4[:], b[12:16])
		case sixToFour.Contains(ip):
			copy(v4[:], b[2:6])
		default:
			return ""
		}
		if what := specialAddress(netip.AddrFrom4(v4)); what != "" {
			return what + " (inside an IPv6 address)"
		}
	}
	return ""
}

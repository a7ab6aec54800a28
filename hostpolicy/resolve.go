// This file holds the resolver a test may map names with, for a local server standing in
// for a registry (PID_DEBUG_RESOLVE).

package hostpolicy

import (
	"context"
	"net"
	"net/netip"
	"strings"

	"github.com/pid-agent/pid/netproxy"
)

// ParseResolve returns the resolver a map "name=ip,name=ip" asks for: the names it lists
// resolve to their address (case and a final dot aside), the others as the system resolves
// them. It returns nil (the system's) when v is empty or malformed.
func ParseResolve(v string) netproxy.Resolver {
	if v == "" {
		return nil
	}
	m := map[string]netip.Addr{}
	for _, kv := range strings.Split(v, ",") {
		name, ip, ok := strings.Cut(strings.TrimSpace(kv), "=")
		a, err := netip.ParseAddr(ip)
		if !ok || err != nil {
			return nil
		}
		m[strings.ToLower(name)] = a
	}
	return mapResolver(m)
}

// mapResolver answers the names it lists, and asks the system about the others.
type mapResolver map[string]netip.Addr

// LookupNetIP implements netproxy.Resolver.
func (m mapResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := m[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{a}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// This file holds the host rules: the network modes, host patterns (an exact host, an exact
// IP, or "*." and a domain), the presets, and Rules, which says of a host whether it is
// denied, allowed or unknown.

package netproxy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Mode is sandbox.network: "allowlist" (commands reach only pid's proxy, which lets through
// the allowed hosts and asks about unknown ones; the default), true (the host's network, no
// proxy) or false (no network at all).
type Mode string

// The modes. In JSON, ModeOn is true and ModeOff is false.
const (
	ModeAllowlist Mode = "allowlist"
	ModeOn        Mode = "on"
	ModeOff       Mode = "off"
)

// UnmarshalJSON reads "allowlist", true or false.
func (m *Mode) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*m = ModeOn
		return nil
	case "false":
		*m = ModeOff
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil && s == string(ModeAllowlist) {
		*m = ModeAllowlist
		return nil
	}
	return fmt.Errorf(`sandbox.network must be "allowlist", true or false, not %s`, b)
}

// MarshalJSON writes ModeOn as true, ModeOff as false and ModeAllowlist as "allowlist".
func (m Mode) MarshalJSON() ([]byte, error) {
	switch m {
	case ModeOn:
		return []byte("true"), nil
	case ModeOff:
		return []byte("false"), nil
	case ModeAllowlist:
		return []byte(`"allowlist"`), nil
	}
	return nil, fmt.Errorf("netproxy: unknown mode %q", string(m))
}

// openness orders the modes: off < allowlist < on.
func (m Mode) openness() int {
	switch m {
	case ModeOff:
		return 0
	case ModeOn:
		return 2
	}
	return 1
}

// presets are the hosts each allowPresets name stands for: the hosts the package managers'
// default configurations download from, exact names only (no wildcard), so that a preset
// does not open a whole cloud storage service. docs/permissions.md lists them too.
var presets = map[string][]string{
	// npm and yarn: the registry's metadata and tarballs.
	"npm": {"registry.npmjs.org", "registry.yarnpkg.com"},
	// pip: the index (pypi.org/simple) and the files it links to.
	"pypi": {"pypi.org", "files.pythonhosted.org"},
	// The go command with its default GOPROXY and GOSUMDB.
	"go": {"proxy.golang.org", "sum.golang.org"},
	// cargo: the sparse index, the downloads, and the API (cargo search).
	"crates": {"crates.io", "index.crates.io", "static.crates.io"},
	// git over https, the API, archives, raw files and release downloads.
	"github": {"github.com", "api.github.com", "codeload.github.com", "raw.githubusercontent.com",
		"objects.githubusercontent.com", "release-assets.githubusercontent.com"},
}

// PresetNames returns the names allowPresets accepts, sorted. Pure.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// PresetHosts returns the hosts of a preset, and whether the name is one. Pure.
func PresetHosts(name string) ([]string, bool) {
	h, ok := presets[name]
	return slices.Clone(h), ok
}

// pattern is one entry of allowedHosts or deniedHosts.
type pattern struct {
	// host is the exact host, or for a wildcard the domain after "*." (lower case, without
	// a final dot); for an IP its canonical text.
	host     string
	wildcard bool
	ip       netip.Addr // valid for an exact IP
}

// String returns the pattern as written in settings, normalised.
func (p pattern) String() string {
	if p.wildcard {
		return "*." + p.host
	}
	return p.host
}

// matches reports whether the normalised host h (a name or an IP's text) is covered.
func (p pattern) matches(h string) bool {
	if p.wildcard {
		return strings.HasSuffix(h, "."+p.host)
	}
	return p.host == h
}

// covers reports whether everything q matches, p matches too.
func (p pattern) covers(q pattern) bool {
	switch {
	case !p.wildcard:
		return !q.wildcard && p.host == q.host
	case q.wildcard:
		return q.host == p.host || strings.HasSuffix(q.host, "."+p.host)
	default:
		return q.ip == (netip.Addr{}) && p.matches(q.host)
	}
}

// parsePattern reads one host pattern. allow is set for allowedHosts, where localhost is
// refused (it is always refused; an exact IP is the way to allow a local server).
func parsePattern(s string, allow bool) (pattern, error) {
	orig := s
	s = strings.ToLower(strings.TrimSpace(s))
	bad := func(why string) (pattern, error) {
		return pattern{}, fmt.Errorf("%q %s", orig, why)
	}
	if s == "" {
		return bad("is empty")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@") {
		return bad("is not a host: write the host alone (example.com), or *.example.com for its subdomains")
	}
	if ip, ok := parseIP(s); ok {
		return pattern{host: ip.String(), ip: ip}, nil
	}
	wildcard := false
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		wildcard, s = true, rest
	}
	if strings.Contains(s, "*") {
		return bad("is not a host pattern: only an exact host or *. followed by a domain (*.example.com) is accepted")
	}
	if strings.Contains(s, ":") {
		return bad("has a port or is not an address: host rules name hosts, every port included")
	}
	s = strings.TrimSuffix(s, ".")
	if err := checkName(s); err != "" {
		return bad(err)
	}
	if wildcard && !strings.Contains(s, ".") {
		return bad("covers a whole top-level domain: name a domain (*.example.com) or hosts")
	}
	if allow && (s == "localhost" || strings.HasSuffix(s, ".localhost")) {
		return bad("is always refused: list the exact IP (127.0.0.1) to allow a local server")
	}
	return pattern{host: s, wildcard: wildcard}, nil
}

// parseIP reads an IP address as a host rule or request names it: dotted IPv4, or IPv6 with
// or without brackets, no zone. IPv4-mapped IPv6 addresses are returned as IPv4.
func parseIP(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// checkName returns what is wrong with a host name (lower case, no final dot), or "".
func checkName(s string) string {
	if len(s) > 253 {
		return "is longer than a host name can be (253 characters)"
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "is not a valid host name (an empty label, or one longer than 63 characters)"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				if c >= 0x80 {
					return "is not a valid host name: write an internationalised name in its ASCII (xn--) form"
				}
				return "is not a valid host name"
			}
		}
	}
	// A last label of digits, or hex, is an IP address in a form resolvers accept (127.1,
	// 0x7f.1) but pid does not: refused rather than asked about.
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "is not a valid host name (an IP address is written 192.0.2.1 or 2001:db8::1)"
	}
	return ""
}

// normalizeHost returns the canonical form of a host a client asked for (lower case, no
// final dot; an IP's canonical text, IPv4-mapped IPv6 as IPv4) and, for an IP, the
// address; or what is wrong with it.
func normalizeHost(h string) (string, netip.Addr, string) {
	if ip, ok := parseIP(h); ok {
		return ip.String(), ip, ""
	}
	s := strings.TrimSuffix(strings.ToLower(h), ".")
	if s == "" {
		return "", netip.Addr{}, "an empty host"
	}
	if why := checkName(s); why != "" {
		return "", netip.Addr{}, "not a valid host name"
	}
	return s, netip.Addr{}, ""
}

// verdict is what the rules say of a host.
type verdict int

const (
	unknown verdict = iota
	allowed
	denied
)

// Rules are the compiled allowedHosts and deniedHosts of a session. Immutable.
type Rules struct {
	mode    Mode
	allowed []pattern
	denied  []pattern
}

// compileRules checks and compiles pattern lists (presets already expanded).
func compileRules(mode Mode, allow, deny []string) (*Rules, error) {
	r := &Rules{mode: mode}
	for i, s := range allow {
		p, err := parsePattern(s, true)
		if err != nil {
			return nil, fmt.Errorf("sandbox.allowedHosts[%d] %v", i, err)
		}
		r.allowed = append(r.allowed, p)
	}
	for i, s := range deny {
		p, err := parsePattern(s, false)
		if err != nil {
			return nil, fmt.Errorf("sandbox.deniedHosts[%d] %v", i, err)
		}
		r.denied = append(r.denied, p)
	}
	return r, nil
}

// check says whether the normalised host h is denied (denied hosts win), allowed or
// unknown.
func (r *Rules) check(h string) verdict {
	for _, p := range r.denied {
		if p.matches(h) {
			return denied
		}
	}
	for _, p := range r.allowed {
		if p.matches(h) {
			return allowed
		}
	}
	return unknown
}

// listsIP reports whether ip is listed as an exact IP in the allowed hosts: the one way a
// private, loopback or link-local address is let through.
func (r *Rules) listsIP(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range r.allowed {
		if p.ip.IsValid() && p.ip == ip {
			return true
		}
	}
	return false
}

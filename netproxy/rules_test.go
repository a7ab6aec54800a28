// Host patterns, presets, the address classes refused without asking, and the settings'
// parsing and merge.

package netproxy

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPatterns: exact hosts, exact IPs and "*." wildcards are accepted (normalised); any
// other pattern is refused with an error saying what to write instead.
func TestPatterns(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "Registry.NPMjs.org.", want: "registry.npmjs.org"},
		{in: "*.pypi.org", want: "*.pypi.org"},
		{in: "127.0.0.2", want: "127.0.0.2"},
		{in: "[::1]", want: "::1"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1"},
		{in: "https://example.com", err: "is not a host: write the host alone"},
		{in: "example.com/path", err: "is not a host"},
		{in: "*.com", err: "covers a whole top-level domain"},
		{in: "*", err: "only an exact host or *. followed by a domain"},
		{in: "a*.example.com", err: "only an exact host or *. followed by a domain"},
		{in: "*.*.example.com", err: "only an exact host or *. followed by a domain"},
		{in: "example.com:443", err: "has a port"},
		{in: "10.0.0.0/8", err: "is not a host"},
		{in: "localhost", err: "is always refused: list the exact IP"},
		{in: "dev.localhost", err: "is always refused"},
		{in: "bücher.de", err: "ASCII (xn--) form"},
		{in: "exa mple.com", err: "is not a valid host name"},
		{in: "127.1", err: "an IP address is written"},
		{in: "0x7f.1", err: "an IP address is written"},
		{in: "", err: "is empty"},
	} {
		p, err := parsePattern(tc.in, true)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || p.String() != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.in, p.String(), err, tc.want)
		}
	}
}

// TestRulesCheck: denied hosts win over allowed ones; a wildcard covers subdomains at any
// depth, not the domain itself; an IP matches only itself.
func TestRulesCheck(t *testing.T) {
	r, err := compileRules(ModeAllowlist, []string{"*.pypi.org", "proxy.golang.org", "203.0.113.7"}, []string{"evil.pypi.org"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]verdict{
		"files.pypi.org":        allowed,
		"a.b.pypi.org":          allowed,
		"pypi.org":              unknown,
		"notpypi.org":           unknown,
		"evil.pypi.org":         denied,
		"x.evil.pypi.org":       allowed, // an exact denied host does not cover its subdomains
		"proxy.golang.org":      allowed,
		"sub.proxy.golang.org":  unknown,
		"203.0.113.7":           allowed,
		"203.0.113.8":           unknown,
		"proxy.golang.org.evil": unknown,
	} {
		if got := r.check(host); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
}

// TestSpecialAddress: every class refused without asking, in IPv4, IPv6, and IPv4 carried
// in IPv6; public addresses are ordinary.
func TestSpecialAddress(t *testing.T) {
	for ip, want := range map[string]string{
		"127.0.0.1":              "a loopback address",
		"127.255.0.9":            "a loopback address",
		"::1":                    "a loopback address",
		"::ffff:127.0.0.1":       "a loopback address",
		"10.2.3.4":               "a private address",
		"172.16.0.1":             "a private address",
		"172.31.255.255":         "a private address",
		"192.168.1.1":            "a private address",
		"::ffff:192.168.1.1":     "a private address",
		"169.254.169.254":        "a link-local address",
		"::ffff:169.254.169.254": "a link-local address",
		"fe80::1":                "a link-local address",
		"fd00:ec2::254":          "a unique-local address",
		"fc00::1":                "a unique-local address",
		"100.64.0.1":             "a shared (CGNAT) address",
		"100.127.255.254":        "a shared (CGNAT) address",
		"0.0.0.0":                "an unspecified address",
		"::":                     "an unspecified address",
		"0.1.2.3":                "a reserved address",
		"255.255.255.255":        "a reserved address",
		"224.0.0.1":              "a multicast address",
		"ff02::1":                "a multicast address",
		"64:ff9b::a9fe:a9fe":     "a link-local address (inside an IPv6 address)",
		"2002:7f00:1::1":         "a loopback address (inside an IPv6 address)",
		"::127.0.0.1":            "a loopback address (inside an IPv6 address)",
		"8.8.8.8":                "",
		"172.32.0.1":             "",
		"100.128.0.1":            "",
		"93.184.216.34":          "",
		"2606:4700:4700::1111":   "",
		"64:ff9b::808:808":       "",
		"2002:808:808::1":        "",
	} {
		if got := specialAddress(netip.MustParseAddr(ip)); got != want {
			t.Errorf("%s: %q, want %q", ip, got, want)
		}
	}
}

// TestParseSettings: the shapes settings may take, and clear errors naming the field for
// the others; a header's value is never quoted in an error.
func TestParseSettings(t *testing.T) {
	s, err := ParseSettings(json.RawMessage(`{"mode": "workspace-write", "network": "allowlist", "allowedHosts": ["registry.npmjs.org", "*.pypi.org"],
		"deniedHosts": ["evil.pypi.org"], "allowPresets": ["go", "github"], "injectHeaders": {"api.example.com": {"Authorization": "env:EXAMPLE_TOKEN"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if *s.Network != ModeAllowlist || len(s.AllowedHosts) != 2 || s.InjectHeaders["api.example.com"]["Authorization"] != "env:EXAMPLE_TOKEN" {
		t.Errorf("parsed %+v", s)
	}
	for raw, want := range map[string]Mode{`{"network": true}`: ModeOn, `{"network": false}`: ModeOff} {
		if s, err := ParseSettings(json.RawMessage(raw)); err != nil || *s.Network != want {
			t.Errorf("%s: %v, %v", raw, s.Network, err)
		}
	}
	for raw, want := range map[string]string{
		`{"network": "yes"}`:                                                          `sandbox.network must be "allowlist", true or false, not "yes"`,
		`{"allowedHosts": ["https://x.com"]}`:                                         `sandbox.allowedHosts[0] "https://x.com" is not a host`,
		`{"deniedHosts": ["*"]}`:                                                      `sandbox.deniedHosts[0] "*" is not a host pattern`,
		`{"allowPresets": ["maven"]}`:                                                 `sandbox.allowPresets[0] "maven" is not a preset: the presets are crates, github, go, npm, pypi`,
		`{"injectHeaders": {"*.x.com": {"A": "env:B"}}}`:                              `"*.x.com": headers are added for an exact host only`,
		`{"injectHeaders": {"x.com": {"Host": "env:B"}}}`:                             `"Host" is a header the proxy itself manages`,
		`{"injectHeaders": {"x.com": {"Authorization": "Bearer sk-live-123456789"}}}`: `must be "env:NAME" (the environment variable holding the value), not a value`,
	} {
		_, err := ParseSettings(json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-live") {
			t.Errorf("%s: the error quotes the value: %v", raw, err)
		}
	}
}

func mode(m Mode) *Mode { return &m }

// TestResolve: the user's and the editor's settings add up (presets expanded, the editor's
// mode winning, only the user's headers); a workspace, trusted or not, only narrows: a
// stricter mode, more denied hosts, and an allowed list cut to the hosts already allowed.
func TestResolve(t *testing.T) {
	user := Settings{AllowedHosts: []string{"*.pypi.org", "docs.example.com"}, AllowPresets: []string{"go"},
		InjectHeaders: map[string]map[string]string{"API.example.com": {"Authorization": "env:T"}}}
	editor := Settings{Network: mode(ModeAllowlist), AllowedHosts: []string{"registry.npmjs.org"}, DeniedHosts: []string{"bad.example.com"},
		InjectHeaders: map[string]map[string]string{"x.example.com": {"X": "env:U"}}}
	workspace := Settings{Network: mode(ModeOn), AllowedHosts: []string{"files.pypi.org", "proxy.golang.org", "attacker.example"},
		DeniedHosts: []string{"docs.example.com"}, InjectHeaders: map[string]map[string]string{"attacker.example": {"X": "env:OPENAI_API_KEY"}}}

	want := Resolved{
		Mode:          ModeAllowlist,
		Allowed:       []string{"files.pypi.org", "proxy.golang.org"},
		Denied:        []string{"bad.example.com", "docs.example.com"},
		InjectHeaders: map[string]map[string]string{"api.example.com": {"Authorization": "env:T"}},
		Ignored: []string{
			"sandbox.injectHeaders from the editor (only the user settings file may name them)",
			"sandbox.network true (a workspace may only narrow)",
			`sandbox.allowedHosts "attacker.example" (a workspace may only narrow: it cannot add a host)`,
			"sandbox.injectHeaders (only the user settings file may name them)",
		},
	}
	for _, trusted := range []bool{false, true} {
		got := Resolve(user, editor, workspace, trusted)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("trusted %v (-want +got):\n%s", trusted, diff)
		}
	}
	// An untrusted folder may still turn the network off, and deny a host.
	off := Resolve(user, editor, Settings{Network: mode(ModeOff), DeniedHosts: []string{"files.pypi.org"}}, false)
	if off.Mode != ModeOff || !slices.Contains(off.Denied, "files.pypi.org") || len(off.Ignored) != 1 {
		t.Errorf("an untrusted folder narrowing: %+v", off)
	}

	narrow := Resolve(Settings{Network: mode(ModeOn)}, Settings{}, Settings{Network: mode(ModeOff), AllowPresets: []string{"npm"}}, true)
	if narrow.Mode != ModeOff || len(narrow.Allowed) != 0 || len(narrow.Ignored) != 2 {
		t.Errorf("a trusted workspace turning the network off, naming a preset not allowed above: %+v", narrow)
	}
	if d := Resolve(Settings{}, Settings{}, Settings{}, true); d.Mode != ModeAllowlist || d.Allowed != nil {
		t.Errorf("default: %+v", d)
	}
}

// TestPresets: every preset names exact hosts that parse as allowed hosts.
func TestPresets(t *testing.T) {
	for _, name := range PresetNames() {
		hosts, _ := PresetHosts(name)
		for _, h := range hosts {
			if p, err := parsePattern(h, true); err != nil || p.wildcard || p.String() != h {
				t.Errorf("preset %s: %q: %v", name, h, err)
			}
		}
	}
	if _, ok := PresetHosts("maven"); ok {
		t.Error("maven is a preset")
	}
}

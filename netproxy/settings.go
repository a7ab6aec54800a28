// This file holds the network part of the "sandbox" settings (network, allowedHosts,
// deniedHosts, allowPresets, injectHeaders) and how their sources merge: the user's, the
// editor's (initializationOptions, then session/new), and a workspace's, which may only
// narrow, and only once the folder is trusted.

package netproxy

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/textproto"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Settings are the network fields of a "sandbox" settings object. A field left out leaves
// the layer below in force. Settings has no UnmarshalJSON of its own, so that the sandbox
// package's Settings can embed it and decode one object with both parts.
type Settings struct {
	Network      *Mode    `json:"network,omitempty"`
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	DeniedHosts  []string `json:"deniedHosts,omitempty"`
	AllowPresets []string `json:"allowPresets,omitempty"`
	// InjectHeaders maps an exact host to the headers pid's proxy adds to the plain-http
	// requests sent to it, each value "env:NAME" (read from pid's environment at request
	// time). Only the user settings file may set it.
	InjectHeaders map[string]map[string]string `json:"injectHeaders,omitempty"`
}

// ParseSettings reads the network fields of a "sandbox" value and checks them; the other
// fields of the object (mode, writableRoots...) are left to the sandbox package. null or
// absent (empty raw) is the zero Settings. Errors name the field. Pure.
func ParseSettings(raw json.RawMessage) (Settings, error) {
	var s Settings
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return Settings{}, fmt.Errorf("sandbox: %v", err)
	}
	if err := s.Validate(); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// envRef matches an injectHeaders value: env: and an environment variable's name.
var envRef = regexp.MustCompile(`^env:([A-Za-z_][A-Za-z0-9_]*)$`)

// Validate reports the first thing wrong with s, naming the field. Pure.
func (s Settings) Validate() error {
	for i, h := range s.AllowedHosts {
		if _, err := parsePattern(h, true); err != nil {
			return fmt.Errorf("sandbox.allowedHosts[%d] %v", i, err)
		}
	}
	for i, h := range s.DeniedHosts {
		if _, err := parsePattern(h, false); err != nil {
			return fmt.Errorf("sandbox.deniedHosts[%d] %v", i, err)
		}
	}
	for i, n := range s.AllowPresets {
		if _, ok := presets[n]; !ok {
			return fmt.Errorf("sandbox.allowPresets[%d] %q is not a preset: the presets are %s", i, n, strings.Join(PresetNames(), ", "))
		}
	}
	for _, host := range slices.Sorted(maps.Keys(s.InjectHeaders)) {
		p, err := parsePattern(host, true)
		if err != nil {
			return fmt.Errorf("sandbox.injectHeaders: %v", err)
		}
		if p.wildcard {
			return fmt.Errorf("sandbox.injectHeaders: %q: headers are added for an exact host only", host)
		}
		for _, name := range slices.Sorted(maps.Keys(s.InjectHeaders[host])) {
			if !httpguts.ValidHeaderFieldName(name) {
				return fmt.Errorf("sandbox.injectHeaders[%q]: %q is not a header name", host, name)
			}
			switch textproto.CanonicalMIMEHeaderKey(name) {
			case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer",
				"Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Expect":
				return fmt.Errorf("sandbox.injectHeaders[%q]: %q is a header the proxy itself manages", host, name)
			}
			if !envRef.MatchString(s.InjectHeaders[host][name]) {
				// The value is not shown: it may be the secret itself, written by mistake.
				return fmt.Errorf("sandbox.injectHeaders[%q][%q] must be \"env:NAME\" (the environment variable holding the value), not a value", host, name)
			}
		}
	}
	return nil
}

// Over returns s with over's network mode when it sets one, the host and preset lists of
// both (a later source adds to them), and the headers of both (over's win for one host and
// header). Pure; s and over are not changed.
func (s Settings) Over(over Settings) Settings {
	if over.Network != nil {
		s.Network = over.Network
	}
	s.AllowedHosts = append(slices.Clip(s.AllowedHosts), over.AllowedHosts...)
	s.DeniedHosts = append(slices.Clip(s.DeniedHosts), over.DeniedHosts...)
	s.AllowPresets = append(slices.Clip(s.AllowPresets), over.AllowPresets...)
	if len(over.InjectHeaders) > 0 {
		m := map[string]map[string]string{}
		for _, src := range []map[string]map[string]string{s.InjectHeaders, over.InjectHeaders} {
			for h, hs := range src {
				if m[h] == nil {
					m[h] = map[string]string{}
				}
				maps.Copy(m[h], hs)
			}
		}
		s.InjectHeaders = m
	}
	return s
}

// Resolved is the network a session asks for, every source merged: what New takes.
type Resolved struct {
	Mode Mode
	// Allowed and Denied are host patterns, normalised, the presets' hosts included.
	Allowed []string
	Denied  []string
	// InjectHeaders is the user settings' injectHeaders, hosts normalised.
	InjectHeaders map[string]map[string]string
	// Ignored lists, for a person, what a source asked for and did not get.
	Ignored []string
}

// Resolve merges the sources of a session's network settings: user is the user settings
// file's, editor the editor's (initializationOptions then session/new, merged with Over),
// workspace the workspace folder's .pid/settings.json. The user's and the editor's add up
// (the editor's mode wins); only the user's injectHeaders count (the editor's settings may
// come from a workspace's .vscode folder). A workspace's settings, trusted or not (trusted
// changes nothing here), may only narrow: a stricter mode, more denied hosts, and, when it
// names allowedHosts or allowPresets, only those of its hosts the sources above already
// allow stay allowed (so it can remove allowed hosts, never add one); what it asks beyond
// that is ignored and said in Ignored. Every source is expected to have passed Validate; an
// entry that does not is ignored and said so. Pure.
func Resolve(user, editor, workspace Settings, trusted bool) Resolved {
	r := Resolved{Mode: ModeAllowlist}
	top := user.Over(editor)
	top.InjectHeaders = user.InjectHeaders
	if len(editor.InjectHeaders) > 0 {
		r.Ignored = append(r.Ignored, "sandbox.injectHeaders from the editor (only the user settings file may name them)")
	}
	if top.Network != nil {
		r.Mode = *top.Network
	}
	allowed := r.patterns(top.AllowedHosts, top.AllowPresets, "sandbox.allowedHosts", true)
	denied := r.patterns(top.DeniedHosts, nil, "sandbox.deniedHosts", false)
	for host, hs := range top.InjectHeaders {
		p, err := parsePattern(host, true)
		if err != nil || p.wildcard {
			r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.injectHeaders %q (not an exact host)", host))
			continue
		}
		if r.InjectHeaders == nil {
			r.InjectHeaders = map[string]map[string]string{}
		}
		r.InjectHeaders[p.host] = maps.Clone(hs)
	}

	// Narrowing needs no trust: an untrusted folder may still turn the network off or deny
	// more, as it may make the sandbox stricter in every other way.
	ws := workspace
	if ws.Network != nil {
		if ws.Network.openness() <= r.Mode.openness() {
			r.Mode = *ws.Network
		} else {
			r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.network %s (a workspace may only narrow)", modeText(*ws.Network)))
		}
	}
	denied = append(denied, r.patterns(ws.DeniedHosts, nil, "sandbox.deniedHosts", false)...)
	if len(ws.AllowedHosts) > 0 || len(ws.AllowPresets) > 0 {
		var kept []pattern
		for _, w := range r.patterns(ws.AllowedHosts, ws.AllowPresets, "sandbox.allowedHosts", true) {
			if slices.ContainsFunc(allowed, func(u pattern) bool { return u.covers(w) }) {
				kept = append(kept, w)
			} else {
				r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.allowedHosts %q (a workspace may only narrow: it cannot add a host)", w.String()))
			}
		}
		allowed = kept
	}
	if len(ws.InjectHeaders) > 0 {
		r.Ignored = append(r.Ignored, "sandbox.injectHeaders (only the user settings file may name them)")
	}
	r.Allowed = patternStrings(allowed)
	r.Denied = patternStrings(denied)
	return r
}

// patterns parses hosts and expands presets, leaving out (and listing in r.Ignored) what
// does not parse.
func (r *Resolved) patterns(hosts, presetNames []string, field string, allow bool) []pattern {
	var out []pattern
	for _, n := range presetNames {
		hs, ok := presets[n]
		if !ok {
			r.Ignored = append(r.Ignored, fmt.Sprintf("sandbox.allowPresets %q (not a preset)", n))
			continue
		}
		hosts = append(slices.Clip(hosts), hs...)
	}
	for _, h := range hosts {
		p, err := parsePattern(h, allow)
		if err != nil {
			r.Ignored = append(r.Ignored, fmt.Sprintf("%s %v", field, err))
			continue
		}
		out = append(out, p)
	}
	return out
}

// patternStrings returns the patterns' texts, without duplicates, in order.
func patternStrings(ps []pattern) []string {
	var out []string
	for _, p := range ps {
		if s := p.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// modeText is a mode as settings write it.
func modeText(m Mode) string {
	b, err := m.MarshalJSON()
	if err != nil {
		return string(m)
	}
	return string(b)
}

// This file is check: an entry folder (agent.json and icon.svg) checked as the ACP
// Registry's CI checks it (build_registry.py and client.py in agentclientprotocol/registry),
// without the network: the entry's shape (its schema), the exact version in every archive
// URL, a binary for every OS, the icon, and the auth check, which runs the binary of this
// machine's platform from its archive with its args and reads its answer to initialize.
// With -dist it also checks every archive against the entry's sha256 and dist/SHA256SUMS
// (the registry checks that each URL answers instead).

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	idRE         = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	semverRE     = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)
	sha256RE     = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)
	urlVersionRE = regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`)
)

func checkCmd(args []string, log io.Writer) (bool, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	dist := fs.String("dist", "", "make dist's folder: the archives are checked against their sha256, and the auth check runs the binary of this platform from its archive")
	version := fs.String("version", "", "the version the entry must have, exactly")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if fs.NArg() != 1 {
		return false, errors.New("check takes one entry folder (dist/registry/pid)")
	}
	problems := check(fs.Arg(0), *dist, *version)
	for _, p := range problems {
		fmt.Fprintln(log, "FAIL", p)
	}
	if len(problems) == 0 {
		fmt.Fprintln(log, "ok", fs.Arg(0))
	}
	return len(problems) == 0, nil
}

// check returns what is wrong with the entry in dir, each in a sentence; none when it passes.
func check(dir, dist, version string) []string {
	raw, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		return []string{err.Error()}
	}
	var entry map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&entry); err != nil {
		return []string{"agent.json is not a JSON object: " + err.Error()}
	}
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	// The schema (agent.schema.json): required members and their shapes.
	for _, k := range []string{"id", "name", "version", "description", "distribution"} {
		if _, ok := entry[k]; !ok {
			bad("agent.json: %s is required", k)
		}
	}
	str := func(k string) (string, bool) {
		v, present := entry[k]
		if !present {
			return "", false
		}
		s, ok := v.(string)
		if !ok {
			bad("agent.json: %s must be a string", k)
		}
		return s, ok
	}
	if id, ok := str("id"); ok {
		switch {
		case !idRE.MatchString(id):
			bad("agent.json: id %q must be lowercase letters, digits and hyphens, starting with a letter", id)
		case id != filepath.Base(filepath.Clean(dir)):
			bad("agent.json: id %q must be the name of its folder (%s)", id, filepath.Base(dir))
		}
	}
	for _, k := range []string{"name", "description"} {
		if s, ok := str(k); ok && s == "" {
			bad("agent.json: %s must not be empty", k)
		}
	}
	agentVersion, _ := str("version")
	if _, ok := entry["version"]; ok {
		parts := strings.Split(agentVersion, ".")
		if !semverRE.MatchString(agentVersion) || len(parts) < 3 || !allDigits(parts[:3]) {
			bad("agent.json: version %q must be a semantic version (1.2.3)", agentVersion)
		}
		if version != "" && agentVersion != version {
			bad("agent.json: version %q, want exactly %q", agentVersion, version)
		}
	}
	for _, k := range []string{"repository", "website", "license_url"} {
		if s, ok := str(k); ok && !isURI(s) {
			bad("agent.json: %s %q is not a URL", k, s)
		}
	}
	str("license")
	str("icon")
	if a, ok := entry["authors"]; ok && !stringList(a) {
		bad("agent.json: authors must be a list of strings")
	}
	dist0, _ := entry["distribution"].(map[string]any)
	if _, ok := entry["distribution"]; ok && len(dist0) == 0 {
		bad("agent.json: distribution must be an object with at least one member")
	}
	for k := range dist0 {
		if k != "binary" && k != "npx" && k != "uvx" {
			bad("agent.json: unknown distribution type %q (binary, npx or uvx)", k)
		}
	}
	targets := map[string]map[string]any{}
	if b, ok := dist0["binary"]; ok {
		binary, _ := b.(map[string]any)
		if len(binary) == 0 {
			bad("agent.json: distribution.binary must be an object with at least one platform")
		}
		families := map[string]bool{}
		for name, t := range binary {
			if !slices.ContainsFunc(platforms, func(p platform) bool { return p.name == name }) {
				bad("agent.json: unknown platform %q in distribution.binary", name)
				continue
			}
			families[strings.SplitN(name, "-", 2)[0]] = true
			tm, ok := t.(map[string]any)
			if !ok {
				bad("agent.json: distribution.binary.%s must be an object", name)
				continue
			}
			targets[name] = tm
			checkTarget(name, tm, agentVersion, bad)
		}
		for _, os := range []string{"darwin", "linux", "windows"} {
			if len(binary) > 0 && !families[os] {
				bad("agent.json: distribution.binary has no build for %s: the registry wants darwin, linux and windows", os)
			}
		}
	}
	out = append(out, checkIcon(filepath.Join(dir, "icon.svg"))...)
	if dist != "" {
		out = append(out, checkArchives(targets, dist)...)
		out = append(out, authCheck(targets, dist)...)
	}
	return out
}

// checkTarget checks one platform's binary: the schema's members and the exact version.
func checkTarget(name string, t map[string]any, version string, bad func(string, ...any)) {
	for k := range t {
		if !slices.Contains([]string{"archive", "sha256", "cmd", "args", "env"}, k) {
			bad("agent.json: distribution.binary.%s has an unknown member %q", name, k)
		}
	}
	archive, ok := t["archive"].(string)
	switch {
	case !ok:
		bad("agent.json: distribution.binary.%s.archive (a URL) is required", name)
	case !isURI(archive):
		bad("agent.json: distribution.binary.%s.archive %q is not a URL", name, archive)
	case strings.Contains(archive, "/latest/"):
		bad("agent.json: distribution.binary.%s.archive uses /latest/: give the release's version", name)
	default:
		if m := urlVersionRE.FindStringSubmatch(archive); m != nil && normalize(m[1]) != version {
			bad("agent.json: distribution.binary.%s.archive is of version %s, not %s", name, normalize(m[1]), version)
		}
	}
	if _, ok := t["cmd"].(string); !ok {
		bad("agent.json: distribution.binary.%s.cmd (a string) is required", name)
	}
	if s, present := t["sha256"]; present {
		if h, ok := s.(string); !ok || !sha256RE.MatchString(h) {
			bad("agent.json: distribution.binary.%s.sha256 must be 64 hex digits", name)
		}
	}
	if a, present := t["args"]; present && !stringList(a) {
		bad("agent.json: distribution.binary.%s.args must be a list of strings", name)
	}
	if e, present := t["env"]; present {
		m, ok := e.(map[string]any)
		for _, v := range m {
			if _, s := v.(string); !s {
				ok = false
			}
		}
		if !ok {
			bad("agent.json: distribution.binary.%s.env must map names to strings", name)
		}
	}
}

var (
	fillRE       = regexp.MustCompile(`(?i)\b(fill|stroke)\s*=\s*["']([^"']+)["']`)
	styleRE      = regexp.MustCompile(`(?i)\bstyle\s*=\s*["']([^"']+)["']`)
	styleColorRE = regexp.MustCompile(`(?i)\b(fill|stroke)\s*:\s*([^;]+)`)
	widthRE      = regexp.MustCompile(`<svg[^>]*\swidth=["'](\d+)`)
	heightRE     = regexp.MustCompile(`<svg[^>]*\sheight=["'](\d+)`)
	viewBoxRE    = regexp.MustCompile(`viewBox=["'][\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)`)
)

// checkIcon checks icon.svg as the registry does: square, 16x16, drawn in currentColor with
// no other color for fill or stroke.
func checkIcon(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return []string{"icon.svg: " + err.Error()}
	}
	svg := string(b)
	var out []string
	var w, h float64
	wm, hm := widthRE.FindStringSubmatch(svg), heightRE.FindStringSubmatch(svg)
	if wm != nil && hm != nil {
		w, _ = strconv.ParseFloat(wm[1], 64)
		h, _ = strconv.ParseFloat(hm[1], 64)
	} else if vb := viewBoxRE.FindStringSubmatch(svg); vb != nil {
		w, _ = strconv.ParseFloat(vb[1], 64)
		h, _ = strconv.ParseFloat(vb[2], 64)
	} else {
		return []string{"icon.svg: no width and height, and no viewBox"}
	}
	if w != h {
		out = append(out, fmt.Sprintf("icon.svg: must be square, not %gx%g", w, h))
	}
	if w != 16 || h != 16 {
		out = append(out, fmt.Sprintf("icon.svg: must be 16x16, not %gx%g", w, h))
	}
	allowed := func(v string) bool {
		v = strings.ToLower(strings.TrimSpace(v))
		return v == "currentcolor" || v == "none" || v == "inherit"
	}
	for _, m := range fillRE.FindAllStringSubmatch(svg, -1) {
		if !allowed(m[2]) {
			out = append(out, fmt.Sprintf("icon.svg: %s=%q is a fixed color (use currentColor or none)", m[1], m[2]))
		}
	}
	for _, s := range styleRE.FindAllStringSubmatch(svg, -1) {
		for _, m := range styleColorRE.FindAllStringSubmatch(s[1], -1) {
			if !allowed(m[2]) {
				out = append(out, fmt.Sprintf("icon.svg: style %s: %s is a fixed color", m[1], strings.TrimSpace(m[2])))
			}
		}
	}
	if !strings.Contains(strings.ToLower(svg), "currentcolor") {
		out = append(out, "icon.svg: must use currentColor, so that clients can theme it")
	}
	return out
}

// checkArchives checks that each platform's archive is in dist, listed in SHA256SUMS, and
// that the entry's sha256 is the archive's.
func checkArchives(targets map[string]map[string]any, dist string) []string {
	sums, err := readSums(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for name, t := range targets {
		archive, _ := t["archive"].(string)
		file := path.Base(archive)
		data, err := os.ReadFile(filepath.Join(dist, file))
		if err != nil {
			out = append(out, fmt.Sprintf("%s: the archive %s is not in %s", name, file, dist))
			continue
		}
		sum := sha256.Sum256(data)
		got := hex.EncodeToString(sum[:])
		if want, _ := t["sha256"].(string); !strings.EqualFold(want, got) {
			out = append(out, fmt.Sprintf("%s: agent.json's sha256 %q is not that of %s (%s)", name, want, file, got))
		}
		if listed := sums[file]; listed != got {
			out = append(out, fmt.Sprintf("%s: SHA256SUMS lists %q for %s, whose sha256 is %s", name, listed, file, got))
		}
	}
	return out
}

func allDigits(parts []string) bool {
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// normalize makes a version x.y.z, as the registry does with one found in a URL.
func normalize(v string) string {
	parts := strings.Split(v, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return strings.Join(parts[:3], ".")
}

// isURI reports whether s is an absolute URI (a scheme and more), as format "uri" asks.
func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

func stringList(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range l {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

// This file matches rules against a call's arguments: which values a gjson path yields, glob
// patterns for paths, word-boundary prefixes for commands, and the shell-metacharacter
// refusal that keeps an allow rule from allowing more than it names.

package permissions

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// shellMeta are the characters that let a command do more than its first words say: command
// separators, pipes, background jobs, substitutions, redirections, line breaks. An allow rule
// never matches a value containing one of them.
const shellMeta = ";|&`$()<>\n\r\x00"

// HasShellMeta reports whether s contains a shell metacharacter (; | & ` $ ( ) < > newline,
// carriage return or NUL): a value an allow rule never matches. Pure: safe for concurrent use.
func HasShellMeta(s string) bool { return strings.ContainsAny(s, shellMeta) }

// isGlob reports whether a pattern contains a glob character (*, ? or [).
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// isPathArgument reports whether a gjson path names a file path: its last element is "path"
// or ends with "path" or "Path" (file_path, filePath, edits.#.path). Patterns on such
// arguments are always globs.
func isPathArgument(p string) bool {
	last := p[strings.LastIndexAny(p, ".#|")+1:]
	return strings.HasSuffix(strings.ToLower(last), "path")
}

// globRule reports whether a rule's pattern is a glob (it contains *, ? or [, or its argument
// is a path argument) rather than a word-boundary prefix.
func globRule(pattern, argPath string) bool { return isGlob(pattern) || isPathArgument(argPath) }

// checkGlob reports a malformed glob (an unclosed [ class, a trailing backslash).
func checkGlob(p string) error {
	for _, seg := range strings.Split(p, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matches reports whether a rule applies to a call. The rule's argument may yield several
// values (a # path, or an array): an allow rule applies only when there is at least one value
// and every value matches; an ask or deny rule applies when any value matches. A missing
// argument yields no value (except grep, find and ls, whose missing path means ".").
func (r Rule) matches(c Call) bool {
	p := r.Path
	if p == "" {
		p, _ = DefaultArgument(c.Tool)
	}
	vals, ok := values(c, p)
	if !ok || len(vals) == 0 {
		return false
	}
	glob := globRule(r.Pattern, p)
	if r.Decision == Allow {
		for _, v := range vals {
			if !matchValue(r.Pattern, glob, v, c.Cwd, true) {
				return false
			}
		}
		return true
	}
	for _, v := range vals {
		if matchValue(r.Pattern, glob, v, c.Cwd, false) {
			return true
		}
	}
	return false
}

// value is one argument value: its text and whether it is a scalar (objects and null never
// match).
type value struct {
	text   string
	scalar bool
}

// values returns the values a gjson path yields on the call's arguments, arrays flattened;
// ok is false when the arguments are not JSON.
func values(c Call, p string) ([]value, bool) {
	args := c.Args
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !gjson.ValidBytes(args) {
		return nil, false
	}
	res := gjson.GetBytes(args, p)
	if !res.Exists() {
		if v, ok := missingDefault(c.Tool, p); ok {
			return []value{{text: v, scalar: true}}, true
		}
		return nil, true
	}
	var out []value
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		switch {
		case r.IsArray():
			for _, e := range r.Array() {
				walk(e)
			}
		case r.Type == gjson.String:
			out = append(out, value{text: r.Str, scalar: true})
		case r.Type == gjson.Number || r.Type == gjson.True || r.Type == gjson.False:
			out = append(out, value{text: r.Raw, scalar: true})
		default: // object, null
			out = append(out, value{})
		}
	}
	walk(res)
	return out, true
}

// matchValue reports whether one value matches a pattern (a glob when glob is set, else a
// prefix). forAllow refuses values with shell metacharacters and matches prefixes on the
// whole command only; otherwise a prefix also matches any part of a compound command.
func matchValue(pattern string, glob bool, v value, cwd string, forAllow bool) bool {
	if !v.scalar {
		return false
	}
	if forAllow && HasShellMeta(v.text) {
		return false
	}
	if glob {
		return globMatchValue(pattern, v.text, cwd)
	}
	if forAllow {
		return hasWordPrefix(v.text, pattern)
	}
	for _, seg := range segments(v.text) {
		if hasWordPrefix(seg, pattern) {
			return true
		}
	}
	return false
}

// normalizeSpace trims s and collapses runs of spaces and tabs into one space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// hasWordPrefix reports whether s, spaces normalized, equals prefix or starts with prefix
// followed by a space: "git status" matches "git status --short" but not "git statusx".
func hasWordPrefix(s, prefix string) bool {
	s, prefix = normalizeSpace(s), normalizeSpace(prefix)
	if prefix == "" || !strings.HasPrefix(s, prefix) {
		return false
	}
	return len(s) == len(prefix) || s[len(prefix)] == ' ' || strings.HasSuffix(prefix, " ")
}

// wrappers are command words that run the rest of the line as a command; a deny rule for
// "rm" also matches "sudo rm -rf x".
var wrappers = map[string]bool{
	"sudo": true, "env": true, "nohup": true, "time": true, "nice": true, "exec": true,
	"command": true, "builtin": true, "xargs": true, "doas": true, "stdbuf": true,
}

// segments returns the parts of a command a deny or ask prefix is tried on: the whole
// command, every piece between shell metacharacters or quotes, and each piece again without
// leading VAR=value assignments and wrapper words (sudo, env, ...) and their options. It is a
// best effort for catching commands, not a shell parser: deny rules are a convenience, the
// refusal of metacharacters by allow rules is the safety.
func segments(cmd string) []string {
	out := []string{cmd}
	pieces := strings.FieldsFunc(cmd, func(r rune) bool {
		return strings.ContainsRune(shellMeta+"\"'{}", r)
	})
	for _, p := range pieces {
		words := strings.Fields(p)
		if len(words) == 0 {
			continue
		}
		out = append(out, p)
		i := 0
		for i < len(words) && skippable(words[i], i > 0 && wrappers[words[i-1]] || i > 0 && strings.HasPrefix(words[i-1], "-")) {
			i++
		}
		if i > 0 && i < len(words) {
			out = append(out, strings.Join(words[i:], " "))
		}
	}
	return out
}

// skippable reports whether a word before the real command can be skipped: a wrapper word
// (sudo, env, ...), a VAR=value assignment, or an option of a wrapper (afterWrapper).
func skippable(w string, afterWrapper bool) bool {
	switch {
	case wrappers[w]:
		return true
	case strings.HasPrefix(w, "-"):
		return afterWrapper
	case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
		return true
	}
	return false
}

// globMatchValue reports whether a path value matches a glob pattern. Both are cleaned.
// Relative patterns match paths inside the working folder (an absolute value inside cwd is
// made relative first); a path that climbs out with .. or is absolute outside cwd never
// matches a relative pattern. Absolute patterns match absolute paths (a relative value is
// joined to cwd first).
func globMatchValue(pattern, v, cwd string) bool {
	if v == "" {
		return false
	}
	v = filepath.ToSlash(v)
	cwd = filepath.ToSlash(cwd)
	pattern = path.Clean(pattern)
	absPattern := strings.HasPrefix(pattern, "/")
	absValue := strings.HasPrefix(v, "/")
	v = path.Clean(v)
	switch {
	case absPattern && !absValue:
		if !strings.HasPrefix(cwd, "/") {
			return false
		}
		v = path.Join(cwd, v)
	case !absPattern && absValue:
		if !strings.HasPrefix(cwd, "/") {
			return false
		}
		c := path.Clean(cwd)
		switch {
		case v == c:
			v = "."
		case strings.HasPrefix(v, strings.TrimSuffix(c, "/")+"/"):
			v = strings.TrimPrefix(v, strings.TrimSuffix(c, "/")+"/")
		default:
			return false
		}
	}
	if !absPattern && (v == ".." || strings.HasPrefix(v, "../")) {
		return false
	}
	return globMatch(pattern, v)
}

// globMatch reports whether name matches pattern segment by segment: * ? and [...] match
// within one segment (path.Match), a ** segment matches zero or more segments.
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// SuggestPattern proposes the scope of an "always" answer to a call: the argument path and
// the pattern Store.Remember should record, so that the answer covers this call and calls
// like it, and no more.
//
//   - bash: the first word of the command, plus the second when it is a plain word
//     (`git status --short` -> `git status`, `ls -la` -> `ls`); a command with shell
//     metacharacters is kept whole (a remembered allow then never matches it again, because
//     allow rules refuse metacharacters, but a remembered deny does).
//   - read, write, edit, grep, find, ls: the exact path (relative to cwd when inside it).
//   - other tools, and calls without the argument: "" (the answer covers the whole tool).
//
// It returns the gjson path ("" for the tool's default) and the pattern. Patterns on path
// arguments are globs, so glob characters in the path are escaped: the pattern names that one
// path.
//
// Contract: the daemon calls it when the editor answers allowAlways or denyAlways, then passes
// the result to Store.Remember. Pure: safe for concurrent use; it cannot fail ("" means the
// whole tool).
func SuggestPattern(c Call) (argPath, pattern string) {
	p, ok := DefaultArgument(c.Tool)
	if !ok {
		return "", ""
	}
	vals, ok := values(c, p)
	if !ok || len(vals) != 1 || !vals[0].scalar || strings.TrimSpace(vals[0].text) == "" {
		return "", ""
	}
	v := vals[0].text
	if p == "command" {
		if HasShellMeta(v) {
			return "", normalizeSpace(v)
		}
		words := strings.Fields(v)
		if len(words) >= 2 && plainWord(words[1]) {
			return "", words[0] + " " + words[1]
		}
		return "", words[0]
	}
	v = path.Clean(filepath.ToSlash(v))
	if cwd := path.Clean(filepath.ToSlash(c.Cwd)); strings.HasPrefix(v, "/") && strings.HasPrefix(cwd, "/") {
		if v == cwd {
			v = "."
		} else if strings.HasPrefix(v, strings.TrimSuffix(cwd, "/")+"/") {
			v = strings.TrimPrefix(v, strings.TrimSuffix(cwd, "/")+"/")
		}
	}
	// Escape glob characters so the pattern names this one path.
	var b strings.Builder
	for _, r := range v {
		if strings.ContainsRune("*?[\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return "", b.String()
}

// plainWord reports whether w looks like a subcommand (status, test, run) rather than an
// option, a path or a value.
func plainWord(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}

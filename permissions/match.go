// This file matches rules against a call's arguments: which values a gjson path yields, glob
// patterns for paths, word prefixes for commands (matched on the command parsed by package
// shellcmd for bash), and the shell-metacharacter refusal that keeps an allow rule on
// another tool from allowing more than it names.

package permissions

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/shellcmd"
)

// shellMeta are the characters that let a command do more than its first words say: command
// separators, pipes, background jobs, substitutions, redirections, line breaks. An allow rule
// on an argument other than bash's command never matches a value containing one of them
// (bash's command is parsed instead).
const shellMeta = ";|&`$()<>\n\r\x00"

// HasShellMeta reports whether s contains a shell metacharacter (; | & ` $ ( ) < > newline,
// carriage return or NUL): a value an allow rule on an argument other than bash's command
// never matches. Pure: safe for concurrent use.
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

// shellRule reports whether a rule on a tool's argument is matched on the parsed command:
// bash's command. Its pattern is then a command, never a glob.
func shellRule(tool, argPath string) bool { return tool == "bash" && argPath == "command" }

// globRule reports whether a rule's pattern is a glob (it contains *, ? or [, or its argument
// is a path argument) rather than a word-boundary prefix. Rules on bash's command are
// neither (see shellRule).
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

// argPath returns the gjson path a rule looks at for a tool ("" when the tool has no default
// argument and the rule names none).
func (r Rule) argPath(tool string) string {
	if r.Path != "" {
		return r.Path
	}
	p, _ := DefaultArgument(tool)
	return p
}

// Matches reports whether a rule applies to a whole call, as a remembered answer or a
// scope kept in memory is applied.
//
// For bash's command (the rule's argument is "command"), the command is parsed (shell.go):
// an allow rule applies only when the command has no construct a rule cannot vouch for
// (eval, sh -c, an expansion in command position, ...), writes no file, and the rule matches
// every simple command in it; an ask or deny rule applies when it matches any of them (or
// may match one, through an expansion). For other arguments: the argument may yield several
// values (a # path, or an array); an allow rule applies only when there is at least one
// value and every value matches (and none has a shell metacharacter); an ask or deny rule
// applies when any value matches. A missing argument yields no value (except for grep, find
// and ls, whose missing path means "."). An allow never applies to a git command whose
// repository's configuration makes git run a program (gitrepo.go).
//
// Contract: called by Store.Lookup and by the daemon for answers kept in memory. Safe for
// concurrent use; it never fails (arguments that are not JSON match nothing). For a git
// command it reads the repository's configuration files (bounded, see Policy.Decide).
func (r Rule) Matches(c Call) bool {
	p := r.argPath(c.Tool)
	if !shellRule(c.Tool, p) {
		return r.matchesValues(c, p)
	}
	sc, ok := callCommand(c)
	if !ok {
		return false
	}
	cp := shellcmd.CompilePattern(r.Pattern)
	parts := sc.Subjects()
	if r.Decision == Allow {
		if sc.Unsafe != "" || len(sc.Writes) > 0 {
			return false
		}
		for i := range parts {
			if cp.Match(sc, &parts[i], true) != shellcmd.MatchYes {
				return false
			}
		}
		return sc.GitRisk(c.Cwd).Why == "" // a repository that makes git run a program asks
	}
	for i := range parts {
		if cp.Match(sc, &parts[i], r.Decision == Allow) != shellcmd.MatchNone {
			return true
		}
	}
	return false
}

// matches is Matches under the name the Store uses.
func (r Rule) matches(c Call) bool { return r.Matches(c) }

// matchSubject reports how a rule applies to one simple command of a call (pt; nil when
// the call is not a parsed bash command): rules on the command are matched on the part,
// rules on other arguments on the whole call.
func (r Rule) matchSubject(c Call, sc *shellcmd.Command, pt *shellcmd.Part) shellcmd.Match {
	p := r.argPath(c.Tool)
	if shellRule(c.Tool, p) {
		if sc == nil || pt == nil {
			return shellcmd.MatchNone
		}
		return shellcmd.CompilePattern(r.Pattern).Match(sc, pt, r.Decision == Allow)
	}
	if r.matchesValues(c, p) {
		return shellcmd.MatchYes
	}
	return shellcmd.MatchNone
}

// callCommand returns a bash call's parsed command; ok is false when the call has no
// command string.
func callCommand(c Call) (*shellcmd.Command, bool) {
	vals, ok := values(c, "command")
	if !ok || len(vals) != 1 || !vals[0].scalar {
		return nil, false
	}
	return shellcmd.ParseCached(vals[0].text), true
}

// matchesValues applies a rule to the values of an argument other than bash's command.
func (r Rule) matchesValues(c Call, p string) bool {
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

// matchValue reports whether one value of an argument other than bash's command matches a
// pattern (a glob when glob is set, else a word prefix). forAllow refuses values with shell
// metacharacters; otherwise a prefix also matches any simple command of the value read as
// a shell command (a deny rule "rm" on an MCP tool's "cmd" sees "ls; rm x").
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
	if hasWordPrefix(v.text, pattern) {
		return true
	}
	if forAllow {
		return false
	}
	sc := shellcmd.ParseCached(v.text)
	cp := shellcmd.CompilePattern(pattern)
	for i := range sc.Parts {
		if cp.Match(sc, &sc.Parts[i], false) != shellcmd.MatchNone {
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
	return len(s) == len(prefix) || s[len(prefix)] == ' '
}

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

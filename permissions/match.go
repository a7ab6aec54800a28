// This file matches rules against a call's arguments: which values a gjson path yields, glob
// patterns for paths, word prefixes for commands (matched on the parsed command for bash,
// see shell.go), the shell-metacharacter refusal that keeps an allow rule on another tool
// from allowing more than it names, and the scope of an "always" answer.

package permissions

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/gjson"
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

// matchResult is how a rule applies to one subject.
type matchResult int

const (
	matchNone  matchResult = iota
	matchMaybe             // a deny or ask rule that applies if an expansion turns out to be its word
	matchYes
)

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
	cp := compilePattern(r.Pattern)
	parts := sc.subjects()
	if r.Decision == Allow {
		if sc.unsafe != "" || len(sc.writes) > 0 {
			return false
		}
		for i := range parts {
			if cp.match(sc, &parts[i], Allow) != matchYes {
				return false
			}
		}
		return gitRiskOf(c, sc).why == "" // a repository that makes git run a program asks
	}
	for i := range parts {
		if cp.match(sc, &parts[i], r.Decision) != matchNone {
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
func (r Rule) matchSubject(c Call, sc *shellCmd, pt *shellPart) matchResult {
	p := r.argPath(c.Tool)
	if shellRule(c.Tool, p) {
		if sc == nil || pt == nil {
			return matchNone
		}
		return compilePattern(r.Pattern).match(sc, pt, r.Decision)
	}
	if r.matchesValues(c, p) {
		return matchYes
	}
	return matchNone
}

// callCommand returns a bash call's parsed command; ok is false when the call has no
// command string.
func callCommand(c Call) (*shellCmd, bool) {
	vals, ok := values(c, "command")
	if !ok || len(vals) != 1 || !vals[0].scalar {
		return nil, false
	}
	return parseShellCached(vals[0].text), true
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
	sc := parseShellCached(v.text)
	cp := compilePattern(pattern)
	for i := range sc.parts {
		if cp.match(sc, &sc.parts[i], Deny) != matchNone {
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

// cmdPattern is a rule's pattern on bash's command, read as a command.
type cmdPattern struct {
	// single is set for a pattern that is one simple command without redirections: it
	// matches a simple command of the call that starts with its words. any is set when
	// those words are only "*": every command.
	single bool
	any    bool
	words  []shellWord
	// exact is set for a single-command pattern that gives an interpreter's code inline
	// (python3 -c 'print(1)', awk '{print $1}'): as an allow it matches a part with exactly
	// its words, so that it allows that code and nothing more (as a deny or ask it is a
	// word prefix as usual).
	exact bool
	// canon is, for any other pattern, the canonical text of the one command it matches
	// exactly; "" matches nothing.
	canon string
	// problem says why the pattern can match no command ("" when it can).
	problem string
}

// patternCache holds compiled patterns (they come from settings and the store, so there
// are few); past maxPatterns, patterns are compiled on each use.
var (
	patternCache sync.Map // pattern text -> *cmdPattern
	patternCount atomic.Int64
)

const maxPatterns = 4096

// compilePattern returns the pattern text read as a command.
func compilePattern(p string) *cmdPattern {
	if v, ok := patternCache.Load(p); ok {
		return v.(*cmdPattern)
	}
	cp := newCmdPattern(p)
	if patternCount.Load() < maxPatterns {
		if _, loaded := patternCache.LoadOrStore(p, cp); !loaded {
			patternCount.Add(1)
		}
	}
	return cp
}

func newCmdPattern(p string) *cmdPattern {
	sc := parseShell(p)
	switch {
	case sc.parseErr != "":
		return &cmdPattern{problem: "it does not parse as a command (" + sc.parseErr + ")"}
	case sc.single && sc.main >= 0:
		words := sc.parts[sc.main].words
		if n := len(words); n > 0 && words[n-1].glob && words[n-1].text == "*" {
			words = words[:n-1] // a last word * stands for any further words
		}
		exact := sc.parts[sc.main].inline && len(words) == len(sc.parts[sc.main].words)
		return &cmdPattern{single: true, any: len(words) == 0, words: words, exact: exact}
	case sc.simple && sc.canon != "":
		return &cmdPattern{canon: sc.canon}
	}
	return &cmdPattern{problem: "it has several commands, redirections or expansions, so it must match a command exactly, and only simple commands with plain words joined by ;, &, &&, || or | can be matched exactly"}
}

// match reports how the pattern applies to one part of a command, for a rule deciding d.
//
// A single-command pattern matches a part whose words start with its words (after quote
// removal, wrappers stripped on both sides). The command name is compared exactly for
// allow (so "./git" or "/usr/bin/git" is not "git"), and by base name, ignoring case, for
// deny and ask ("/bin/rm" and "RM" are "rm"). A word of the part that is an expansion
// matches no literal word for allow, and may match any for deny and ask (matchMaybe). An
// allow match also needs the pattern to name every word the part needs vouched for.
//
// Any other pattern matches every part of the one command whose canonical text is its own.
func (cp *cmdPattern) match(sc *shellCmd, pt *shellPart, d Decision) matchResult {
	if !cp.single {
		if cp.canon == "" || !sc.simple || sc.canon != cp.canon || d == Allow && pt.vouch == noVouch {
			return matchNone
		}
		return matchYes
	}
	if len(pt.words) == 0 || len(cp.words) > len(pt.words) || d == Allow && cp.exact && len(cp.words) != len(pt.words) {
		return matchNone
	}
	res := matchYes
	for i, p := range cp.words {
		w := pt.words[i]
		switch {
		case i == 0:
			if !w.lit || !p.lit {
				return matchNone
			}
			if d == Allow && w.text != p.text || d != Allow && !strings.EqualFold(path.Base(w.text), path.Base(p.text)) {
				return matchNone
			}
		case w.lit && p.lit:
			if w.text == p.text {
				continue
			}
			if d != Allow && w.glob { // the glob may expand to the pattern's word
				if ok, _ := path.Match(w.text, p.text); ok {
					res = matchMaybe
					continue
				}
			}
			return matchNone
		case !p.lit: // the pattern names an expansion: only the same expansion matches
			if w.lit || w.text != p.text || d == Allow {
				return matchNone
			}
		default: // an expansion in the call where the pattern has a word
			if d == Allow {
				return matchNone
			}
			res = matchMaybe
		}
	}
	if d == Allow && (len(cp.words) < pt.vouch || cp.any && !pt.words[0].lit) {
		return matchNone
	}
	return res
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

// AlwaysScope is what an "always" answer to a call will cover: calls of Tool whose argument
// at Path matches Pattern, with a rule's meaning.
type AlwaysScope struct {
	Tool string
	// Path is the gjson path of the argument, "" = the tool's default argument.
	Path string
	// Pattern is "" for every call of the tool.
	Pattern string
	// Description says the scope for a person, in the editor's approval dialog: "bash
	// commands starting with `npm test` in this workspace".
	Description string
}

// Rule returns the rule an answer with decision d under this scope stands for (what
// Store.Remember records). A scope with an empty pattern has no rule: it covers the whole
// tool, which Matches knows and Rule.Matches does not. Pure.
func (a AlwaysScope) Rule(d Decision) Rule {
	return Rule{Path: a.Path, Pattern: a.Pattern, Decision: d}
}

// Matches reports whether an answer with decision d under this scope applies to a call, the
// way a remembered answer does (see Rule.Matches). The daemon uses it for answers it keeps in
// memory when the store cannot be written. Pure: safe for concurrent use.
func (a AlwaysScope) Matches(c Call, d Decision) bool {
	if c.Tool != a.Tool {
		return false
	}
	if a.Pattern == "" {
		return true
	}
	return a.Rule(d).Matches(c)
}

// SuggestScope returns the scope an "always" answer to a call should cover, and false when no
// scope both covers the call and is no wider than it can describe: the caller must then treat
// "always" as "once".
//
//   - bash, one simple command: its name, plus its subcommand when that is a plain word
//     (`git status --short` -> `git status`, `ls -la` -> `ls`, `[ -f go.mod ]` -> `[`),
//     harmless wrappers stripped (`timeout 5 npm test` -> `npm test`), extended to name the
//     options that write or run (`sed -i s/a/b/ f` -> `sed -i`).
//   - bash, several simple commands with plain words joined by ;, &, &&, || or |: the whole
//     command, normalised, matched exactly (`touch X; rm -f Y`).
//   - bash, a command with a construct no rule can vouch for (eval, sh -c, an expansion in
//     command position, a substitution, ...), a write (a redirection, tee, sort -o, ...), an
//     expansion in a compound command, or a command that does not parse: false.
//   - read, write, edit, grep, find, ls: the exact path, relative to cwd when inside it, with
//     its glob characters escaped; false when the call has no path, or one an allow rule
//     cannot match (a path with a shell metacharacter).
//   - tools without a default argument (scripted, MCP): Pattern "", every call of the tool.
//
// Every scope returned passes Rule.check (so Store.Remember accepts it), and both an allow and
// a deny with it match the call itself.
//
// Contract: the daemon calls it to describe the "always" choice before asking, and to record
// the answer. Pure: safe for concurrent use; it cannot fail.
func SuggestScope(c Call) (AlwaysScope, bool) {
	argPath, ok := DefaultArgument(c.Tool)
	if !ok {
		return AlwaysScope{Tool: c.Tool, Description: fmt.Sprintf("every call of the tool %s in this workspace", c.Tool)}, true
	}
	var s AlwaysScope
	if c.Tool == "bash" {
		if s, ok = suggestCommand(c); !ok {
			return AlwaysScope{}, false
		}
	} else {
		vals, ok := values(c, argPath)
		if !ok || len(vals) != 1 || !vals[0].scalar || strings.TrimSpace(vals[0].text) == "" {
			return AlwaysScope{}, false
		}
		rel := relativePath(vals[0].text, c.Cwd)
		s = AlwaysScope{Tool: c.Tool, Pattern: escapeGlob(rel),
			Description: fmt.Sprintf("%s calls on the path `%s` in this workspace", c.Tool, rel)}
	}
	if s.Rule(Allow).check(c.Tool) != nil || !s.Matches(c, Allow) || !s.Matches(c, Deny) {
		return AlwaysScope{}, false
	}
	return s, true
}

// suggestCommand is SuggestScope for a bash call.
func suggestCommand(c Call) (AlwaysScope, bool) {
	sc, ok := callCommand(c)
	if !ok || sc.unsafe != "" || len(sc.writes) > 0 || len(sc.parts) == 0 {
		return AlwaysScope{}, false
	}
	if sc.single && len(sc.parts) == 1 {
		pt := &sc.parts[0]
		if pt.vouch == noVouch || len(pt.words) == 0 {
			return AlwaysScope{}, false
		}
		n := 1
		if len(pt.words) > 1 && pt.words[1].lit && plainWord(pt.words[1].text) {
			n = 2
		}
		n = max(n, pt.vouch)
		if pt.interp {
			// An interpreter runs whatever code it is given: the scope names all of it (the
			// script and the options; for code given inline, exactly this command).
			n = len(pt.words)
		}
		words := make([]string, n)
		for i := range n {
			if !pt.words[i].lit || pt.interp && pt.words[i].glob {
				return AlwaysScope{}, false
			}
			words[i] = quoteWord(pt.words[i].text, i == 0)
		}
		p := strings.Join(words, " ")
		if pt.inline {
			return AlwaysScope{Tool: c.Tool, Pattern: p,
				Description: "exactly the bash command `" + p + "` in this workspace"}, true
		}
		return AlwaysScope{Tool: c.Tool, Pattern: p,
			Description: "bash commands starting with `" + p + "` in this workspace"}, true
	}
	if !sc.simple {
		return AlwaysScope{}, false
	}
	for _, pt := range sc.parts {
		if pt.vouch == noVouch {
			return AlwaysScope{}, false
		}
		for _, w := range pt.words {
			if !w.lit {
				return AlwaysScope{}, false
			}
		}
	}
	return AlwaysScope{Tool: c.Tool, Pattern: sc.canon,
		Description: "exactly the bash command `" + sc.canon + "` in this workspace"}, true
}

// relativePath cleans a path and makes it relative to cwd when it is inside it.
func relativePath(v, cwd string) string {
	v = path.Clean(filepath.ToSlash(v))
	if cwd := path.Clean(filepath.ToSlash(cwd)); strings.HasPrefix(v, "/") && strings.HasPrefix(cwd, "/") {
		if v == cwd {
			return "."
		}
		if strings.HasPrefix(v, strings.TrimSuffix(cwd, "/")+"/") {
			return strings.TrimPrefix(v, strings.TrimSuffix(cwd, "/")+"/")
		}
	}
	return v
}

// escapeGlob escapes glob characters so that a glob pattern names this one path.
func escapeGlob(v string) string {
	var b strings.Builder
	for _, r := range v {
		if strings.ContainsRune("*?[\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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

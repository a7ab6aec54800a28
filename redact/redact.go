// Package redact removes secrets from what tools return before the model, the editor or the
// session file sees it: the built-in secret patterns, the user's own patterns, and the
// known secrets of pid's environment and the keys pid login saved (package credentials) in
// their common encodings (package internal/secret).
// NewRedactor is the entry point; Redactor.Hook is the redaction as an afterToolCall hook
// (R11), which the daemon chains after the editor's own (toolexec.ChainAfter).
// docs/permissions.md describes the pattern list for users.
//
// This file holds the Redactor and the built-in secret patterns.
package redact

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/pid-agent/pid/internal/secret"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// secretPattern is one kind of secret. When the expression has capturing groups, only the
// last group that took part in the match is replaced (the rest, a header or key name, stays
// for the model to read); otherwise the whole match is.
type secretPattern struct {
	name string
	re   *regexp.Regexp
	// hints, when set, are literals one of which every match contains (lower case when fold
	// is set, compared with the text's ASCII lower case): the expression then runs only on
	// the lines holding a hint, which keeps redaction fast (Go's regexp is slow on patterns
	// without a literal prefix). Such patterns must not match across lines.
	hints []string
	fold  bool
	// keep reports whether a match is a false positive to leave alone, given the replaced
	// text and the byte that follows it (0 at the end). nil keeps nothing.
	keep func(secret string, next byte) bool
}

// Built-in patterns, applied in this order to the output of the previous one (so a specific
// pattern names a secret before a generic one sees it). See docs/permissions.md.
var builtins = []secretPattern{
	{name: "private-key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:(?:[^-]|-[^-])*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=\s:,.]|-[^-])*)`)},
	{name: "anthropic-key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), hints: []string{"sk-ant-"}},
	{name: "openai-key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), hints: []string{"sk-"}, keep: notMixed},
	{name: "github-token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{name: "aws-access-key", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), hints: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
	{name: "slack-token", re: regexp.MustCompile(`\bxox[baprs]-[A-Za-z0-9-]{10,}`), hints: []string{"xox"}},
	{name: "slack-webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}`)},
	{name: "google-api-key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), hints: []string{"AIza"}},
	{name: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), hints: []string{"eyJ"}},
	{name: "authorization", re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|token|basic|digest)[ \t]+)?([A-Za-z0-9._~+/=-]{8,})`), hints: []string{"authorization"}, fold: true},
	{name: "bearer-token", re: regexp.MustCompile(`\b[Bb]earer[ \t]+([A-Za-z0-9._~+/-]{20,}=*)`), hints: []string{"bearer"}, fold: true, keep: noDigit},
	{name: "url-password", re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@`), hints: []string{"://"}, keep: placeholder},
	{name: "secret-assignment", re: regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key))["']?[ \t]*(?::=|[:=])[ \t]*(?:"([^"\s]{6,})"|'([^'\s]{6,})'|([^\s"'=&,;<>(){}\[\]$%][^\s"'&,;<>(){}\[\]]{5,}))`), hints: []string{"pass", "secret", "token", "key"}, fold: true},
}

// notMixed keeps a match without both a letter and a digit: kebab-case words such as
// sk-some-long-identifier-name are not keys.
func notMixed(s string, _ byte) bool {
	return !strings.ContainsAny(s, "0123456789") || !strings.ContainsAny(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz")
}

// noDigit keeps a bearer "token" with no digit: prose ("Bearer authentication ...") rather
// than a token.
func noDigit(s string, _ byte) bool { return !strings.ContainsAny(s, "0123456789") }

// placeholder reports whether a value is a placeholder rather than a secret: a variable
// ($X, ${X}, %X%), a template ({{x}}, <password>), a mask (****, xxxx) or an earlier
// redaction.
func placeholder(s string, _ byte) bool {
	if s == "" || strings.ContainsAny(s[:1], "$%<{*") || strings.Contains(s, "${") || strings.Contains(s, "{{") ||
		strings.HasPrefix(s, "[REDACTED") {
		return true
	}
	return strings.Count(s, s[:1]) == len(s) // one repeated character
}

// identifier matches names of variables and fields (a.b.c, getToken, process.env.X).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// keepAssignment implements secret-assignment's false-positive rules; it needs the key, so it
// is applied by redactOne with the whole submatch.
func keepAssignment(key, value string, quoted bool, next byte) bool {
	if placeholder(value, next) {
		return true
	}
	if quoted {
		return false
	}
	// Unquoted: code rather than configuration when followed by a call or the value is a
	// name without digits (password: string, token=get_token, secret = config.secret); an
	// upper-case key (DB_PASSWORD=...) is an environment variable, whose value is a value.
	if next == '(' {
		return true
	}
	if identifier.MatchString(value) && !strings.ContainsAny(value, "0123456789") && key != strings.ToUpper(key) {
		return true
	}
	return false
}

// Redactor replaces secrets in text with [REDACTED:NAME]: the known secrets (WithKnown,
// [REDACTED:env NAME]) and the keys pid login saved (WithSaved, [REDACTED:credentials
// NAME]) in any of their forms, then the built-in patterns, then the extra patterns from
// settings ([REDACTED:custom]).
type Redactor struct {
	extra func() []*regexp.Regexp
	known []knownSecret
	// saved, when set, returns the keys pid login saved (WithSaved).
	saved func() map[string]*secret.Secret
}

// knownSecret is a secret pid holds, and the name of the variable it came from.
type knownSecret struct {
	name string
	s    *secret.Secret
}

// secretVarName matches the names of environment variables that hold a secret:
// OPENAI_API_KEY, ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD...
var secretVarName = regexp.MustCompile(`(?i)(?:^|_)(?:[a-z0-9]*key|token|secret|password|passwd|passphrase|credentials?|pat)$`)

// EnvSecrets returns the secrets an environment (os.Environ's "NAME=value" form) holds, by
// variable name: the values of the variables whose names say so (ending in KEY, TOKEN,
// SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL(S) or _PAT) and of the variables named
// in also (a model's apiKeyEnv), leaving out values shorter than 8 characters (no secret
// worth hiding inside words: a local server's "ollama" would blind the agent to every
// "ollama" it reads) and absolute paths (GIT_ASKPASS-like settings). Pure.
func EnvSecrets(env []string, also ...string) map[string]string {
	named := map[string]bool{}
	for _, n := range also {
		named[n] = true
	}
	out := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !named[name] && !secretVarName.MatchString(name) {
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) < secret.MinLen || strings.HasPrefix(value, "/") {
			continue
		}
		out[name] = value
	}
	return out
}

// WithKnown returns a Redactor like r that also replaces the known secrets (by the name
// shown in their place, [REDACTED:env NAME]): the secret itself, any run of 8 or more of
// its characters, and its base64 (standard and URL-safe) and hex encodings. Secrets
// shorter than 8 characters are left out. r is not changed. Pure: safe for concurrent use.
func (r *Redactor) WithKnown(secrets map[string]string) *Redactor {
	out := &Redactor{}
	if r != nil {
		*out = *r
	}
	out.known = append([]knownSecret(nil), out.known...)
	names := make([]string, 0, len(secrets))
	for name := range secrets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if s := secret.New(secrets[name]); s.Active() {
			out.known = append(out.known, knownSecret{name: name, s: s})
		}
	}
	return out
}

// WithSaved returns a Redactor like r that also replaces the keys saved returns, asked on
// every use, as [REDACTED:credentials NAME], in the same forms as WithKnown's secrets,
// after them (the daemon passes credentials.Secrets: pid login may save a key while pid
// runs, and a provider uses it from the next session on). saved must be safe for
// concurrent use and must not block; it should return the same prepared secrets while the
// keys do not change. r is not changed. Pure: safe for concurrent use.
func (r *Redactor) WithSaved(saved func() map[string]*secret.Secret) *Redactor {
	out := &Redactor{}
	if r != nil {
		*out = *r
	}
	out.saved = saved
	return out
}

// NewRedactor returns a Redactor that also applies the patterns extra returns, asked on every
// use (the daemon passes settings.Loader.RedactPatterns so settings reloads take effect).
// extra may be nil; it must be safe for concurrent use and must not block. The Redactor is
// safe for concurrent use and holds no resources.
func NewRedactor(extra func() []*regexp.Regexp) *Redactor { return &Redactor{extra: extra} }

// BuiltinPatternNames returns the names of the built-in patterns in the order they apply
// (the NAME in [REDACTED:NAME]). Pure: safe for concurrent use.
func BuiltinPatternNames() []string {
	out := make([]string, len(builtins))
	for i, p := range builtins {
		out[i] = p.name
	}
	return out
}

// Redact returns s with every secret replaced, and whether anything was. Safe for concurrent
// use; it never fails.
func (r *Redactor) Redact(s string) (string, bool) {
	changed := false
	if r != nil {
		for _, k := range r.known {
			if t := k.s.Replace(s, "[REDACTED:env "+k.name+"]"); t != s {
				s, changed = t, true
			}
		}
		if r.saved != nil {
			saved := r.saved()
			names := make([]string, 0, len(saved))
			for name := range saved {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if t := saved[name].Replace(s, "[REDACTED:credentials "+name+"]"); t != s {
					s, changed = t, true
				}
			}
		}
	}
	lower := asciiLower(s)
	for i := range builtins {
		t, c := redactOne(s, lower, &builtins[i])
		if c {
			s, lower, changed = t, asciiLower(t), true
		}
	}
	if r != nil && r.extra != nil {
		for _, re := range r.extra() {
			var c bool
			s, c = redactOne(s, "", &secretPattern{name: "custom", re: re})
			changed = changed || c
		}
	}
	return s, changed
}

// redactOne applies one pattern to s.
func redactOne(s, lower string, p *secretPattern) (string, bool) {
	matches := findAll(s, lower, p)
	if matches == nil {
		return s, false
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[0], m[1]
		g := 0
		for i := len(m)/2 - 1; i >= 1; i-- {
			if m[2*i] >= 0 {
				g = i
				break
			}
		}
		if g > 0 {
			start, end = m[2*g], m[2*g+1]
		}
		if start < last || start == end {
			continue
		}
		var next byte
		if end < len(s) {
			next = s[end]
		}
		secret := s[start:end]
		if p.name == "secret-assignment" {
			if keepAssignment(s[m[2]:m[3]], secret, g != 4, next) {
				continue
			}
		} else if p.keep != nil && p.keep(secret, next) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString("[REDACTED:")
		b.WriteString(p.name)
		b.WriteString("]")
		last = end
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// findAll returns the submatch indexes of p in s, like FindAllStringSubmatchIndex, running
// the expression only on the lines that hold one of p's hints when it has some. lower is s
// with ASCII letters lowered (for hints with fold).
func findAll(s, lower string, p *secretPattern) [][]int {
	if p.hints == nil {
		return p.re.FindAllStringSubmatchIndex(s, -1)
	}
	hay := s
	if p.fold {
		hay = lower
	}
	next := make([]int, len(p.hints)) // next occurrence of each hint at or after pos; -1: none
	for i, h := range p.hints {
		next[i] = strings.Index(hay, h)
	}
	var out [][]int
	pos := 0 // lines before pos are done
	for {
		at := -1
		for i, h := range p.hints {
			if next[i] >= 0 && next[i] < pos {
				if j := strings.Index(hay[pos:], h); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			return out
		}
		lineStart := max(strings.LastIndexByte(s[:at], '\n')+1, pos)
		lineEnd := len(s)
		if i := strings.IndexByte(s[at:], '\n'); i >= 0 {
			lineEnd = at + i
		}
		for _, m := range p.re.FindAllStringSubmatchIndex(s[lineStart:lineEnd], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += lineStart
				}
			}
			out = append(out, m)
		}
		pos = lineEnd + 1
		if pos >= len(s) {
			return out
		}
	}
}

// asciiLower returns s with A-Z lowered and every other byte unchanged, so byte offsets into
// it are offsets into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// Hook returns the redaction rule as an afterToolCall hook: it replaces the text blocks of
// the result's content in which a secret was found, returning Override{Content} only when
// something was redacted and nil otherwise. It never touches details, isError or terminate,
// nor image blocks.
//
// Contract: called by toolexec after a call executed, concurrently for different calls; it
// does not block, never fails (the error is always nil), and does not modify the input's
// content slice (a changed result is a new slice).
func (r *Redactor) Hook() toolexec.AfterHook {
	return func(_ context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
		var out []llm.Content
		for i, c := range in.Result.Content {
			if c.Type != llm.ContentText {
				continue
			}
			t, changed := r.Redact(c.Text)
			if !changed {
				continue
			}
			if out == nil {
				out = append([]llm.Content(nil), in.Result.Content...)
			}
			out[i].Text = t
		}
		if out == nil {
			return nil, nil
		}
		return &toolexec.Override{Content: out}, nil
	}
}

// Progress returns a call's progress content with secrets redacted, as a result's would be,
// and with a text's unfinished last word held back: progress comes in pieces, and the start
// of a secret (a token cut mid-way) matches no pattern yet. The final result carries it
// whole, and redacted. content is not modified; it is returned as it is when nothing
// changes.
//
// Contract: safe for concurrent use.
func (r *Redactor) Progress(content []llm.Content) []llm.Content {
	var out []llm.Content
	for i, c := range content {
		if c.Type != llm.ContentText {
			continue
		}
		t, changed := r.Redact(c.Text)
		if cut := unfinishedWord(t); cut < len(t) {
			t, changed = t[:cut]+"…", true
		}
		if !changed {
			continue
		}
		if out == nil {
			out = append([]llm.Content(nil), content...)
		}
		out[i].Text = t
	}
	if out == nil {
		return content
	}
	return out
}

// unfinishedWord returns where a text's last word starts when the text does not end in white
// space (that word may be the start of a secret), else len(t).
func unfinishedWord(t string) int {
	i := len(t)
	for i > 0 && !isSpace(t[i-1]) {
		i--
	}
	return i
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

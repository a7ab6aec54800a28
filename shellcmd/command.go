// Package shellcmd reads a bash command line the way bash would before it runs it, so that
// permission rules can be matched on what the command does rather than on its text. pid's
// permission policy (package permissions) is its one user; it is a package of its own
// because reading shell is a large job of its own, tested on its own corpus, and knows
// nothing of policies: it says what a command runs, writes and hides, never whether that
// is allowed.
//
// The entry point is ParseCached (Parse without the cache): it parses a command with
// mvdan.cc/sh and returns a Command: the simple commands that would run (harmless wrappers
// stripped, commands run by other commands added as parts of their own), the files it would
// write, and the first construct no rule can vouch for. CompilePattern reads a rule's
// pattern as a command and Pattern.Match applies it to one part; Command.GitRisk reads the
// configuration of the git repositories a git command would run in (gitrepo.go);
// SuggestScope proposes the pattern an "always" answer to a command should cover.
// docs/permissions.md ("Rules on bash commands") describes the behaviour for users.
//
// This file holds the Command, its parts and words, and parsing with its cache.
package shellcmd

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"mvdan.cc/sh/v3/syntax"
)

// Word is one word of a command after quote removal.
type Word struct {
	// Text is the word without its quotes when Lit; otherwise the word as written (so that
	// two identical expansions still compare equal).
	Text string
	// Lit reports whether the word is known before the command runs: no parameter,
	// command, arithmetic, tilde or brace expansion.
	Lit bool
	// Glob reports whether the word has an unquoted *, ? or [...], which bash replaces with
	// the names of matching files.
	Glob bool
}

// NoVouch is a Part.Vouch that no rule satisfies.
const NoVouch = math.MaxInt

// Part is one simple command that a bash command line would run.
type Part struct {
	// Words are the command's words, harmless wrappers and assignments stripped (and, for
	// git, harmless global options); Words[0] is the command's name.
	Words []Word
	// Vouch is how many leading words an allow rule must name to allow the part: 0 for a
	// plain command; i+1 when Words[i] writes or runs something pid cannot check (an allow
	// rule naming that word vouches for it); NoVouch when no rule can.
	Vouch int
	// Interp reports whether the command is an interpreter of a language (python3, node,
	// perl, awk, ...); Inline, whether its code is in its arguments (python3 -c CODE,
	// node -e CODE, awk PROGRAM). A pattern that is an inline part allows exactly its
	// words, and an "always" scope for an interpreter names every word (pattern.go, scope.go).
	Interp, Inline bool
}

// Text returns the part as a person reads it: the words, quoted as needed. Pure.
func (p *Part) Text() string {
	var b strings.Builder
	for i, w := range p.Words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.Lit && !w.Glob {
			b.WriteString(quoteWord(w.Text, i == 0))
		} else {
			b.WriteString(w.Text)
		}
	}
	return b.String()
}

// Command is what a command line would do. It never changes once built: parsed commands
// are shared between goroutines through the cache below, so a caller reads its fields and
// never modifies them.
type Command struct {
	// Parts are the simple commands that would run, in the order they appear, the commands
	// run by other commands (xargs, find -exec, sh -c, eval, substitutions) among them.
	Parts []Part
	// Writes are the files the command writes (redirections, tee, sort -o, git --output),
	// as written; /dev/null and the standard streams are left out.
	Writes []string
	// Unsafe says, for a person, the first construct no rule can vouch for (eval, sh -c,
	// source, a command named by an expansion, a parse error, ...); "" when there is none.
	Unsafe string
	// ParseErr is set when the command line itself could not be read (a syntax error, a
	// control character, too long).
	ParseErr string
	// Canon is the command with its quoting normalised, when simple is set ("" otherwise): simple commands
	// with literal words and redirections, joined by ;, &, &&, || or |.
	Canon  string
	simple bool
	// single reports whether the command is one simple command without redirections;
	// main is then the index of its part in Parts (-1 when it has none).
	single bool
	main   int
	// cd reports whether the command changes its working folder (cd, pushd, popd, env -C).
	cd bool
	// dirs are the folders cd and pushd go to, as written, in order; dirUnknown is set when
	// the command changes folder to one pid cannot tell (cd alone, cd -, popd, env -C, an
	// expansion). GitRisk checks the git repositories of all of them.
	dirs       []string
	dirUnknown bool
}

// Subjects returns the parts rules are tried on: the parts, or one empty part for a command
// that runs nothing (only compound patterns can match it). Pure.
func (c *Command) Subjects() []Part {
	if len(c.Parts) == 0 {
		return []Part{{}}
	}
	return c.Parts
}

// maxShellInput is the longest command pid parses; a longer one is never allowed by a rule.
const maxShellInput = 1 << 20

// maxShellDepth bounds the nesting of commands read from strings (eval, sh -c, env -S).
const maxShellDepth = 4

// maxNesting bounds how deep brackets nest in a command pid parses: the parser takes time
// quadratic in the depth of some constructs ("((((..."), and no real command nests deeper.
const maxNesting = 200

// tooDeep reports whether brackets nest deeper than maxNesting in s (counting quoted ones
// too: the check only has to be cheap and never miss).
func tooDeep(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[', '`':
			if depth++; depth > maxNesting {
				return true
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// parserPool holds bash parsers: a syntax.Parser is reusable but not safe for concurrent use.
var parserPool = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// cmdCache remembers the last commands parsed, so that the store's look-ups after Decide,
// or the same command checked again, do not parse again. Entries are immutable.
var (
	cmdCache     [32]atomic.Pointer[cachedCmd]
	cmdCacheSeed = maphash.MakeSeed()
)

type cachedCmd struct {
	src string
	cmd *Command
}

// maxCachedInput is the longest command the cache keeps (32 of them at most).
const maxCachedInput = 64 << 10

// ParseCached is Parse with a small cache in front: the policy parses a command once per
// decision, and the store's look-ups and repeated checks of the same command find it here.
//
// Contract: safe for concurrent use; it never fails. The Command must not be modified.
func ParseCached(src string) *Command {
	if len(src) > maxCachedInput {
		return Parse(src)
	}
	slot := &cmdCache[maphash.String(cmdCacheSeed, src)%uint64(len(cmdCache))]
	if e := slot.Load(); e != nil && e.src == src {
		return e.cmd
	}
	c := Parse(src)
	slot.Store(&cachedCmd{src: src, cmd: c})
	return c
}

// Parse reads a command line. It never fails: a command that does not parse, or that pid
// cannot read for another reason, has Unsafe set (and the parts read before the error, so
// that deny rules still see them).
//
// Contract: safe for concurrent use. It reads no file and runs nothing; its time is bounded
// by the input's length (at most 1 MiB is parsed) and nesting.
func Parse(src string) (c *Command) {
	c = &Command{main: -1}
	if len(src) > maxShellInput {
		c.Unsafe, c.ParseErr = "the command is too long to check", "too long"
		return c
	}
	if tooDeep(src) {
		c.Unsafe, c.ParseErr = "the command nests too deeply to check", "nests too deeply"
		return c
	}
	defer func() {
		if recover() != nil { // the parser is fuzzed, but a panic must never reach a tool call
			c = &Command{main: -1, Unsafe: "the command could not be read", ParseErr: "internal error"}
		}
	}()
	for i := 0; i < len(src); i++ {
		if b := src[i]; b < 0x20 && b != '\t' && b != '\n' || b == 0x7f {
			c.Unsafe, c.ParseErr = "the command contains control characters", "control character"
			break
		}
	}
	r := &shellReader{cmd: c, src: src}
	r.run()
	if c.cd && c.Unsafe == "" {
		for _, w := range c.Writes {
			if !strings.HasPrefix(w, "/") {
				c.Unsafe = "the command changes folder, then writes to a relative path (" + w + ")"
				break
			}
		}
	}
	return c
}

// This file reads a rule's pattern on bash's command as a command, and matches it against
// one part of a parsed command: word by word for a single command (wrappers stripped on
// both sides), exactly on the canonical text for a compound one.

package shellcmd

import (
	"path"
	"strings"
	"sync"
	"sync/atomic"
)

// Match is how a pattern applies to one part of a command.
type Match int

const (
	MatchNone  Match = iota // the pattern does not apply
	MatchMaybe              // it applies if an expansion turns out to be its word (deny and ask only)
	MatchYes                // it applies
)

// Pattern is a rule's pattern on bash's command, read as a command. It never changes once
// compiled: compiled patterns are shared between goroutines.
type Pattern struct {
	// single is set for a pattern that is one simple command without redirections: it
	// matches a simple command of the call that starts with its words. any is set when
	// those words are only "*": every command.
	single bool
	any    bool
	words  []Word
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

// Problem says, for a person, why the pattern can match no command ("" when it can): a
// settings file with such a rule is reported. Pure.
func (cp *Pattern) Problem() string { return cp.problem }

// patternCache holds compiled patterns (they come from settings and the store, so there
// are few); past maxPatterns, patterns are compiled on each use.
var (
	patternCache sync.Map // pattern text -> *Pattern
	patternCount atomic.Int64
)

const maxPatterns = 4096

// CompilePattern returns a pattern text read as a command. A pattern that can match no
// command is returned too, with Problem set (it matches nothing).
//
// Contract: safe for concurrent use; it never fails. The Pattern must not be modified.
func CompilePattern(p string) *Pattern {
	if v, ok := patternCache.Load(p); ok {
		return v.(*Pattern)
	}
	cp := newCmdPattern(p)
	if patternCount.Load() < maxPatterns {
		if _, loaded := patternCache.LoadOrStore(p, cp); !loaded {
			patternCount.Add(1)
		}
	}
	return cp
}

func newCmdPattern(p string) *Pattern {
	sc := Parse(p)
	switch {
	case sc.ParseErr != "":
		return &Pattern{problem: "it does not parse as a command (" + sc.ParseErr + ")"}
	case sc.single && sc.main >= 0:
		words := sc.Parts[sc.main].Words
		if n := len(words); n > 0 && words[n-1].Glob && words[n-1].Text == "*" {
			words = words[:n-1] // a last word * stands for any further words
		}
		exact := sc.Parts[sc.main].Inline && len(words) == len(sc.Parts[sc.main].Words)
		return &Pattern{single: true, any: len(words) == 0, words: words, exact: exact}
	case sc.simple && sc.Canon != "":
		return &Pattern{canon: sc.Canon}
	}
	return &Pattern{problem: "it has several commands, redirections or expansions, so it must match a command exactly, and only simple commands with plain words joined by ;, &, &&, || or | can be matched exactly"}
}

// Match reports how the pattern applies to one part pt of the command sc, for a rule that
// allows (forAllow) or that denies or asks.
//
// A single-command pattern matches a part whose words start with its words (after quote
// removal, wrappers stripped on both sides). The command name is compared exactly for
// allow (so "./git" or "/usr/bin/git" is not "git"), and by base name, ignoring case, for
// deny and ask ("/bin/rm" and "RM" are "rm"). A word of the part that is an expansion
// matches no literal word for allow, and may match any for deny and ask (MatchMaybe). An
// allow match also needs the pattern to name every word the part needs vouched for.
//
// Any other pattern matches every part of the one command whose canonical text is its own.
//
// Contract: pt is one of sc.Subjects(). Pure: safe for concurrent use.
func (cp *Pattern) Match(sc *Command, pt *Part, forAllow bool) Match {
	if !cp.single {
		if cp.canon == "" || !sc.simple || sc.Canon != cp.canon || forAllow && pt.Vouch == NoVouch {
			return MatchNone
		}
		return MatchYes
	}
	if len(pt.Words) == 0 || len(cp.words) > len(pt.Words) || forAllow && cp.exact && len(cp.words) != len(pt.Words) {
		return MatchNone
	}
	res := MatchYes
	for i, p := range cp.words {
		w := pt.Words[i]
		switch {
		case i == 0:
			if !w.Lit || !p.Lit {
				return MatchNone
			}
			if forAllow && w.Text != p.Text || !forAllow && !strings.EqualFold(path.Base(w.Text), path.Base(p.Text)) {
				return MatchNone
			}
		case w.Lit && p.Lit:
			if w.Text == p.Text {
				continue
			}
			if !forAllow && w.Glob { // the glob may expand to the pattern's word
				if ok, _ := path.Match(w.Text, p.Text); ok {
					res = MatchMaybe
					continue
				}
			}
			return MatchNone
		case !p.Lit: // the pattern names an expansion: only the same expansion matches
			if w.Lit || w.Text != p.Text || forAllow {
				return MatchNone
			}
		default: // an expansion in the call where the pattern has a word
			if forAllow {
				return MatchNone
			}
			res = MatchMaybe
		}
	}
	if forAllow && (len(cp.words) < pt.Vouch || cp.any && !pt.Words[0].Lit) {
		return MatchNone
	}
	return res
}

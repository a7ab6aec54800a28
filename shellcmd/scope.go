// This file proposes the pattern an "always" answer to a bash command should cover: no
// wider than the command, and naming every word an allow rule must vouch for.

package shellcmd

import (
	"strings"
)

// Scope is the pattern an "always" answer to a command covers.
type Scope struct {
	// Pattern is a rule's pattern on bash's command (see CompilePattern).
	Pattern string
	// Exact reports whether the pattern covers exactly this command (several commands, or
	// an interpreter's code given inline) rather than every command starting with its words.
	Exact bool
}

// SuggestScope returns the pattern an "always" answer to a command should cover, and false
// when no pattern covers the command without covering more than a person was shown:
//
//   - one simple command: its name, plus its subcommand when that is a plain word
//     (`git status --short` -> `git status`, `ls -la` -> `ls`, `[ -f go.mod ]` -> `[`),
//     harmless wrappers stripped (`timeout 5 npm test` -> `npm test`), extended to name the
//     options that write or run (`sed -i s/a/b/ f` -> `sed -i`), and every word for an
//     interpreter (its code is what runs);
//   - several simple commands with plain words joined by ;, &, &&, || or |: the whole
//     command, normalised, matched exactly (`touch X; rm -f Y`);
//   - a command with a construct no rule can vouch for (eval, sh -c, an expansion in
//     command position, a substitution, ...), a write (a redirection, tee, sort -o, ...), an
//     expansion in a compound command, or a command that does not parse: false.
//
// Contract: the policy's SuggestScope calls it for bash calls. Pure: safe for concurrent
// use; it cannot fail.
func SuggestScope(sc *Command) (Scope, bool) {
	if sc.Unsafe != "" || len(sc.Writes) > 0 || len(sc.Parts) == 0 {
		return Scope{}, false
	}
	if sc.single && len(sc.Parts) == 1 {
		pt := &sc.Parts[0]
		if pt.Vouch == NoVouch || len(pt.Words) == 0 {
			return Scope{}, false
		}
		n := 1
		if len(pt.Words) > 1 && pt.Words[1].Lit && plainWord(pt.Words[1].Text) {
			n = 2
		}
		n = max(n, pt.Vouch)
		if pt.Interp {
			// An interpreter runs whatever code it is given: the scope names all of it (the
			// script and the options; for code given inline, exactly this command).
			n = len(pt.Words)
		}
		words := make([]string, n)
		for i := range n {
			if !pt.Words[i].Lit || pt.Interp && pt.Words[i].Glob {
				return Scope{}, false
			}
			words[i] = quoteWord(pt.Words[i].Text, i == 0)
		}
		p := strings.Join(words, " ")
		if pt.Inline {
			return Scope{Pattern: p, Exact: true}, true
		}
		return Scope{Pattern: p}, true
	}
	if !sc.simple {
		return Scope{}, false
	}
	for _, pt := range sc.Parts {
		if pt.Vouch == NoVouch {
			return Scope{}, false
		}
		for _, w := range pt.Words {
			if !w.Lit {
				return Scope{}, false
			}
		}
	}
	return Scope{Pattern: sc.Canon, Exact: true}, true
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

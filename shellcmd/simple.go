// This file reads simple commands: declarations and assignments in front of a command, the
// command name (opaque builtins, shells, a name made by an expansion), and the wrappers
// stripped before it.

package shellcmd

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// decl reads declare, export, local, readonly, typeset and nameref: a part of its own, and
// the variables it sets.
func (r *shellReader) decl(d *syntax.DeclClause) {
	if d.Variant == nil {
		return
	}
	words := []Word{{Text: d.Variant.Value, Lit: true}}
	for _, a := range d.Args {
		if a == nil {
			continue
		}
		name := r.assign(a)
		switch {
		case a.Naked && a.Name != nil:
			words = append(words, Word{Text: a.Name.Value, Lit: true})
		case a.Naked:
			w := r.word(a.Value)
			if w.Lit && subscriptTrick(w.Text) {
				r.setUnsafe("the command names a variable with a subscript bash evaluates")
			}
			words = append(words, w)
		default:
			if name != "" && !harmlessVar(name) {
				r.setUnsafe("the command sets " + name + ", which can change what later commands run")
			}
			v := literal(a.Value) // assign read its expansions
			if a.Index != nil || a.Array != nil || a.Append || !v.Lit {
				words = append(words, Word{Text: r.source(a)})
			} else {
				words = append(words, Word{Text: name + "=" + v.Text, Lit: true})
			}
		}
	}
	r.addPart(words, 0)
}

// assign reads an assignment's value, index and array elements, and returns the name
// assigned ("" when none).
func (r *shellReader) assign(a *syntax.Assign) string {
	if a.Index != nil {
		r.arith(a.Index)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				r.arith(e.Index)
			}
			r.word(e.Value)
		}
	}
	if !a.Naked && a.Value != nil {
		r.word(a.Value)
	}
	if a.Name == nil {
		return ""
	}
	return a.Name.Value
}

// subscriptTrick reports whether a variable name given as an argument has a subscript with
// an expansion: bash evaluates it (read 'a[$(cmd)]', printf -v, unset, test -v ...).
func subscriptTrick(s string) bool {
	return strings.ContainsRune(s, '[') && strings.ContainsAny(s, "$`")
}

// call reads a simple command: its assignments, its words, and the part(s) it makes.
func (r *shellReader) call(ce *syntax.CallExpr, structured bool) {
	if structured {
		r.seen = append(r.seen, ce)
	}
	var env []string
	for _, a := range ce.Assigns {
		if a == nil {
			continue
		}
		if name := r.assign(a); name != "" {
			env = append(env, name)
		}
		if a.Index != nil || a.Array != nil {
			env = append(env, "") // not a plain name: never harmless
		}
	}
	words := make([]Word, 0, len(ce.Args))
	for _, a := range ce.Args {
		words = append(words, r.word(a))
	}
	if len(words) == 0 {
		// Assignments alone change the shell's variables for what follows.
		for _, n := range env {
			if !harmlessVar(n) {
				r.setUnsafe("the command sets " + n + ", which can change what later commands run")
				break
			}
		}
		return
	}
	first := r.simple(words, env, false)
	if r.depth == 0 && structured && r.seen[0] == ce && first < len(r.cmd.Parts) {
		r.cmd.main = first
	}
}

// harmlessVars are the environment variables an assignment may set in front of an allowed
// command (FOO=1 cmd) without making it ask: they change no program's choice of what to
// run. Any other name (PATH, LD_PRELOAD, GIT_*, PAGER, HOME, ...) can make an allowed
// command run something else.
var harmlessVars = map[string]bool{
	"CI": true, "DEBUG": true, "VERBOSE": true, "NODE_ENV": true, "RAILS_ENV": true,
	"RACK_ENV": true, "TZ": true, "LANG": true, "LANGUAGE": true, "LC_ALL": true,
	"LC_CTYPE": true, "LC_MESSAGES": true, "LC_COLLATE": true, "NO_COLOR": true,
	"FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "TERM": true,
	"COLUMNS": true, "LINES": true, "CGO_ENABLED": true, "GOOS": true, "GOARCH": true,
	"GOAMD64": true, "GOARM": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true,
	"GOTRACEBACK": true, "RUST_BACKTRACE": true, "RUST_LOG": true, "PYTHONUNBUFFERED": true,
	"PYTHONDONTWRITEBYTECODE": true, "PYTHONIOENCODING": true, "PYTHONHASHSEED": true,
	"LOG_LEVEL": true,
}

// harmlessVar reports whether setting a variable cannot change what an allowed command runs.
func harmlessVar(name string) bool { return harmlessVars[name] }

// plainName reports whether a command name is plain printable ASCII: a name with another
// character (a Cyrillic "г" for "r", a fullwidth letter, a control character) is never
// taken for an allowed command.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// shells are interpreters of shell scripts: what they run is text pid does not see.
// su, runuser and script take a command line with -c too.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "csh": true, "tcsh": true, "fish": true, "busybox": true,
	"su": true, "runuser": true, "script": true,
}

// opaque are builtins that run code pid cannot see, with the reason shown to a person.
var opaque = map[string]string{
	"source": "runs the commands of a file",
	".":      "runs the commands of a file",
	"trap":   "sets commands to run later",
	"alias":  "defines an alias",
	"enable": "changes the shell's builtins",
	"fc":     "runs commands from the history",
	"hash":   "changes where commands are found",
}

// addPart appends a part and returns its index.
func (r *shellReader) addPart(words []Word, vouch int) int {
	r.cmd.Parts = append(r.cmd.Parts, Part{Words: words, Vouch: vouch})
	return len(r.cmd.Parts) - 1
}

// raise makes a part need at least n words of an allow rule.
func raise(vouch *int, n int) {
	if n > *vouch {
		*vouch = n
	}
}

// simple adds the parts of one simple command and returns the index of the first (the
// command itself once harmless wrappers are stripped). env are the names assigned in front
// of it; dynTail says that arguments pid cannot see are appended (xargs).
func (r *shellReader) simple(words []Word, env []string, dynTail bool) int {
	first := len(r.cmd.Parts)
	for len(words) > 0 {
		w0 := words[0]
		if !w0.Lit || w0.Glob {
			r.setUnsafe("the command runs a command named by an expansion (" + w0.Text + ")")
			r.addPart(words, NoVouch)
			return first
		}
		if !plainName(w0.Text) {
			r.setUnsafe("the command name " + quoteWord(w0.Text, true) + " is not plain ASCII")
			r.addPart(words, NoVouch)
			return first
		}
		base := path.Base(w0.Text)
		vouch := 0
		for _, n := range env {
			if !harmlessVar(n) {
				vouch = NoVouch
			}
		}
		w, ok := wrappers[base]
		if !ok {
			return r.command1(words, vouch, dynTail, first)
		}
		start, known, x := w.scan(words)
		if x.lookup {
			return r.command1(words, vouch, dynTail, first) // command -v NAME, taskset -p PID run nothing
		}
		env = append(env, x.env...)
		if x.write != nil {
			r.addWrite(*x.write)
		}
		if x.chdir {
			r.cmd.cd, r.cmd.dirUnknown = true, true
		}
		if x.split != nil {
			r.setUnsafe("the command runs a command line given as a string (" + x.splitBy + ")")
			if x.split.Lit {
				r.nested(x.split.Text)
			}
		}
		if w.unsafe != "" {
			r.setUnsafe("the command uses " + base + ", which " + w.unsafe)
		}
		stripped := w.harmless && !strings.Contains(w0.Text, "/") && known && !x.options
		runs := start >= 1 && start < len(words)
		if !runs && dynTail && x.split == nil {
			r.setUnsafe("the command runs a command read from its input (xargs " + base + ")")
		}
		if stripped && !runs {
			return r.command1(words, vouch, dynTail, first) // nothing to run: env prints the environment
		}
		if !stripped {
			// The wrapper stays a part of its own; the command it runs is another.
			v := vouch
			switch {
			case !known || w.unsafe != "" || dynTail && base != "xargs":
				v = NoVouch
			case x.options:
				raise(&v, x.firstOption+1)
			}
			r.addPart(words, v)
		}
		if !runs {
			return first
		}
		words = words[start:]
		if w.dynTail {
			dynTail = true
		}
		if x.replace != "" {
			words = replaced(words, x.replace)
		}
	}
	return first
}

// replaced returns words with every word containing token (xargs -I's replacement, find
// -exec's {}) made an expansion: the command fills them in from its input.
func replaced(words []Word, token string) []Word {
	out := make([]Word, len(words))
	for i, w := range words {
		if w.Lit && strings.Contains(w.Text, token) {
			w.Lit = false
		}
		out[i] = w
	}
	return out
}

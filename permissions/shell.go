// This file reads a bash command the way bash would before it runs: it parses the command
// with mvdan.cc/sh and turns it into the simple commands that would run (harmless wrappers
// stripped, commands run by other commands added as parts of their own), the files it would
// write, and the constructs no rule can vouch for. match.go matches rules against the result;
// docs/permissions.md ("Rules on bash commands") describes it for users.

package permissions

import (
	"hash/maphash"
	"math"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"mvdan.cc/sh/v3/syntax"
)

// shellWord is one word of a command after quote removal.
type shellWord struct {
	// text is the word without its quotes when lit; otherwise the word as written (so that
	// two identical expansions still compare equal).
	text string
	// lit reports whether the word is known before the command runs: no parameter,
	// command, arithmetic, tilde or brace expansion.
	lit bool
	// glob reports whether the word has an unquoted *, ? or [...], which bash replaces with
	// the names of matching files.
	glob bool
}

// noVouch is a shellPart.vouch that no rule satisfies.
const noVouch = math.MaxInt

// shellPart is one simple command that a bash command line would run.
type shellPart struct {
	// words are the command's words, harmless wrappers and assignments stripped (and, for
	// git, harmless global options); words[0] is the command's name.
	words []shellWord
	// vouch is how many leading words an allow rule must name to allow the part: 0 for a
	// plain command; i+1 when words[i] writes or runs something pid cannot check (an allow
	// rule naming that word vouches for it); noVouch when no rule can.
	vouch int
	// interp reports whether the command is an interpreter of a language (python3, node,
	// perl, awk, ...); inline, whether its code is in its arguments (python3 -c CODE,
	// node -e CODE, awk PROGRAM). A pattern that is an inline part allows exactly its
	// words, and an "always" scope for an interpreter names every word (match.go).
	interp, inline bool
}

// text returns the part as a person reads it: the words, quoted as needed.
func (p *shellPart) text() string {
	var b strings.Builder
	for i, w := range p.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.lit && !w.glob {
			b.WriteString(quoteWord(w.text, i == 0))
		} else {
			b.WriteString(w.text)
		}
	}
	return b.String()
}

// shellCmd is what a command line would do. It never changes once built: parsed commands
// are shared between goroutines through the caches below.
type shellCmd struct {
	parts []shellPart
	// writes are the files the command writes (redirections, tee, sort -o, git --output),
	// as written; /dev/null and the standard streams are left out.
	writes []string
	// unsafe says, for a person, the first construct no rule can vouch for (eval, sh -c,
	// source, a command named by an expansion, a parse error, ...); "" when there is none.
	unsafe string
	// parseErr is set when the command line itself could not be read (a syntax error, a
	// control character, too long).
	parseErr string
	// canon is the command with its quoting normalised, when simple is set: simple commands
	// with literal words and redirections, joined by ;, &, &&, || or |.
	canon  string
	simple bool
	// single reports whether the command is one simple command without redirections;
	// main is then the index of its part in parts (-1 when it has none).
	single bool
	main   int
	// cd reports whether the command changes its working folder (cd, pushd, popd, env -C).
	cd bool
	// dirs are the folders cd and pushd go to, as written, in order; dirUnknown is set when
	// the command changes folder to one pid cannot tell (cd alone, cd -, popd, env -C, an
	// expansion). policy.go checks the git repositories of all of them.
	dirs       []string
	dirUnknown bool
}

// subjects returns the parts rules are tried on: the parts, or one empty part for a command
// that runs nothing (only compound patterns can match it).
func (c *shellCmd) subjects() []shellPart {
	if len(c.parts) == 0 {
		return []shellPart{{}}
	}
	return c.parts
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
	cmd *shellCmd
}

// maxCachedInput is the longest command the cache keeps (32 of them at most).
const maxCachedInput = 64 << 10

// parseShellCached is parseShell with the small cache in front.
func parseShellCached(src string) *shellCmd {
	if len(src) > maxCachedInput {
		return parseShell(src)
	}
	slot := &cmdCache[maphash.String(cmdCacheSeed, src)%uint64(len(cmdCache))]
	if e := slot.Load(); e != nil && e.src == src {
		return e.cmd
	}
	c := parseShell(src)
	slot.Store(&cachedCmd{src: src, cmd: c})
	return c
}

// parseShell reads a command line. It never fails: a command that does not parse, or that
// pid cannot read for another reason, has unsafe set (and the parts read before the error,
// so that deny rules still see them).
func parseShell(src string) (c *shellCmd) {
	c = &shellCmd{main: -1}
	if len(src) > maxShellInput {
		c.unsafe, c.parseErr = "the command is too long to check", "too long"
		return c
	}
	if tooDeep(src) {
		c.unsafe, c.parseErr = "the command nests too deeply to check", "nests too deeply"
		return c
	}
	defer func() {
		if recover() != nil { // the parser is fuzzed, but a panic must never reach a tool call
			c = &shellCmd{main: -1, unsafe: "the command could not be read", parseErr: "internal error"}
		}
	}()
	for i := 0; i < len(src); i++ {
		if b := src[i]; b < 0x20 && b != '\t' && b != '\n' || b == 0x7f {
			c.unsafe, c.parseErr = "the command contains control characters", "control character"
			break
		}
	}
	r := &shellReader{cmd: c, src: src}
	r.run()
	if c.cd && c.unsafe == "" {
		for _, w := range c.writes {
			if !strings.HasPrefix(w, "/") {
				c.unsafe = "the command changes folder, then writes to a relative path (" + w + ")"
				break
			}
		}
	}
	return c
}

// shellReader reads one source (the command line, or a string run by eval or sh -c) into a
// shellCmd.
type shellReader struct {
	cmd   *shellCmd
	src   string
	depth int
	seen  []*syntax.CallExpr // the simple commands read, to find any the walk missed
}

// setUnsafe records the first construct no rule can vouch for.
func (r *shellReader) setUnsafe(why string) {
	if r.cmd.unsafe == "" {
		r.cmd.unsafe = why
	}
}

// run parses r.src and reads its statements. Statements before a parse error are read too.
func (r *shellReader) run() {
	p := parserPool.Get().(*syntax.Parser)
	var stmts []*syntax.Stmt
	var perr error
	// The iterator must run to its end: it yields the final error after the statements.
	for s, err := range p.StmtsSeq(strings.NewReader(r.src)) {
		switch {
		case err != nil:
			if perr == nil {
				perr = err
			}
		case s != nil && perr == nil:
			stmts = append(stmts, s)
		}
	}
	parserPool.Put(p)
	if perr != nil {
		r.setUnsafe("the command does not parse (" + perr.Error() + ")")
		if r.depth == 0 {
			r.cmd.parseErr = perr.Error()
		}
	}
	r.stmts(stmts)
	r.backstop(stmts)
	if r.depth == 0 && perr == nil {
		r.cmd.canon, r.cmd.simple = canonStmts(stmts)
		if len(stmts) == 1 {
			s := stmts[0]
			if ce, ok := s.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 && len(s.Redirs) == 0 && !s.Negated && !s.Background && !s.Coprocess && !s.Disown {
				r.cmd.single = true
			}
		}
	}
}

// backstop finds simple commands the structured walk did not reach (inside constructs it
// does not follow) and adds them, so that deny rules see every command; their presence
// makes the command unsafe.
func (r *shellReader) backstop(stmts []*syntax.Stmt) {
	total := 0
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if _, ok := n.(*syntax.CallExpr); ok {
				total++
			}
			return true
		})
	}
	if total == len(r.seen) {
		return
	}
	seen := make(map[*syntax.CallExpr]bool, len(r.seen))
	for _, ce := range r.seen {
		seen[ce] = true
	}
	var missed []*syntax.CallExpr
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok && !seen[ce] {
				missed = append(missed, ce)
			}
			return true
		})
	}
	if len(missed) == 0 {
		return
	}
	r.setUnsafe("the command runs commands inside a construct pid does not follow")
	for _, ce := range missed {
		r.call(ce, false)
	}
}

func (r *shellReader) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *shellReader) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	for _, rd := range s.Redirs {
		r.redirect(rd)
	}
	r.command(s.Cmd)
}

// command reads one command of any kind.
func (r *shellReader) command(c syntax.Command) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		r.call(c, true)
	case *syntax.BinaryCmd:
		r.stmt(c.X)
		r.stmt(c.Y)
	case *syntax.Subshell:
		r.stmts(c.Stmts)
	case *syntax.Block:
		r.stmts(c.Stmts)
	case *syntax.IfClause:
		for x := c; x != nil; x = x.Else {
			r.stmts(x.Cond)
			r.stmts(x.Then)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond)
		r.stmts(c.Do)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				r.word(w)
			}
		case *syntax.CStyleLoop:
			r.arith(l.Init)
			r.arith(l.Cond)
			r.arith(l.Post)
		}
		r.stmts(c.Do)
	case *syntax.CaseClause:
		r.word(c.Word)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				r.word(p)
			}
			r.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		r.setUnsafe("the command defines a shell function")
		r.stmt(c.Body)
	case *syntax.ArithmCmd:
		r.arith(c.X)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			r.arith(e)
		}
	case *syntax.TestClause:
		r.test(c.X)
	case *syntax.DeclClause:
		r.decl(c)
	case *syntax.TimeClause:
		r.stmt(c.Stmt)
	case *syntax.CoprocClause:
		r.setUnsafe("the command starts a coprocess")
		if c.Name != nil {
			r.word(c.Name)
		}
		r.stmt(c.Stmt)
	default:
		r.setUnsafe("the command uses a construct pid does not read")
	}
}

// isWriteRedirect reports whether a redirection operator opens its target for writing.
func isWriteRedirect(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		return true
	}
	return false
}

// isFD reports whether a duplication target is a file descriptor (2>&1, >&-, >&3-).
func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (r *shellReader) redirect(rd *syntax.Redirect) {
	if rd == nil {
		return
	}
	switch {
	case isWriteRedirect(rd.Op):
		if rd.Word != nil {
			r.addWrite(r.word(rd.Word))
		}
	case rd.Op == syntax.DplOut || rd.Op == syntax.DplIn:
		if rd.Word == nil {
			return
		}
		w := r.word(rd.Word)
		if w.lit && isFD(w.text) {
			return
		}
		if rd.Op == syntax.DplOut { // >&file writes the file
			r.addWrite(w)
		}
	case rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc:
		if rd.Hdoc != nil { // an unquoted body expands $(...)
			r.word(rd.Hdoc)
		}
	default: // reads: harmless, unless pid cannot tell what is read
		if rd.Word == nil {
			return
		}
		w := r.word(rd.Word)
		switch {
		case rd.Op == syntax.WordHdoc: // <<< WORD is text, not a file
		case !w.lit:
			r.setUnsafe("the command reads from a file named by an expansion (" + w.text + ")")
		case networkFile(w.text):
			r.setUnsafe("the command opens a network connection (" + w.text + ")")
		}
	}
}

// networkFile reports whether a redirection target is one of bash's network pseudo-files,
// which connect to a host instead of opening a file.
func networkFile(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// harmlessWrite reports whether writing to a file is harmless: /dev/null and the standard
// streams.
func harmlessWrite(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// addWrite records a file the command writes.
func (r *shellReader) addWrite(w shellWord) {
	switch {
	case !w.lit || w.glob:
		r.setUnsafe("the command writes to a file named by an expansion (" + w.text + ")")
	case w.text == "":
		r.setUnsafe("the command writes to a file with an empty name")
	case harmlessWrite(w.text):
	case networkFile(w.text):
		r.setUnsafe("the command opens a network connection (" + w.text + ")")
	default:
		r.cmd.writes = append(r.cmd.writes, w.text)
	}
}

// word reads a word: quote removal, and the commands its substitutions run.
func (r *shellReader) word(w *syntax.Word) shellWord {
	out := literal(w)
	if out.lit {
		return out
	}
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					r.expansion(q)
				}
			}
		default:
			r.expansion(part)
		}
	}
	out.text = r.source(w)
	return out
}

// literal returns a word after quote removal: its text (when lit), whether it is literal,
// and whether it has a glob. It has no side effect: expansions are read by word.
func literal(w *syntax.Word) shellWord {
	if w == nil || len(w.Parts) == 0 {
		return shellWord{lit: true}
	}
	if len(w.Parts) == 1 { // the usual case: one plain literal
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[{~") {
			return shellWord{text: l.Value, lit: true}
		}
	}
	var b strings.Builder
	out := shellWord{lit: true}
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				out.lit = false // tilde expansion
			}
			if unquoteLit(&b, x.Value) {
				out.glob = true
			}
			if strings.ContainsRune(x.Value, '{') && bracesExpand(w) {
				out.lit = false
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				b.WriteString(ansiC(x.Value))
			} else {
				b.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					unquoteDouble(&b, l.Value)
				} else {
					out.lit = false
				}
			}
		case *syntax.ExtGlob:
			out.lit, out.glob = false, true
		default:
			out.lit = false
		}
	}
	if out.lit {
		out.text = b.String()
	}
	return out
}

// source returns a node as written.
func (r *shellReader) source(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(r.src) || s > e {
		return "?"
	}
	return r.src[s:e]
}

// bracesExpand reports whether a word has a brace expansion ({a,b} or {1..3}).
func bracesExpand(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	return syntax.SplitBraces(cp)
}

// expansion reads a part of a word that expands: the commands it runs, and the expansions
// that can run commands hidden in a variable's value.
func (r *shellReader) expansion(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.CmdSubst:
		r.stmts(x.Stmts)
	case *syntax.ProcSubst:
		r.stmts(x.Stmts)
	case *syntax.ArithmExp:
		r.arith(x.X)
	case *syntax.ParamExp:
		if x.Excl && x.Names == 0 {
			r.setUnsafe("the command uses an indirect expansion (${!name})")
		}
		if x.Exp != nil {
			if x.Exp.Op == syntax.OtherParamOps {
				r.setUnsafe("the command uses a ${name@op} expansion")
			}
			r.word(x.Exp.Word)
		}
		if x.Repl != nil {
			r.word(x.Repl.Orig)
			r.word(x.Repl.With)
		}
		if x.Index != nil {
			if w, ok := x.Index.(*syntax.Word); !ok || !(w.Lit() == "@" || w.Lit() == "*" || isNumber(w.Lit())) {
				r.arith(x.Index)
			}
		}
		if x.Slice != nil {
			r.arith(x.Slice.Offset)
			r.arith(x.Slice.Length)
		}
		if x.NestedParam != nil {
			r.expansion(x.NestedParam)
		}
	}
}

// arith reads an arithmetic expression. Bash evaluates variables in arithmetic recursively,
// and an array subscript in a variable's value runs $(...): only numbers are safe.
func (r *shellReader) arith(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			if sw := r.word(w); !sw.lit || !isNumber(sw.text) {
				r.setUnsafe("the command computes arithmetic on variables or commands")
			}
			return false
		}
		return true
	})
}

// isNumber reports whether s is an integer literal of bash arithmetic (42, 0x2a, 2#101).
func isNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '_' || c == '@') {
			return false
		}
	}
	return true
}

// test reads a [[ ]] expression: its arithmetic comparisons evaluate their operands.
func (r *shellReader) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		r.word(x)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, y := range []syntax.TestExpr{x.X, x.Y} {
				w, ok := y.(*syntax.Word)
				if !ok {
					r.test(y)
					r.setUnsafe("the command computes arithmetic on variables or commands")
					continue
				}
				if sw := r.word(w); !sw.lit || !isNumber(strings.TrimPrefix(sw.text, "-")) {
					r.setUnsafe("the command computes arithmetic on variables or commands")
				}
			}
		default:
			r.test(x.X)
			r.test(x.Y)
		}
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) {
			if sw := r.word(w); !sw.lit || strings.ContainsRune(sw.text, '[') {
				r.setUnsafe("the command tests a variable with a subscript bash evaluates")
			}
			return
		}
		r.test(x.X)
	case *syntax.ParenTest:
		r.test(x.X)
	}
}

// decl reads declare, export, local, readonly, typeset and nameref: a part of its own, and
// the variables it sets.
func (r *shellReader) decl(d *syntax.DeclClause) {
	if d.Variant == nil {
		return
	}
	words := []shellWord{{text: d.Variant.Value, lit: true}}
	for _, a := range d.Args {
		if a == nil {
			continue
		}
		name := r.assign(a)
		switch {
		case a.Naked && a.Name != nil:
			words = append(words, shellWord{text: a.Name.Value, lit: true})
		case a.Naked:
			w := r.word(a.Value)
			if w.lit && subscriptTrick(w.text) {
				r.setUnsafe("the command names a variable with a subscript bash evaluates")
			}
			words = append(words, w)
		default:
			if name != "" && !harmlessVar(name) {
				r.setUnsafe("the command sets " + name + ", which can change what later commands run")
			}
			v := literal(a.Value) // assign read its expansions
			if a.Index != nil || a.Array != nil || a.Append || !v.lit {
				words = append(words, shellWord{text: r.source(a)})
			} else {
				words = append(words, shellWord{text: name + "=" + v.text, lit: true})
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
	words := make([]shellWord, 0, len(ce.Args))
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
	if r.depth == 0 && structured && r.seen[0] == ce && first < len(r.cmd.parts) {
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
func (r *shellReader) addPart(words []shellWord, vouch int) int {
	r.cmd.parts = append(r.cmd.parts, shellPart{words: words, vouch: vouch})
	return len(r.cmd.parts) - 1
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
func (r *shellReader) simple(words []shellWord, env []string, dynTail bool) int {
	first := len(r.cmd.parts)
	for len(words) > 0 {
		w0 := words[0]
		if !w0.lit || w0.glob {
			r.setUnsafe("the command runs a command named by an expansion (" + w0.text + ")")
			r.addPart(words, noVouch)
			return first
		}
		if !plainName(w0.text) {
			r.setUnsafe("the command name " + quoteWord(w0.text, true) + " is not plain ASCII")
			r.addPart(words, noVouch)
			return first
		}
		base := path.Base(w0.text)
		vouch := 0
		for _, n := range env {
			if !harmlessVar(n) {
				vouch = noVouch
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
			if x.split.lit {
				r.nested(x.split.text)
			}
		}
		if w.unsafe != "" {
			r.setUnsafe("the command uses " + base + ", which " + w.unsafe)
		}
		stripped := w.harmless && !strings.Contains(w0.text, "/") && known && !x.options
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
				v = noVouch
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
func replaced(words []shellWord, token string) []shellWord {
	out := make([]shellWord, len(words))
	for i, w := range words {
		if w.lit && strings.Contains(w.text, token) {
			w.lit = false
		}
		out[i] = w
	}
	return out
}

// wrapExtra is what scanning a wrapper's options found.
type wrapExtra struct {
	env         []string   // NAME=VALUE assignments (env, sudo)
	options     bool       // env has options (then it stays a part of its own)
	firstOption int        // index of env's first option
	lookup      bool       // command -v / -V, taskset -p: a look-up (or a change) of something else, not a run
	write       *shellWord // a file the wrapper writes (time -o)
	chdir       bool       // env -C
	split       *shellWord // env -S STRING, flock -c STRING: a command line the wrapper runs
	splitBy     string     // "env -S" or "flock -c", for messages
	replace     string     // xargs -I STRING, -i, --replace
}

// wrapper describes a command that runs the command given in its arguments.
type wrapper struct {
	harmless   bool   // stripped before matching (timeout, nice, ...): rules see the command only
	unsafe     string // why no rule can allow it ("" when a rule can)
	dynTail    bool   // it appends arguments pid cannot see (xargs)
	opts       optSpec
	positional int  // operands before the command (timeout's duration)
	assigns    bool // NAME=VALUE words may come before the command (env, sudo)
}

// optSpec describes a command's options for scanning.
type optSpec struct {
	flags    string   // short options without a value
	values   string   // short options with a value, attached or in the next word
	attached string   // short options whose optional value can only be attached (-i.bak)
	long     []string // long options without a value (a value may still be attached with =)
	longVals []string // long options with a value (=VALUE or the next word)
	digits   bool     // -NUMBER is an option (nice -10)
}

// wrappers are the commands that run a command given in their arguments. Harmless ones
// are stripped before rules are matched (timeout 5 npm test is npm test); the others stay a
// part of their own, and the command they run is another part (sudo rm: both "sudo rm" and
// "rm" must be allowed, and a deny rule on rm sees it).
var wrappers = map[string]*wrapper{
	"timeout": {harmless: true, positional: 1, opts: optSpec{flags: "v", values: "ks",
		long: []string{"--preserve-status", "--foreground", "--verbose"}, longVals: []string{"--kill-after", "--signal"}}},
	"nice":    {harmless: true, opts: optSpec{values: "n", longVals: []string{"--adjustment"}, digits: true}},
	"nohup":   {harmless: true},
	"stdbuf":  {harmless: true, opts: optSpec{values: "ioe", longVals: []string{"--input", "--output", "--error"}}},
	"command": {harmless: true, opts: optSpec{flags: "pvV"}},
	"builtin": {harmless: true},
	"time": {harmless: true, opts: optSpec{flags: "pvaq", values: "fo",
		long: []string{"--portability", "--verbose", "--append", "--quiet"}, longVals: []string{"--format", "--output"}}},
	"env": {harmless: true, assigns: true, opts: optSpec{flags: "i0v", values: "uCS",
		long: []string{"--ignore-environment", "--null", "--debug"}, longVals: []string{"--unset", "--chdir", "--split-string"}}},
	"sudo": {assigns: true, opts: optSpec{flags: "AbEeHhiKklnPSsVv", values: "ugCDprtTUR",
		long: []string{"--askpass", "--background", "--preserve-env", "--edit", "--set-home", "--help", "--login",
			"--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin",
			"--shell", "--validate", "--version", "--bell"},
		longVals: []string{"--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type",
			"--command-timeout", "--other-user", "--chroot", "--host"}}},
	"doas": {opts: optSpec{flags: "nsL", values: "uC"}},
	"xargs": {dynTail: true, opts: optSpec{flags: "0prtx", values: "aEdILnPs", attached: "eil",
		long: []string{"--null", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--open-tty",
			"--show-limits", "--replace", "--eof", "--max-lines"},
		longVals: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}},
	"exec":     {unsafe: "replaces the shell", opts: optSpec{flags: "cl", values: "a"}},
	"setsid":   {opts: optSpec{flags: "cfw", long: []string{"--ctty", "--fork", "--wait"}}},
	"ionice":   {opts: optSpec{flags: "t", values: "cnpPu", long: []string{"--ignore"}, longVals: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}},
	"chroot":   {positional: 1, opts: optSpec{long: []string{"--skip-chdir"}, longVals: []string{"--userspec", "--groups"}}},
	"unbuffer": {opts: optSpec{flags: "p"}},
	// taskset [-acp] MASK COMMAND...: with -p it changes a running process and runs nothing.
	"taskset": {harmless: true, positional: 1, opts: optSpec{flags: "acpVh",
		long: []string{"--all-tasks", "--pid", "--cpu-list", "--help", "--version"}}},
	// flock [options] FILE COMMAND... or FILE -c STRING (STRING through sh -c); FILE is
	// created when missing: a write. flock NUMBER locks a descriptor and runs nothing.
	"flock": {harmless: true, positional: 1, opts: optSpec{flags: "sxenuoFhV", values: "wEc",
		long:     []string{"--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork", "--verbose", "--help", "--version"},
		longVals: []string{"--timeout", "--wait", "--conflict-exit-code", "--command"}}},
}

// scan reads a wrapper's options and returns the index of the command it runs (len(words)
// when none), whether every option was known, and what else it found.
func (w *wrapper) scan(words []shellWord) (start int, known bool, x wrapExtra) {
	base := path.Base(words[0].text)
	i, known := scanOptions(words, 1, &w.opts, func(opt string, at int, val *shellWord) {
		switch base {
		case "command":
			x.lookup = x.lookup || opt == "-v" || opt == "-V"
		case "time":
			if (opt == "-o" || opt == "--output") && val != nil {
				x.write = val
			}
		case "xargs":
			switch {
			case (opt == "-I" || opt == "-i" || opt == "--replace") && val != nil:
				x.replace = val.text
			case opt == "-i" || opt == "--replace":
				x.replace = "{}"
			}
		case "taskset":
			x.lookup = x.lookup || opt == "-p" || opt == "--pid"
		case "flock":
			if (opt == "-c" || opt == "--command") && val != nil {
				x.split, x.splitBy = val, "flock -c"
			}
		case "env":
			if !x.options {
				x.options, x.firstOption = true, at
			}
			switch {
			case (opt == "-C" || opt == "--chdir") && val != nil:
				x.chdir = true
			case (opt == "-S" || opt == "--split-string") && val != nil:
				x.split, x.splitBy = val, "env -S"
			}
		}
	})
	if !known {
		// Best effort for deny rules: the command is the first word after the options.
		for i < len(words) && words[i].lit && strings.HasPrefix(words[i].text, "-") {
			i++
		}
	}
	operand := i
	for n := 0; n < w.positional && i < len(words); n++ {
		i++
	}
	if base == "flock" && operand < len(words) {
		if i+1 < len(words) && words[i].lit && (words[i].text == "-c" || words[i].text == "--command") {
			x.split, x.splitBy = &words[i+1], "flock -c"
		}
		if i < len(words) || x.split != nil {
			x.write = &words[operand] // FILE, created when missing (not a descriptor number)
		}
	}
	if w.assigns {
		for i < len(words) {
			name, ok := assignmentName(words[i])
			if !ok {
				break
			}
			x.env = append(x.env, name)
			i++
		}
	}
	if x.split != nil {
		return len(words), known, x // the string is the command
	}
	return i, known, x
}

// assignmentName returns NAME of a NAME=VALUE word.
func assignmentName(w shellWord) (string, bool) {
	if !w.lit {
		return "", false
	}
	name, _, ok := strings.Cut(w.text, "=")
	if !ok || name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return name, true
}

// scanOptions reads the options of words from index i and returns the index of the first
// operand, and whether every option was known and readable (when not, the index is that of
// the option it could not read). visit sees each option (as "-x" or "--long") with the
// index of its word and its value (nil when it has none).
func scanOptions(words []shellWord, i int, spec *optSpec, visit func(opt string, at int, val *shellWord)) (int, bool) {
	for i < len(words) {
		w := words[i]
		if !w.lit {
			return i, false
		}
		switch t := w.text; {
		case t == "--":
			return i + 1, true
		case t == "-" || !strings.HasPrefix(t, "-"):
			return i, true
		}
		next, ok := scanOption(words, i, spec, visit)
		if !ok {
			return i, false
		}
		i = next
	}
	return i, true
}

// scanOption reads the one option word words[i] (a cluster of short options, or a long
// option) and its value, and returns the index after them; ok is false for an option spec
// does not know or a value that is missing.
func scanOption(words []shellWord, i int, spec *optSpec, visit func(opt string, at int, val *shellWord)) (int, bool) {
	t := words[i].text
	if strings.HasPrefix(t, "--") {
		name, val, hasVal := strings.Cut(t, "=")
		switch {
		case hasVal && (contains(spec.long, name) || contains(spec.longVals, name)):
			visit(name, i, &shellWord{text: val, lit: true})
		case contains(spec.long, name):
			visit(name, i, nil)
		case contains(spec.longVals, name) && i+1 < len(words):
			visit(name, i, &words[i+1])
			return i + 2, true
		default:
			return i, false
		}
		return i + 1, true
	}
	if spec.digits && isNumber(t[1:]) {
		visit(t, i, nil)
		return i + 1, true
	}
	for k := 1; k < len(t); k++ {
		c := t[k]
		opt := "-" + string(c)
		switch {
		case strings.IndexByte(spec.flags, c) >= 0:
			visit(opt, i, nil)
		case strings.IndexByte(spec.attached, c) >= 0:
			if rest := t[k+1:]; rest != "" {
				visit(opt, i, &shellWord{text: rest, lit: true})
			} else {
				visit(opt, i, nil)
			}
			return i + 1, true
		case strings.IndexByte(spec.values, c) >= 0:
			if rest := t[k+1:]; rest != "" {
				visit(opt, i, &shellWord{text: rest, lit: true})
				return i + 1, true
			}
			if i+1 >= len(words) {
				return i, false
			}
			visit(opt, i, &words[i+1])
			return i + 2, true
		default:
			return i, false
		}
	}
	return i + 1, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// command1 adds the part of a command that is not a wrapper (after the wrappers in front of
// it), reading the options pid knows for it, and returns first.
func (r *shellReader) command1(words []shellWord, vouch int, dynTail bool, first int) int {
	base := path.Base(words[0].text)
	if why, ok := opaque[base]; ok {
		r.setUnsafe("the command uses " + base + ", which " + why)
		if base == "trap" && len(words) > 2 && words[1].lit {
			r.nested(words[1].text)
		}
		r.addPart(words, noVouch)
		return first
	}
	switch {
	case shells[base]:
		r.setUnsafe("the command runs " + base + ", which runs commands pid does not see")
		r.addPart(words, noVouch)
		if script, ok := shellScript(words); ok {
			r.nested(script)
		}
		return first
	case base == "eval" || base == "watch":
		// Both join their arguments into a command line for the shell.
		how := "eval, which runs a string as a command"
		args := words[1:]
		if base == "watch" {
			how = "watch, which runs its arguments through sh -c"
			spec := optSpec{flags: "bcdeghtpwrx", values: "nq", long: []string{"--beep", "--color", "--no-color",
				"--differences", "--errexit", "--chgexit", "--no-title", "--precise", "--no-wrap", "--exec", "--no-rerun"},
				longVals: []string{"--interval", "--equexit"}}
			i, _ := scanOptions(words, 1, &spec, func(string, int, *shellWord) {})
			args = words[i:]
		}
		r.setUnsafe("the command uses " + how)
		r.addPart(words, noVouch)
		var b strings.Builder
		for i, w := range args {
			if !w.lit {
				return first
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.text)
		}
		r.nested(b.String())
		return first
	}
	idx := r.addPart(words, vouch)
	if in, ok := interpreterOf(base); ok {
		r.cmd.parts[idx].interp = true
		r.cmd.parts[idx].inline = in.inlineCode(words)
	}
	table := knownCommand(base)
	if table && dynTail {
		vouch = noVouch // xargs adds arguments that could be options
	}
	switch base {
	case "git":
		var out []shellWord
		out, vouch = r.git(words, vouch)
		r.cmd.parts[idx].words = out
	case "find":
		vouch = r.find(words, vouch)
	case "sed":
		vouch = r.sed(words, vouch)
	case "sort":
		vouch = r.sort(words, vouch)
	case "tee":
		vouch = r.tee(words, vouch)
	case "cd", "pushd", "popd":
		r.cmd.cd = true
		r.chdir(base, words)
	case "printf", "read", "mapfile", "readarray", "unset", "test", "[", "getopts", "wait", "let":
		for _, w := range words[1:] {
			if w.lit && subscriptTrick(w.text) {
				r.setUnsafe("the command names a variable with a subscript bash evaluates")
			}
			if (base == "mapfile" || base == "readarray") && w.lit && strings.HasPrefix(w.text, "-") && strings.ContainsRune(w.text, 'C') {
				r.setUnsafe("the command uses " + base + " -C, which runs a callback")
			}
		}
	}
	r.cmd.parts[idx].vouch = vouch
	return first
}

// interpreter says where an interpreter takes code in its arguments.
type interpreter struct {
	short   string   // one-letter options whose value is code (-c, -e), also in a cluster (-ne)
	long    []string // long options whose value is code (--eval)
	sub     string   // a subcommand whose argument is code (deno eval)
	program bool     // the first operand is the program, unless a file option gives it (awk)
	anyCase bool     // options start with -c or -e in any case, abbreviated (pwsh -Command)
}

// interpreters are the languages whose code can be given on the command line, by name
// without a version (python3.12 is python, perl5.36 perl, Rscript rscript).
var interpreters = map[string]interpreter{
	"python": {short: "c"}, "pypy": {short: "c"},
	"node": {short: "ep", long: []string{"--eval", "--print"}}, "nodejs": {short: "ep", long: []string{"--eval", "--print"}},
	"bun":  {short: "ep", long: []string{"--eval", "--print"}},
	"deno": {sub: "eval"},
	"perl": {short: "eE"}, "ruby": {short: "e"}, "php": {short: "rBRE"},
	"lua": {short: "e"}, "luajit": {short: "e"}, "julia": {short: "eE", long: []string{"--eval", "--print"}},
	"rscript": {short: "e"}, "r": {short: "e"}, "osascript": {short: "e"}, "expect": {short: "c"},
	"pwsh": {anyCase: true}, "powershell": {anyCase: true},
	"awk": {program: true, long: []string{"--source"}}, "gawk": {program: true, long: []string{"--source"}},
	"mawk": {program: true}, "nawk": {program: true},
}

// interpreterOf returns the interpreter a command name runs: lower case, without a
// trailing version (digits, dots and dashes).
func interpreterOf(base string) (interpreter, bool) {
	name := strings.TrimRight(strings.ToLower(base), "0123456789.-")
	in, ok := interpreters[name]
	return in, ok
}

// inlineCode reports whether words (an interpreter's command) give code in an argument.
// It errs towards yes: an option letter found anywhere counts, even after a script's name
// (where it is the script's), since yes only makes what an "always" answer covers
// narrower.
func (in interpreter) inlineCode(words []shellWord) bool {
	if in.sub != "" {
		return len(words) > 2 && words[1].lit && words[1].text == in.sub
	}
	operands := 0
	for j := 1; j < len(words); j++ {
		w := words[j]
		hasNext := j+1 < len(words)
		if !w.lit {
			operands++
			continue
		}
		t := w.text
		switch {
		case in.anyCase && len(t) > 1 && t[0] == '-' && strings.ContainsRune("ceCE", rune(t[1])):
			return hasNext
		case strings.HasPrefix(t, "--"):
			name, _, eq := strings.Cut(t, "=")
			if contains(in.long, name) && (eq || hasNext) {
				return true
			}
			if in.program && (name == "--file" || name == "--exec") {
				return false
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for k := 1; k < len(t); k++ {
				if strings.IndexByte(in.short, t[k]) >= 0 {
					if k+1 < len(t) || hasNext {
						return true
					}
				}
			}
			if in.program && (t[1] == 'f' || t == "-E") { // awk -f FILE, gawk -E FILE
				return false
			}
		default:
			operands++
		}
	}
	return in.program && operands > 0
}

// chdir records the folder a cd or pushd goes to (see shellCmd.dirs).
func (r *shellReader) chdir(base string, words []shellWord) {
	if base == "popd" {
		r.cmd.dirUnknown = true
		return
	}
	for _, w := range words[1:] {
		switch {
		case !w.lit || w.glob:
			r.cmd.dirUnknown = true
			return
		case w.text == "--":
			continue
		case strings.HasPrefix(w.text, "-") && w.text != "-" || base == "pushd" && strings.HasPrefix(w.text, "+"):
			if base == "pushd" && w.text != "-n" {
				r.cmd.dirUnknown = true // pushd -N / +N rotate the stack
				return
			}
			continue
		case w.text == "-":
			r.cmd.dirUnknown = true
			return
		}
		r.cmd.dirs = append(r.cmd.dirs, w.text)
		return
	}
	r.cmd.dirUnknown = true // cd alone goes home
}

// shellScript returns the script of `sh -c SCRIPT` (any option cluster with c).
func shellScript(words []shellWord) (string, bool) {
	c := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !w.lit {
			return "", false
		}
		t := w.text
		switch {
		case t == "--":
			if c && i+1 < len(words) && words[i+1].lit {
				return words[i+1].text, true
			}
			return "", false
		case t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file":
			i++
		case strings.HasPrefix(t, "--"):
		case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
			if t[0] == '-' && strings.ContainsRune(t, 'c') {
				c = true
			}
		default:
			return t, c
		}
	}
	return "", false
}

// nested reads a string that the command runs as a command line (eval, sh -c, env -S,
// trap): its parts join the command's, so that deny rules see them.
func (r *shellReader) nested(src string) {
	if r.depth+1 >= maxShellDepth {
		return
	}
	sub := &shellReader{cmd: r.cmd, src: src, depth: r.depth + 1}
	sub.run()
}

// risk is what a known option does.
type risk int

const (
	// riskWrite: the option's value is a file the command writes; it is decided as a write
	// call on that path.
	riskWrite risk = iota
	// riskAsk: the option writes or runs something pid cannot check; an allow rule must name
	// the option itself (a rule "sed" does not allow "sed -i", a rule "sed -i" does).
	riskAsk
	// riskRun: the option asks as riskAsk does, and the words after it are a command of its
	// own: deny rules see it.
	riskRun
)

// optionRisk is one row of commandOptions.
type optionRisk struct {
	Command string // the command's name
	Sub     string // for git: "global" (before the subcommand), a subcommand, or "" for any
	Option  string // the option, without its value
	Risk    risk
	What    string // what the option does, for a person
}

// commandOptions lists the options pid knows write files or run other commands, for the
// commands the defaults and docs name (docs/permissions.md shows the same list). An allow
// rule on such a command does not allow these options unless it names them. Besides these:
// an expansion or glob in the arguments of git, find, sed, sort or tee asks (it could turn
// into any option), tee's file operands are writes, and the commands that xargs, env,
// sudo, doas, nice, timeout, ... run are parts of their own.
var commandOptions = []optionRisk{
	{"git", "global", "-c", riskAsk, "sets configuration, which can name programs git runs (core.pager, core.fsmonitor, ...)"},
	{"git", "global", "--config-env", riskAsk, "sets configuration from the environment"},
	{"git", "global", "--exec-path", riskAsk, "changes where git finds its programs"},
	{"git", "global", "-C", riskAsk, "works in another repository, whose configuration can run programs"},
	{"git", "global", "--git-dir", riskAsk, "works in another repository"},
	{"git", "global", "--work-tree", riskAsk, "works in another repository"},
	{"git", "global", "--namespace", riskAsk, "works in another namespace"},
	{"git", "global", "--bare", riskAsk, "treats the folder as a bare repository"},
	{"git", "global", "--super-prefix", riskAsk, "internal option"},
	{"git", "", "--output", riskWrite, "writes the output to a file"},
	{"git", "", "--ext-diff", riskAsk, "runs an external diff program"},
	{"git", "", "--exec", riskAsk, "runs a command"},
	{"git", "", "--upload-pack", riskAsk, "runs a command"},
	{"git", "", "--receive-pack", riskAsk, "runs a command"},
	{"git", "", "--extcmd", riskAsk, "runs a command (difftool)"},
	{"git", "", "--open-files-in-pager", riskAsk, "runs a pager or command (grep)"},
	{"git", "", "--template", riskAsk, "copies hooks from a template folder"},
	{"git", "", "--config", riskAsk, "sets configuration (clone)"},
	{"git", "", "--output-directory", riskAsk, "writes files to a folder (format-patch)"},
	{"git", "rebase", "-x", riskAsk, "runs a command after each commit"},
	{"git", "grep", "-O", riskAsk, "runs a pager or command"},
	{"git", "clone", "-c", riskAsk, "sets configuration"},
	{"git", "clone", "-u", riskAsk, "runs a command as upload-pack"},
	{"git", "format-patch", "-o", riskAsk, "writes files to a folder"},
	{"find", "", "-exec", riskRun, "runs a command for each file"},
	{"find", "", "-execdir", riskRun, "runs a command for each file"},
	{"find", "", "-ok", riskRun, "runs a command for each file"},
	{"find", "", "-okdir", riskRun, "runs a command for each file"},
	{"find", "", "-delete", riskAsk, "deletes the files found"},
	{"find", "", "-fprint", riskAsk, "writes to a file"},
	{"find", "", "-fprint0", riskAsk, "writes to a file"},
	{"find", "", "-fprintf", riskAsk, "writes to a file"},
	{"find", "", "-fls", riskAsk, "writes to a file"},
	{"sed", "", "-i", riskAsk, "edits files in place"},
	{"sed", "", "-I", riskAsk, "edits files in place"},
	{"sed", "", "--in-place", riskAsk, "edits files in place"},
	{"sed", "", "-f", riskAsk, "reads a script pid does not see (unless --sandbox)"},
	{"sed", "", "--file", riskAsk, "reads a script pid does not see (unless --sandbox)"},
	{"sed", "", "w/W/e in the script", riskAsk, "the script writes files or runs commands (w, W, e, s///w, s///e; unless --sandbox)"},
	{"sort", "", "-o", riskWrite, "writes the output to a file"},
	{"sort", "", "--output", riskWrite, "writes the output to a file"},
	{"sort", "", "--compress-program", riskAsk, "runs a program"},
	{"tee", "", "FILE", riskWrite, "writes each file operand"},
	{"time", "", "-o", riskWrite, "writes the timing to a file"},
	{"xargs", "", "COMMAND", riskRun, "runs its command with arguments read from its input; the command is a part of its own, and for git, find, sed, sort and tee it asks"},
	{"env", "", "COMMAND", riskRun, "runs its command: env NAME=VALUE... is stripped, env with options stays a part of its own"},
	{"env", "", "-S", riskAsk, "runs a command line given as a string"},
	{"env", "", "-C", riskAsk, "changes folder before running the command"},
}

// optionIndex maps "command sub option" to a row of commandOptions.
var optionIndex = func() map[string]optionRisk {
	m := make(map[string]optionRisk, len(commandOptions))
	for _, o := range commandOptions {
		m[o.Command+" "+o.Sub+" "+o.Option] = o
	}
	return m
}()

// knownCommand reports whether pid reads a command's options (an expansion among its
// arguments then asks).
func knownCommand(base string) bool {
	switch base {
	case "git", "find", "sed", "sort", "tee":
		return true
	}
	return false
}

// optionOf returns the row of an option of a command (sub "" for any subcommand).
func optionOf(command, sub, option string) (optionRisk, bool) {
	if sub != "" {
		if o, ok := optionIndex[command+" "+sub+" "+option]; ok {
			return o, true
		}
		if sub == "global" {
			return optionRisk{}, false
		}
	}
	o, ok := optionIndex[command+"  "+option]
	return o, ok
}

// gitHarmlessGlobal are git's global options that change nothing about what git runs;
// they are dropped from a git command's words, so that "git --no-pager push" is "git push"
// for rules.
var gitHarmlessGlobal = map[string]bool{
	"--no-pager": true, "-P": true, "-p": true, "--paginate": true, "--no-optional-locks": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-replace-objects": true, "--no-lazy-fetch": true, "--no-advice": true,
}

// gitGlobalValue are git's global options that take a value in the next word.
var gitGlobalValue = map[string]bool{
	"-c": true, "-C": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--config-env": true, "--super-prefix": true, "--attr-source": true, "--list-cmds": true,
}

// git reads a git command: global options (harmless ones dropped, the others ask), then
// the subcommand's options. It returns the words for rules and the vouch.
func (r *shellReader) git(words []shellWord, vouch int) ([]shellWord, int) {
	out := []shellWord{words[0]}
	i := 1
	for ; i < len(words); i++ {
		w := words[i]
		if !w.lit || w.glob {
			vouch = noVouch
			break
		}
		t := w.text
		if !strings.HasPrefix(t, "-") || gitInfo[t] {
			break // the subcommand, or --version and the like, which stand for one
		}
		if gitHarmlessGlobal[t] {
			continue
		}
		// Every other global option changes where git reads its configuration or its
		// programs (commandOptions), or is one pid does not know: no rule allows it.
		vouch = noVouch
		if t == "-c" && i+1 < len(words) {
			r.gitConfigValue(words[i+1])
		}
		if name, _, hasEq := strings.Cut(t, "="); gitGlobalValue[name] && !hasEq {
			i++
		}
	}
	out = append(out, words[min(i, len(words)):]...)
	if len(out) < 2 {
		return out, vouch
	}
	sub := ""
	if out[1].lit && !out[1].glob {
		sub = out[1].text
	} else {
		vouch = noVouch
	}
	for j := 2; j < len(out); j++ {
		w := out[j]
		if !w.lit || w.glob {
			raise(&vouch, j+1)
			continue
		}
		t := w.text
		if t == "--" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		name, val, hasEq := strings.Cut(t, "=")
		o, ok := optionOf("git", sub, name)
		if !ok && !strings.HasPrefix(t, "--") && len(t) > 2 {
			o, ok = optionOf("git", sub, t[:2]) // -Ocmd, -xcmd
		}
		if !ok {
			continue
		}
		if o.Risk != riskWrite {
			raise(&vouch, j+1)
			continue
		}
		if hasEq {
			r.addWrite(shellWord{text: val, lit: true})
		} else if j+1 < len(out) {
			r.addWrite(out[j+1])
			j++
		}
	}
	r.gitRuns(sub, out, &vouch)
	return out, vouch
}

// gitRuns reads the git subcommands that run a command given in their arguments: git
// submodule foreach CMD (through the shell, like sh -c: never allowed, deny rules see it)
// and git bisect run CMD ARGS (a part of its own, like find -exec).
func (r *shellReader) gitRuns(sub string, out []shellWord, vouch *int) {
	switch {
	case sub == "submodule":
		for k := 2; k < len(out); k++ {
			if out[k].lit && out[k].text == "foreach" {
				r.setUnsafe("the command uses git submodule foreach, which runs a command line through the shell")
				*vouch = noVouch
				var b strings.Builder
				for _, w := range out[k+1:] {
					if !w.lit {
						return
					}
					if strings.HasPrefix(w.text, "-") && b.Len() == 0 {
						continue // --recursive, --quiet
					}
					if b.Len() > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(w.text)
				}
				r.nested(b.String())
				return
			}
		}
	case sub == "bisect" && len(out) > 3 && out[2].lit && out[2].text == "run":
		raise(vouch, 3)
		r.simple(out[3:], nil, false)
	}
}

// gitConfigValue reads the value of git's -c NAME=VALUE as a command line, so that deny
// rules see what it may run: many settings name a program git runs through the shell
// (core.fsmonitor, core.pager, core.sshCommand, diff.*.textconv, filter.*.clean, an alias
// "!cmd", ...), and pid does not try to tell them from the others. A leading "!" (an alias
// that runs a shell command) is dropped.
func (r *shellReader) gitConfigValue(w shellWord) {
	if !w.lit {
		return
	}
	_, v, ok := strings.Cut(w.text, "=")
	v = strings.TrimPrefix(strings.TrimLeft(v, " \t"), "!")
	if ok && strings.TrimSpace(v) != "" {
		r.nested(v)
	}
}

// gitInfo are git's options that print something and stand in place of a subcommand.
var gitInfo = map[string]bool{
	"--version": true, "-v": true, "--help": true, "-h": true, "--html-path": true,
	"--man-path": true, "--info-path": true,
}

// find reads a find command: -exec and friends run a command (a part of its own), -delete
// and -fprint* write.
func (r *shellReader) find(words []shellWord, vouch int) int {
	for j := 1; j < len(words); j++ {
		w := words[j]
		if !w.lit || w.glob {
			raise(&vouch, j+1)
			continue
		}
		o, ok := optionOf("find", "", w.text)
		if !ok {
			continue
		}
		raise(&vouch, j+1)
		if o.Risk == riskRun {
			end := j + 1
			for end < len(words) && !(words[end].lit && (words[end].text == ";" || words[end].text == "+")) {
				end++
			}
			if end > j+1 {
				r.simple(replaced(words[j+1:end], "{}"), nil, false)
			}
			j = end
		}
	}
	return vouch
}

// sed reads a sed command: in-place editing, script files, and scripts that write or run.
func (r *shellReader) sed(words []shellWord, vouch int) int {
	sandbox := false
	for _, w := range words[1:] {
		if w.lit && w.text == "--sandbox" {
			sandbox = true
		}
	}
	scripted := false
	script := func(w shellWord, at int) {
		scripted = true
		if !w.lit || (!sandbox && sedScriptRisky(w.text)) {
			raise(&vouch, at+1)
		}
	}
	for j := 1; j < len(words); j++ {
		w := words[j]
		if !w.lit || w.glob {
			raise(&vouch, j+1)
			continue
		}
		t := w.text
		switch {
		case t == "--":
			if !scripted && j+1 < len(words) {
				script(words[j+1], j+1)
			}
			for k := j + 1; k < len(words); k++ {
				if !words[k].lit || words[k].glob {
					raise(&vouch, k+1)
				}
			}
			return vouch
		case strings.HasPrefix(t, "--"):
			name, val, hasEq := strings.Cut(t, "=")
			switch name {
			case "--expression":
				if hasEq {
					script(shellWord{text: val, lit: true}, j)
				} else if j+1 < len(words) {
					script(words[j+1], j+1)
					j++
				}
			case "--file":
				scripted = true
				if !sandbox {
					raise(&vouch, j+1)
				}
				if !hasEq {
					j++
				}
			case "--line-length":
				if !hasEq {
					j++
				}
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data",
				"--zero-terminated", "--posix", "--debug", "--sandbox", "--follow-symlinks", "--binary":
			default: // --in-place and options pid does not know
				raise(&vouch, j+1)
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			at := j
		cluster:
			for k := 1; k < len(t); k++ {
				switch c := t[k]; c {
				case 'n', 'E', 'r', 's', 'u', 'z', 'b':
				case 'e', 'f', 'l':
					v := shellWord{text: t[k+1:], lit: true}
					vat := at
					if v.text == "" {
						if j+1 >= len(words) {
							break cluster
						}
						j++
						v, vat = words[j], j
					}
					switch c {
					case 'e':
						script(v, vat)
					case 'f':
						scripted = true
						if !sandbox {
							raise(&vouch, at+1)
						}
					}
					break cluster
				default: // -i, -I and letters pid does not know
					raise(&vouch, at+1)
					break cluster
				}
			}
		default:
			if !scripted {
				script(w, j)
			}
		}
	}
	return vouch
}

// sedScriptRisky reports whether a sed script may write a file or run a command (w, W, e,
// s///w, s///e), or is one pid cannot read: it then asks. GNU sed ends a regular expression
// at the first unescaped delimiter, BSD sed skips bracket expressions ([/]) first: the
// script is read both ways, and is risky if either way finds a risk.
func sedScriptRisky(s string) bool { return sedRisky(s, false) || sedRisky(s, true) }

func sedRisky(s string, bsd bool) bool {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
	}
	// bracket skips a bracket expression at s[i] ("[", "[^]a]", "[[:alpha:]/]").
	bracket := func() bool {
		i++
		if i < len(s) && s[i] == '^' {
			i++
		}
		if i < len(s) && s[i] == ']' {
			i++
		}
		for i < len(s) {
			switch {
			case s[i] == ']':
				i++
				return true
			case s[i] == '[' && i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '.' || s[i+1] == '='):
				end := strings.Index(s[i+2:], string(s[i+1])+"]")
				if end < 0 {
					return false
				}
				i += 2 + end + 2
			default:
				i++
			}
		}
		return false
	}
	toEnd := func() { // a label: to ; or newline
		for i < len(s) && s[i] != ';' && s[i] != '\n' {
			i++
		}
	}
	// delimited reads text up to an unescaped delimiter d.
	delimited := func(d byte) bool {
		for i < len(s) {
			switch c := s[i]; {
			case c == '\\':
				i += 2
				continue
			case c == d:
				i++
				return true
			case c == '[' && bsd:
				if !bracket() {
					return false
				}
				continue
			}
			i++
		}
		return false
	}
	address := func() bool {
		if i >= len(s) {
			return true
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case c == '$':
			i++
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';', '{', '}':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		if !address() {
			return true
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return true
			}
			skipSpace()
		}
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			return true
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'q', 'Q':
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			toEnd()
		case 'a', 'i', 'c', 'r', 'R':
			toEOL()
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return true
			}
			d := s[i]
			i++
			for range 2 { // the expression, then the replacement (s) or the second list (y)
				if !delimited(d) {
					return true
				}
			}
			if c == 's' {
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					switch f := s[i]; {
					case f == 'w' || f == 'W' || f == 'e':
						return true
					case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f == ' ' || f == '\t' || f >= '0' && f <= '9':
					default:
						return true
					}
					i++
				}
			}
		default: // w, W, e, and commands pid does not know
			return true
		}
	}
	return false
}

// sort reads a sort command: -o/--output are writes, --compress-program runs a program.
func (r *shellReader) sort(words []shellWord, vouch int) int {
	spec := optSpec{flags: "bdfgiMhnRrVcCmsuz", values: "kStTo",
		long: []string{"--ignore-leading-blanks", "--dictionary-order", "--ignore-case", "--general-numeric-sort",
			"--ignore-nonprinting", "--month-sort", "--human-numeric-sort", "--numeric-sort", "--random-sort",
			"--reverse", "--version-sort", "--check", "--merge", "--stable", "--unique", "--zero-terminated", "--debug"},
		longVals: []string{"--output", "--compress-program", "--files0-from", "--key", "--field-separator",
			"--buffer-size", "--temporary-directory", "--parallel", "--random-source", "--sort", "--batch-size"}}
	return r.operandsAfter(words, vouch, "sort", &spec, false)
}

// tee reads a tee command: each file operand is a write.
func (r *shellReader) tee(words []shellWord, vouch int) int {
	spec := optSpec{flags: "aip", long: []string{"--append", "--ignore-interrupts", "--output-error"}}
	return r.operandsAfter(words, vouch, "tee", &spec, true)
}

// operandsAfter reads the options and operands (which may be mixed) of sort or tee: the
// write options are writes (and every operand when operandsWrite), the other options of
// commandOptions and options pid does not know ask.
func (r *shellReader) operandsAfter(words []shellWord, vouch int, cmd string, spec *optSpec, operandsWrite bool) int {
	endOfOptions := false
	for i := 1; i < len(words); {
		w := words[i]
		if endOfOptions || !w.lit || w.text == "-" || !strings.HasPrefix(w.text, "-") {
			if !w.lit || w.glob {
				raise(&vouch, i+1)
			}
			if operandsWrite {
				r.addWrite(w)
			}
			i++
			continue
		}
		if w.text == "--" {
			endOfOptions = true
			i++
			continue
		}
		next, ok := scanOption(words, i, spec, func(opt string, at int, val *shellWord) {
			o, known := optionOf(cmd, "", opt)
			switch {
			case !known:
			case o.Risk == riskWrite && val != nil:
				r.addWrite(*val)
			default:
				raise(&vouch, at+1)
			}
		})
		if !ok {
			raise(&vouch, i+1)
			next = i + 1
		}
		i = next
	}
	return vouch
}

// canonStmts returns a command's canonical text when it is simple commands with literal
// words and redirections joined by ;, &, &&, || or |: words unquoted then quoted the same
// way, spaces normalised. ok is false for anything else.
func canonStmts(list []*syntax.Stmt) (string, bool) {
	var b strings.Builder
	for i, s := range list {
		if i > 0 {
			if list[i-1].Background {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		if !canonStmt(&b, s) {
			return "", false
		}
	}
	return b.String(), true
}

func canonStmt(b *strings.Builder, s *syntax.Stmt) bool {
	if s == nil || s.Coprocess || s.Disown {
		return false
	}
	if s.Negated {
		b.WriteString("! ")
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		n := 0
		for _, a := range c.Assigns {
			if a == nil || a.Name == nil || a.Naked || a.Append || a.Index != nil || a.Array != nil {
				return false
			}
			v := ""
			if a.Value != nil {
				w, ok := plainWordText(a.Value)
				if !ok {
					return false
				}
				v = w
			}
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(a.Name.Value + "=" + quoteWord(v, false))
			n++
		}
		for i, a := range c.Args {
			w, ok := plainWordText(a)
			if !ok {
				return false
			}
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(quoteWord(w, i == 0))
			n++
		}
	case *syntax.BinaryCmd:
		if !canonStmt(b, c.X) {
			return false
		}
		b.WriteString(" " + c.Op.String() + " ")
		if !canonStmt(b, c.Y) {
			return false
		}
	default:
		return false
	}
	for _, rd := range s.Redirs {
		if rd == nil || rd.Hdoc != nil || rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc || rd.Word == nil {
			return false
		}
		w, ok := plainWordText(rd.Word)
		if !ok {
			return false
		}
		b.WriteByte(' ')
		if rd.N != nil {
			b.WriteString(rd.N.Value)
		}
		b.WriteString(rd.Op.String() + " " + quoteWord(w, false))
	}
	if s.Background {
		b.WriteString(" &")
	}
	return true
}

// plainWordText returns a word's text when it is literal and has no glob.
func plainWordText(w *syntax.Word) (string, bool) {
	sw := literal(w)
	if !sw.lit || sw.glob {
		return "", false
	}
	return sw.text, true
}

// quoteWord writes a literal word so that bash reads it back as the same literal word:
// bare when it is made of safe characters, else in single quotes. A command name that bash
// would read as a keyword or an assignment is quoted.
func quoteWord(s string, command bool) string {
	if s == "[" || s == "]" || s == "[[" || s == "]]" {
		if command && s != "[" {
			return "'" + s + "'"
		}
		return s
	}
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_@%+=:,./-^", c) >= 0
	}
	if safe && command && (strings.Contains(s, "=") || syntax.IsKeyword(s)) {
		safe = false
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unquoteLit writes an unquoted literal without its backslashes, and reports whether it
// has a glob (*, ? or a [...] class).
func unquoteLit(b *strings.Builder, v string) (glob bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					b.WriteByte(v[i])
				}
				continue
			}
		case '*', '?':
			glob = true
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				glob = true
			}
		}
		b.WriteByte(c)
	}
	return glob
}

// unquoteDouble writes the literal text of a double-quoted string: a backslash escapes
// only $, `, ", \ and a newline.
func unquoteDouble(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(c)
	}
}

// ansiC decodes the escapes of a $'...' string ($'\x72m' is rm).
func ansiC(s string) string {
	var b strings.Builder
	hex := func(i, max int) (int, int) { // value, digits read
		v, n := 0, 0
		for n < max && i+n < len(s) {
			c := s[i+n]
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'a' && c <= 'f':
				d = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				d = int(c-'A') + 10
			default:
				return v, n
			}
			v = v*16 + d
			n++
		}
		return v, n
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x':
			v, n := hex(i+1, 2)
			if n == 0 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			v, n := hex(i+1, max)
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			b.WriteRune(rune(v))
			i += n
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		default:
			if e >= '0' && e <= '7' {
				v, n := 0, 0
				for n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '7' {
					v = v*8 + int(s[i+n]-'0')
					n++
				}
				b.WriteByte(byte(v))
				i += n - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

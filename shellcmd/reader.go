// This file walks a parsed command line: its statements, compound commands, redirections
// and the files they write, turning them into a Command's parts, writes and unsafe
// constructs.

package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellReader reads one source (the command line, or a string run by eval or sh -c) into a
// Command.
type shellReader struct {
	cmd   *Command
	src   string
	depth int
	seen  []*syntax.CallExpr // the simple commands read, to find any the walk missed
}

// setUnsafe records the first construct no rule can vouch for.
func (r *shellReader) setUnsafe(why string) {
	if r.cmd.Unsafe == "" {
		r.cmd.Unsafe = why
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
			r.cmd.ParseErr = perr.Error()
		}
	}
	r.stmts(stmts)
	r.backstop(stmts)
	if r.depth == 0 && perr == nil {
		r.cmd.Canon, r.cmd.simple = canonStmts(stmts)
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
		if w.Lit && isFD(w.Text) {
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
		case !w.Lit:
			r.setUnsafe("the command reads from a file named by an expansion (" + w.Text + ")")
		case networkFile(w.Text):
			r.setUnsafe("the command opens a network connection (" + w.Text + ")")
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
func (r *shellReader) addWrite(w Word) {
	switch {
	case !w.Lit || w.Glob:
		r.setUnsafe("the command writes to a file named by an expansion (" + w.Text + ")")
	case w.Text == "":
		r.setUnsafe("the command writes to a file with an empty name")
	case harmlessWrite(w.Text):
	case networkFile(w.Text):
		r.setUnsafe("the command opens a network connection (" + w.Text + ")")
	default:
		r.cmd.Writes = append(r.cmd.Writes, w.Text)
	}
}

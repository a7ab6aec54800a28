// This file says what an "always" answer covers: the AlwaysScope proposed for a call (the
// command's own scope from shellcmd for bash, the exact path for file tools, the whole tool
// otherwise) and how an answer under a scope applies to later calls.

package permissions

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/shellcmd"
)

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
//   - bash: the pattern shellcmd.SuggestScope proposes for the command (`git status --short`
//     -> commands starting with `git status`; `touch X; rm -f Y` -> exactly that command;
//     false for a write, a construct no rule can vouch for, or a command that does not
//     parse).
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
		sc, ok := callCommand(c)
		if !ok {
			return AlwaysScope{}, false
		}
		cs, ok := shellcmd.SuggestScope(sc)
		if !ok {
			return AlwaysScope{}, false
		}
		s = AlwaysScope{Tool: c.Tool, Pattern: cs.Pattern,
			Description: "bash commands starting with `" + cs.Pattern + "` in this workspace"}
		if cs.Exact {
			s.Description = "exactly the bash command `" + cs.Pattern + "` in this workspace"
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

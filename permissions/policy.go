// Package permissions decides whether a tool call may run (allow), needs the editor's
// approval (ask) or must not run (deny), and remembers the editor's "always" answers.
// docs/permissions.md describes the behaviour for users.
//
// The entry point is Check, which asks a Policy and, when the policy says ask, a Store of
// remembered answers. A Policy is built from layers of Spec (the JSON shape of session/new's
// permissions and of the settings files), later layers winning, and narrow-only layers
// (settings of a folder that is not trusted) that can only make decisions stricter.
// SuggestScope says what an "always" answer will cover.
//
// The package is the policy only; its two neighbours each do one other job. Package
// shellcmd reads a bash command into the parts that rules on bash are matched against (and
// the git repository risks of a git command); the policy imports it. Package settings reads
// the settings files, keeps them current and hands out the effective Policy for a folder; it
// imports this package, because the policy consumes the rules that the settings loaded, and
// knows nothing of files.
//
// This file holds the Policy: its layers, the calls it decides and its verdicts (Decide),
// and Check, which adds the remembered answers.
package permissions

import (
	"encoding/json"
	"slices"

	"github.com/pid-agent/pid/protected"
	"github.com/pid-agent/pid/shellcmd"
)

// Layer is one source of a Policy with a name for messages ("user settings ~/.config/...").
type Layer struct {
	Source string
	Spec   *Spec // nil says nothing
	// Narrow makes the layer narrow-only (the workspace settings of a folder that is not
	// trusted): it can only make decisions stricter. Its allow rules, plain allow entries
	// and allow default are ignored; its deny and ask rules, entries and default apply over
	// every other layer, later ones included (see Decide). Its entry for a tool never
	// replaces another layer's entry.
	Narrow bool
}

// Policy is the effective permissions: layers of Spec, later ones winning, over the built-in
// nature of tools. A Policy never changes once built; With makes a new one. The nil Policy
// is the built-in defaults.
type Policy struct {
	layers   []Layer
	readOnly func(tool string) bool
}

// BuiltinReadOnly reports whether a tool is one of pid's read-only built-in tools (read,
// grep, find, ls), which the built-in defaults allow. Pure: safe for concurrent use.
func BuiltinReadOnly(tool string) bool {
	switch tool {
	case "read", "grep", "find", "ls":
		return true
	}
	return false
}

// NewPolicy returns a policy over the given layers (earliest first). readOnly tells which
// tools are read-only (allowed by the built-in defaults, every other tool asks); nil means
// BuiltinReadOnly. readOnly is called from Decide, possibly concurrently: it must be safe for
// concurrent use and must not block. The layers' Specs must not be modified afterwards.
func NewPolicy(readOnly func(tool string) bool, layers ...Layer) *Policy {
	return &Policy{layers: slices.Clone(layers), readOnly: readOnly}
}

// With returns a new policy with more layers on top (they win over p's) and, when readOnly is
// not nil, that read-only predicate instead of p's. The daemon calls it per decision with the
// session's own permissions and its tools' nature; it is cheap and p is unchanged.
func (p *Policy) With(readOnly func(tool string) bool, layers ...Layer) *Policy {
	q := &Policy{readOnly: readOnly}
	if p != nil {
		q.layers = append(slices.Clip(p.layers), layers...)
		if readOnly == nil {
			q.readOnly = p.readOnly
		}
	} else {
		q.layers = slices.Clone(layers)
	}
	return q
}

// Layers returns a copy of the policy's layers, earliest first (for diagnostics). Safe for
// concurrent use.
func (p *Policy) Layers() []Layer {
	if p == nil {
		return nil
	}
	return slices.Clone(p.layers)
}

// Call is what a decision looks at.
type Call struct {
	Tool string
	// Args are the call's raw JSON arguments; empty means {}.
	Args json.RawMessage
	// Cwd is the absolute folder relative paths in Args are resolved against; glob rules
	// use it to compare absolute and relative paths. "" compares paths as written.
	Cwd string
}

// Verdict is a decision and where it came from.
type Verdict struct {
	Decision Decision
	// Source names what decided: the layer ("session", "user settings /path",
	// "workspace settings /path"), "default (LAYER)" for a layer's default, "built-in" for
	// the tool's nature or for a bash construct no rule can vouch for, or "remembered" for a
	// remembered answer (see Check).
	Source string
	// Rule is the index of the deciding rule in the list of the tool that decided (bash's,
	// or write's when Part names a write), or -1.
	Rule int
	// Remembered is the remembered answer that decided, when Source is "remembered".
	Remembered *Remembered
	// Part names, for a bash command, the piece that decided: one of its simple commands
	// ("rm -rf build"), a file it writes ("write docs/a.md"), or the construct that made it
	// ask ("the command uses eval, which runs a string as a command"). For a write or edit
	// of a protected path that a default would have allowed, it names the path ("writes
	// .git/config"). "" otherwise.
	Part string
}

// rank orders decisions by strictness: deny > ask > allow.
func rank(d Decision) int {
	switch d {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// Decide returns the policy's verdict for a call.
//
// The trusted layers (not Narrow) decide first. The latest such layer with an entry for the
// tool decides: a plain decision, or its first matching rule; a list with no matching rule,
// or no entry at all, falls back to the latest default; with no default anywhere, read-only
// tools are allowed and every other tool asks. A default never allows a write or edit of a
// path other programs load commands from (package protected: .git, .pid, .vscode, .envrc...):
// that asks, unless an entry or a rule for the tool decides it.
//
// A bash command is parsed once (shellcmd.ParseCached), and that lookup is done for each of its simple
// commands; the call gets the strictest (deny > ask > allow). Then, unless bash's entry is a
// plain "allow": a construct no rule can vouch for (eval, sh -c, source, an expansion in
// command position, a parse error, ...) turns allow into ask, and each file the command
// writes is decided as a write call on that path, joining the strictest.
//
// A bash command that runs git is also checked against the configuration of the repository
// git would run in (shellcmd's Command.GitRisk): the programs it names (core.fsmonitor, core.pager, an
// alias "!cmd", a filter driver, ...) are decided as parts of the command, and a command
// that would be allowed asks instead.
//
// Then each narrow layer gives its own verdict where it has something to say (its deny and
// ask rules and entries for each simple command, for each file written, and its deny or ask
// default), and the strictest of all verdicts is the answer.
//
// Contract: safe for concurrent use; it cannot fail (a call whose arguments are not JSON
// matches no rule). It never blocks: the only files it reads are, for a git command, the
// repository's own configuration files, through safefile (no FIFO wait, 1 MB each).
func (p *Policy) Decide(c Call) Verdict {
	var sc *shellcmd.Command
	if c.Tool == "bash" {
		sc, _ = callCommand(c)
	}
	v := p.decideTrusted(c, sc)
	if p == nil {
		return v
	}
	for _, l := range p.layers {
		if !l.Narrow || l.Spec == nil {
			continue
		}
		if nv, ok := narrowVerdict(l, c, sc); ok && rank(nv.Decision) > rank(v.Decision) {
			v = nv
		}
	}
	return v
}

// entry returns the latest trusted layer with an entry for a tool, and that entry.
func (p *Policy) entry(tool string) (int, Entry, bool) {
	if p == nil {
		return -1, Entry{}, false
	}
	for i := len(p.layers) - 1; i >= 0; i-- {
		l := p.layers[i]
		if l.Narrow || l.Spec == nil {
			continue
		}
		if e, ok := l.Spec.entryFor(tool); ok {
			return i, e, true
		}
	}
	return -1, Entry{}, false
}

// decideTrusted is Decide without the narrow layers.
func (p *Policy) decideTrusted(c Call, sc *shellcmd.Command) Verdict {
	li, e, found := p.entry(c.Tool)
	if sc == nil {
		return p.decideSubject(c, nil, nil, li, e, found)
	}
	parts := sc.Subjects()
	best, at := Verdict{}, -1
	for i := range parts {
		v := p.decideSubject(c, sc, &parts[i], li, e, found)
		if at < 0 || rank(v.Decision) > rank(best.Decision) {
			best, at = v, i
		}
	}
	if best.Part = parts[at].Text(); best.Part == "" {
		best.Part = sc.Unsafe // a command that runs nothing pid could read
	}
	if found && e.Decision == Allow {
		return best // "bash": "allow" allows whatever the command does
	}
	if best.Decision == Allow && sc.Unsafe != "" {
		best = Verdict{Decision: Ask, Source: "built-in", Rule: -1, Part: sc.Unsafe}
	}
	if best.Decision != Deny {
		best = p.decideGitRepo(c, sc, best, li, e, found)
	}
	for _, w := range sc.Writes {
		if best.Decision == Deny {
			break
		}
		wv := p.decideTrusted(writeCall(c, w), nil)
		if rank(wv.Decision) > rank(best.Decision) {
			best = wv
			best.Part = "write " + w
		}
	}
	return best
}

// decideGitRepo joins to best (the verdict so far on a bash call) what the repository of
// each git command in it would make git run (shellcmd's Command.GitRisk): the commands its
// configuration names are decided as parts of the call (so a deny rule sees them), and a
// call that would be allowed asks instead, saying which setting.
func (p *Policy) decideGitRepo(c Call, sc *shellcmd.Command, best Verdict, li int, e Entry, found bool) Verdict {
	risk := sc.GitRisk(c.Cwd)
	if risk.Why == "" {
		return best
	}
	for _, cmd := range risk.Commands {
		rc := shellcmd.ParseCached(cmd)
		for i := range rc.Parts {
			v := p.decideSubject(c, rc, &rc.Parts[i], li, e, found)
			if v.Decision == Deny && rank(v.Decision) > rank(best.Decision) {
				v.Part = "git would run " + rc.Parts[i].Text() + ": " + risk.Why
				return v
			}
		}
	}
	if best.Decision == Allow {
		best = Verdict{Decision: Ask, Source: "built-in", Rule: -1, Part: risk.Why}
	}
	return best
}

// decideSubject is the trusted layers' verdict for one simple command of a call (sc and pt
// nil when the call is not a parsed bash command), given the latest entry for the tool.
func (p *Policy) decideSubject(c Call, sc *shellcmd.Command, pt *shellcmd.Part, li int, e Entry, found bool) Verdict {
	if found {
		src := p.layers[li].Source
		if e.Decision != "" {
			return Verdict{Decision: e.Decision, Source: src, Rule: -1}
		}
		for j, r := range e.Rules {
			switch r.matchSubject(c, sc, pt) {
			case shellcmd.MatchYes:
				return Verdict{Decision: r.Decision, Source: src, Rule: j}
			case shellcmd.MatchMaybe: // a deny or ask rule that may apply
				return Verdict{Decision: Ask, Source: src, Rule: j}
			}
		}
	}
	if p != nil {
		for i := len(p.layers) - 1; i >= 0; i-- {
			l := p.layers[i]
			if !l.Narrow && l.Spec != nil && l.Spec.Default != "" {
				if l.Spec.Default == Allow {
					if e, hit := writesProtected(c); hit {
						// A default is no rule about these paths: the person is asked.
						return Verdict{Decision: Ask, Source: "built-in", Rule: -1, Part: "writes " + e}
					}
				}
				return Verdict{Decision: l.Spec.Default, Source: "default (" + l.Source + ")", Rule: -1}
			}
		}
	}
	readOnly := BuiltinReadOnly
	if p != nil && p.readOnly != nil {
		readOnly = p.readOnly
	}
	if readOnly(c.Tool) {
		return Verdict{Decision: Allow, Source: "built-in", Rule: -1}
	}
	return Verdict{Decision: Ask, Source: "built-in", Rule: -1}
}

// narrowVerdict is a narrow layer's own verdict on a call, and whether it has one: the
// strictest of its deny and ask entries and rules for each simple command (its default
// when no rule matches and the default is deny or ask), ask for a bash construct its rules
// cannot see into, and its verdicts on the files the command writes.
func narrowVerdict(l Layer, c Call, sc *shellcmd.Command) (Verdict, bool) {
	e, found := l.Spec.entryFor(c.Tool)
	var best Verdict
	has := false
	consider := func(v Verdict) {
		if !has || rank(v.Decision) > rank(best.Decision) {
			best, has = v, true
		}
	}
	subject := func(pt *shellcmd.Part) (Verdict, bool) {
		if found && (e.Decision == Deny || e.Decision == Ask) {
			return Verdict{Decision: e.Decision, Source: l.Source, Rule: -1}, true
		}
		if found {
			for j, r := range e.Rules {
				if r.Decision == Allow {
					continue
				}
				switch r.matchSubject(c, sc, pt) {
				case shellcmd.MatchYes:
					return Verdict{Decision: r.Decision, Source: l.Source, Rule: j}, true
				case shellcmd.MatchMaybe:
					return Verdict{Decision: Ask, Source: l.Source, Rule: j}, true
				}
			}
		}
		if d := l.Spec.Default; d == Deny || d == Ask {
			return Verdict{Decision: d, Source: "default (" + l.Source + ")", Rule: -1}, true
		}
		return Verdict{}, false
	}
	if sc == nil {
		return subject(nil)
	}
	parts := sc.Subjects()
	for i := range parts {
		if v, ok := subject(&parts[i]); ok {
			v.Part = parts[i].Text()
			consider(v)
		}
	}
	if sc.Unsafe != "" && found && slices.ContainsFunc(e.Rules, func(r Rule) bool { return r.Decision != Allow }) {
		consider(Verdict{Decision: Ask, Source: l.Source, Rule: -1, Part: sc.Unsafe})
	}
	for _, w := range sc.Writes {
		if v, ok := narrowVerdict(l, writeCall(c, w), nil); ok {
			v.Part = "write " + w
			consider(v)
		}
	}
	return best, has
}

// writesProtected reports whether c is a write or edit (a bash command's write to a file
// included: writeCall) of a path other programs load commands from (package protected),
// and returns that path as written, relative to the cwd when inside it.
func writesProtected(c Call) (string, bool) {
	if c.Tool != "write" && c.Tool != "edit" {
		return "", false
	}
	vals, ok := values(c, "path")
	if !ok || len(vals) != 1 || !vals[0].scalar {
		return "", false
	}
	rel := relativePath(vals[0].text, c.Cwd)
	if _, hit := protected.Match(rel); !hit {
		return "", false
	}
	return rel, true
}

// writeCall is the write call a bash command's write to a file stands for.
func writeCall(c Call, file string) Call {
	args, _ := json.Marshal(struct {
		Path string `json:"path"`
	}{file})
	return Call{Tool: "write", Args: args, Cwd: c.Cwd}
}

// Check decides a call: the policy's verdict, except that when the policy says ask, an answer
// remembered in store for this workspace root answers instead. An explicit allow or deny of
// the policy is never overridden by a remembered answer. store may be nil.
//
// Contract: safe for concurrent use; it never blocks on settings reloads. It may stat the
// store's file (see Store.Lookup) but never writes it.
func Check(p *Policy, store *Store, workspace string, c Call) Verdict {
	v := p.Decide(c)
	if v.Decision != Ask || store == nil {
		return v
	}
	if r, ok := store.Lookup(workspace, c); ok {
		return Verdict{Decision: r.Decision, Source: "remembered", Rule: -1, Remembered: &r}
	}
	return v
}

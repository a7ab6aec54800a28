// This file holds the decisions and the Spec, the JSON shape of a source of permissions
// (session/new's permissions, a settings file's "permissions" object): its validation, its
// encoding, what it would widen, and which entry it has for a tool.

package permissions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pid-agent/pid/internal/elide"
	"github.com/pid-agent/pid/shellcmd"
)

// Decision is what a policy says about a call.
type Decision string

const (
	Allow Decision = "allow" // run without asking
	Ask   Decision = "ask"   // ask the editor
	Deny  Decision = "deny"  // do not run
)

// valid reports whether d is one of the three decisions.
func (d Decision) valid() bool { return d == Allow || d == Ask || d == Deny }

// Spec is one source of permissions: `{default?, tools?: {NAME: DECISION | [RULE...]}}`.
// The zero Spec says nothing (every question falls through to earlier sources).
type Spec struct {
	// Default is the decision for tools no source names; "" leaves it to earlier sources.
	Default Decision
	// Tools maps a tool name to its entry. An entry replaces earlier sources' entry for the
	// same tool whole.
	Tools map[string]Entry
}

// Entry is what one source says about one tool: a plain decision, or a list of rules tried
// in order (the first that matches decides; none matching falls back to the default).
// Exactly one of Decision and Rules is meaningful: Rules is used when Decision is "".
type Entry struct {
	Decision Decision
	Rules    []Rule
}

// Rule is a pattern on one argument of a call.
type Rule struct {
	// Path is the gjson path of the argument the rule looks at; "" means the tool's default
	// argument (DefaultArgument).
	Path string
	// Pattern is, on bash's command, a command: one simple command matches the simple
	// commands of the call that start with its words (*, ? and [ are plain characters, but a
	// last word * stands for any further words), anything else matches one command exactly.
	// On other arguments it is a glob (** crossing folders) when it contains *, ? or [ or
	// when the argument is a path (its last element ends in "path"), else a prefix that ends
	// at a word boundary. See match.go.
	Pattern  string
	Decision Decision
}

// DefaultArgument returns the gjson path a rule without "path" looks at for a tool, and
// whether the tool has one: bash -> command; read, write, edit, grep, find, ls -> path;
// network (the pseudo-tool of remembered answers about hosts) -> host.
// Pure: safe for concurrent use, never fails.
func DefaultArgument(tool string) (string, bool) {
	switch tool {
	case "bash":
		return "command", true
	case "read", "write", "edit", "grep", "find", "ls":
		return "path", true
	case "network":
		return "host", true
	}
	return "", false
}

// missingDefault is the value a tool's default argument stands for when the call omits it:
// grep, find and ls search the working folder.
func missingDefault(tool, path string) (string, bool) {
	if path == "path" && (tool == "grep" || tool == "find" || tool == "ls") {
		return ".", true
	}
	return "", false
}

// ParseSpec reads and validates a permissions object. JSON null and empty input give the zero
// Spec. Errors name the offending field from "permissions" down, for example
// `permissions.tools["bash"][1].decision must be "allow", "ask" or "deny", not "yes"`;
// unknown keys are errors (a misspelt key would silently change what is allowed).
//
// Contract: the daemon calls it for session/new's permissions (answering -32602 with the
// error's text) and package settings for settings files. Pure: safe for concurrent use; on error it
// returns a nil Spec.
func ParseSpec(data []byte) (*Spec, error) {
	s := &Spec{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("permissions must be an object: %v", err)
	}
	for k := range top {
		if k != "default" && k != "tools" {
			return nil, fmt.Errorf("permissions has an unknown key %q (known: default, tools)", k)
		}
	}
	if raw, ok := top["default"]; ok && string(raw) != "null" {
		d, err := parseDecision(raw, "permissions.default")
		if err != nil {
			return nil, err
		}
		s.Default = d
	}
	raw, ok := top["tools"]
	if !ok || string(raw) == "null" {
		return s, nil
	}
	var tools map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("permissions.tools must be an object mapping tool names to a decision or a list of rules")
	}
	s.Tools = make(map[string]Entry, len(tools))
	// Validate in name order so that the error reported for a file with several is stable.
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e, err := parseEntry(name, tools[name])
		if err != nil {
			return nil, err
		}
		s.Tools[name] = e
	}
	return s, nil
}

func parseDecision(raw json.RawMessage, field string) (Decision, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || !Decision(v).valid() {
		return "", fmt.Errorf("%s must be \"allow\", \"ask\" or \"deny\", not %s", field, elide.Quote(raw))
	}
	return Decision(v), nil
}

func parseEntry(name string, raw json.RawMessage) (Entry, error) {
	field := fmt.Sprintf("permissions.tools[%q]", name)
	if name == "" {
		return Entry{}, fmt.Errorf("permissions.tools has an empty tool name")
	}
	if isGlob(name) {
		if _, err := path.Match(name, ""); err != nil {
			return Entry{}, fmt.Errorf("%s: the tool name is not a valid glob: %v", field, err)
		}
	}
	if len(raw) > 0 && raw[0] == '"' {
		d, err := parseDecision(raw, field)
		return Entry{Decision: d}, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return Entry{}, fmt.Errorf("%s must be \"allow\", \"ask\", \"deny\" or a list of rules, not %s", field, elide.Quote(raw))
	}
	e := Entry{Rules: make([]Rule, 0, len(list))}
	for i, r := range list {
		rule, err := parseRule(name, r, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return Entry{}, err
		}
		e.Rules = append(e.Rules, rule)
	}
	return e, nil
}

func parseRule(tool string, raw json.RawMessage, field string) (Rule, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Rule{}, fmt.Errorf("%s must be an object {path?, pattern, decision}, not %s", field, elide.Quote(raw))
	}
	for k := range obj {
		if k != "path" && k != "pattern" && k != "decision" {
			return Rule{}, fmt.Errorf("%s has an unknown key %q (known: path, pattern, decision)", field, k)
		}
	}
	var r Rule
	if raw, ok := obj["path"]; ok {
		if err := json.Unmarshal(raw, &r.Path); err != nil || r.Path == "" {
			return Rule{}, fmt.Errorf("%s.path must be a non-empty gjson path, not %s", field, elide.Quote(raw))
		}
	}
	rawPat, ok := obj["pattern"]
	if !ok {
		return Rule{}, fmt.Errorf("%s.pattern is missing", field)
	}
	if err := json.Unmarshal(rawPat, &r.Pattern); err != nil || strings.TrimSpace(r.Pattern) == "" {
		return Rule{}, fmt.Errorf("%s.pattern must be a non-empty string, not %s", field, elide.Quote(rawPat))
	}
	rawDec, ok := obj["decision"]
	if !ok {
		return Rule{}, fmt.Errorf("%s.decision is missing", field)
	}
	d, err := parseDecision(rawDec, field+".decision")
	if err != nil {
		return Rule{}, err
	}
	r.Decision = d
	if err := r.check(tool); err != nil {
		return Rule{}, fmt.Errorf("%s: %v", field, err)
	}
	// A settings file is written by a person: a command pattern that can match nothing is a
	// mistake worth reporting (the store, by contrast, accepts what check accepts).
	if shellRule(tool, r.argPath(tool)) {
		if p := shellcmd.CompilePattern(r.Pattern).Problem(); p != "" {
			return Rule{}, fmt.Errorf("%s: pattern %q matches no command: %s; write the command as you would type it in a terminal", field, r.Pattern, p)
		}
	}
	return r, nil
}

// check reports what is wrong with a rule for a tool: no argument to look at, or a malformed
// glob. A pattern on bash's command is a command, never a glob: any text is accepted.
func (r Rule) check(tool string) error {
	arg := r.Path
	if arg == "" {
		var ok bool
		if arg, ok = DefaultArgument(tool); !ok {
			return fmt.Errorf("tool %q has no default argument: the rule needs a \"path\"", tool)
		}
	}
	if !shellRule(tool, arg) && globRule(r.Pattern, arg) {
		if err := checkGlob(r.Pattern); err != nil {
			return fmt.Errorf("pattern %q is not a valid glob: %v", r.Pattern, err)
		}
	}
	return nil
}

// MarshalJSON writes the Spec in the shape ParseSpec reads. Safe for concurrent use.
func (s Spec) MarshalJSON() ([]byte, error) {
	type rule struct {
		Path     string   `json:"path,omitempty"`
		Pattern  string   `json:"pattern"`
		Decision Decision `json:"decision"`
	}
	out := struct {
		Default Decision       `json:"default,omitempty"`
		Tools   map[string]any `json:"tools,omitempty"`
	}{Default: s.Default}
	if len(s.Tools) > 0 {
		out.Tools = make(map[string]any, len(s.Tools))
		for name, e := range s.Tools {
			if e.Decision != "" {
				out.Tools[name] = e.Decision
				continue
			}
			rules := make([]rule, 0, len(e.Rules))
			for _, r := range e.Rules {
				rules = append(rules, rule(r))
			}
			out.Tools[name] = rules
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON is ParseSpec, so a Spec can sit in a request's params struct.
func (s *Spec) UnmarshalJSON(b []byte) error {
	p, err := ParseSpec(b)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// Widening lists, for a person, what the spec would widen if it were trusted: an allow
// default, plain allow entries, and allow rules, as
// `permissions.tools["bash"][2] allow "npm test"`, in a stable order (default first, then
// tools by name). A narrow-only layer ignores exactly these; the settings Loader reports
// them. The
// nil Spec widens nothing. Pure: safe for concurrent use.
func (s *Spec) Widening() []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Default == Allow {
		out = append(out, `permissions.default "allow"`)
	}
	names := make([]string, 0, len(s.Tools))
	for name := range s.Tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := s.Tools[name]
		if e.Decision == Allow {
			out = append(out, fmt.Sprintf(`permissions.tools[%q] "allow"`, name))
			continue
		}
		for i, r := range e.Rules {
			if r.Decision != Allow {
				continue
			}
			w := fmt.Sprintf(`permissions.tools[%q][%d] allow %q`, name, i, r.Pattern)
			if r.Path != "" {
				w += fmt.Sprintf(" (on %q)", r.Path)
			}
			out = append(out, w)
		}
	}
	return out
}

// entryFor returns the spec's entry for a tool: the one named exactly so, else the most
// specific glob key that matches the name ("mcp__github__*" for every tool of the github MCP
// server; a longer pattern wins, then the first in name order).
func (s *Spec) entryFor(tool string) (Entry, bool) {
	if e, ok := s.Tools[tool]; ok {
		return e, true
	}
	best := ""
	for name := range s.Tools {
		if !isGlob(name) {
			continue
		}
		if ok, _ := path.Match(name, tool); ok && (len(name) > len(best) || len(name) == len(best) && name < best) {
			best = name
		}
	}
	if best == "" {
		return Entry{}, false
	}
	return s.Tools[best], true
}

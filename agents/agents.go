// Package agents finds the person's agent definitions: Markdown files whose YAML front
// matter names a subagent, says what it is for, which tools and model it gets and whether
// it works in its own worktree, and whose body is its prompt (Claude Code's
// .claude/agents/*.md, opencode's .opencode/agents/*.md). pid runs them as task's agents.
//
// The entry point is Find; ToolSet and ResolveModel turn a definition into the child
// session's tools and model.
package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/internal/xdg"
)

// Folder is a workspace folder and whether the person trusts it.
type Folder = mdfile.Folder

// Source says whose an agent is: "workspace" or "user".
type Source = mdfile.Source

// The sources.
const (
	SourceWorkspace = mdfile.SourceWorkspace
	SourceUser      = mdfile.SourceUser
)

// MaxBytes caps an agent file: a longer one is left out.
const MaxBytes = mdfile.MaxBytes

// Builtin are task's own agents: a file of one of these names is left out.
var Builtin = []string{"explore", "general"}

// IsolationWorktree is the isolation value that puts the agent in its own git worktree.
const IsolationWorktree = "worktree"

// workspaceDirs are where a workspace folder's agents are, in the order that decides
// between two of one name.
var workspaceDirs = []string{".claude/agents", ".opencode/agents", ".agents/agents"}

// nameRE is what an agent's name may be (one of task's enum values).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Agent is one agent definition found, in agents/list's shape.
type Agent struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Path is the agent's file, as found under its folder (links not resolved).
	Path   string `json:"path"`
	Source Source `json:"source"`
	// Ignored says why the agent is left out; "" for an agent in use.
	Ignored string `json:"ignored,omitempty"`
	// Warnings name what pid ignores in an agent in use.
	Warnings []string `json:"warnings,omitempty"`

	// Tools are the tool names of its front matter's tools, as written (Claude Code's or
	// pid's); nil when it sets none (ToolsOff may then say which to leave out).
	Tools []string `json:"-"`
	// ToolsOff, for opencode's form (tools: {write: false}), are the names set to false.
	ToolsOff []string `json:"-"`
	// Model is its front matter's model as written ("" when unset).
	Model string `json:"-"`
	// Isolation is IsolationWorktree when it asks for its own worktree, else "".
	Isolation string `json:"-"`
	// Prompt is its body: the agent's system prompt, after pid's subagent prompt.
	Prompt string `json:"-"`
	// Untrusted is set for an agent left out because its workspace folder is not trusted
	// (TrustItems names those).
	Untrusted bool `json:"-"`
}

// Used reports whether the agent is in use (not left out).
func (a Agent) Used() bool { return a.Ignored == "" }

// UserDirs returns the person's agent folders, in the order that decides between two of
// one name: ~/.claude/agents, $XDG_CONFIG_HOME/pid/agents (see package xdg). One that
// cannot be named (no home folder) is left out.
func UserDirs() []string {
	var out []string
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".claude", "agents"))
	}
	if dir, err := xdg.ConfigDir(); err == nil {
		out = append(out, filepath.Join(dir, "agents"))
	}
	return out
}

// Find returns the agents of the workspace folders (in their order; .claude/agents,
// .opencode/agents, .agents/agents of each: NAME.md files) and of the person's folders
// userDirs (in their order: UserDirs), every one found: those in use, and those left out
// with Ignored saying why (an untrusted workspace folder's, so that the trust question can
// name them; a front matter that cannot be read or has no description; a file over
// MaxBytes; a file that is a link leading outside its workspace folder; a name of task's
// own agents; a name another agent has first). Of two agents of one name the first in that
// order is used: the workspace's over the person's. notes are problems with whole folders,
// for the caller to report.
//
// Contract: safe for concurrent use; it reads the folders now. An untrusted folder's files
// are listed (by their names), never read.
func Find(folders []Folder, userDirs []string) (list []Agent, notes []string) {
	for _, f := range folders {
		root := mdfile.RealRoot(f.Path)
		for _, d := range workspaceDirs {
			l, n := findIn(filepath.Join(f.Path, filepath.FromSlash(d)), SourceWorkspace, root, f.Trusted)
			list, notes = append(list, l...), append(notes, n...)
		}
	}
	for _, d := range userDirs {
		l, n := findIn(d, SourceUser, "", true)
		list, notes = append(list, l...), append(notes, n...)
	}
	first := map[string]int{}
	for i := range list {
		a := &list[i]
		if !a.Used() {
			continue
		}
		if j, ok := first[a.Name]; ok {
			a.Ignored = fmt.Sprintf("the %s agent %q of %s is used instead (it comes first)", list[j].Source, a.Name, list[j].Path)
			continue
		}
		first[a.Name] = i
	}
	return list, notes
}

// Lookup returns the agent in use named name.
func Lookup(list []Agent, name string) (Agent, bool) {
	for _, a := range list {
		if a.Used() && a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// InUse returns the agents of list in use (Used), in order: task's enum, the tool list
// being fixed for a session's life.
func InUse(list []Agent) []Agent {
	var out []Agent
	for _, a := range list {
		if a.Used() {
			out = append(out, a)
		}
	}
	return out
}

// Named returns the agent in use named name; when there is none, why, as a sentence for the
// model: the agent's file is no longer used (which file, and why), or no agent has that name.
func Named(list []Agent, name string) (Agent, string) {
	if a, ok := Lookup(list, name); ok {
		return a, ""
	}
	for _, a := range list {
		if a.Name == name {
			return Agent{}, fmt.Sprintf("The agent %s is no longer defined (%s): %s.", name, a.Path, a.Ignored)
		}
	}
	return Agent{}, fmt.Sprintf("The agent %s is no longer defined.", name)
}

// findIn returns the agents of one folder. root is the real workspace folder a
// workspace's agents must stay in ("" for the person's).
func findIn(dir string, source Source, root string, trusted bool) (list []Agent, notes []string) {
	real := dir
	if root != "" {
		r, err := mdfile.Contain(dir, root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, []string{fmt.Sprintf("agents: %s: %v; its agents are left out", dir, err)}
		}
		real = r
	}
	names, more, err := mdfile.Entries(real)
	if err != nil {
		return nil, []string{fmt.Sprintf("agents: %s cannot be read: %v", dir, err)}
	}
	if more {
		notes = append(notes, fmt.Sprintf("agents: %s holds more than %d entries; the others are left out", dir, mdfile.MaxEntries))
	}
	for _, name := range names {
		stem, ok := strings.CutSuffix(name, ".md")
		if !ok || stem == "" || strings.HasPrefix(name, ".") {
			continue
		}
		if a, ok := readAgent(filepath.Join(dir, name), stem, source, root, trusted); ok {
			list = append(list, a)
		}
	}
	return list, notes
}

// readAgent reads the agent file at path (stem its name without .md); ok is false when it
// is no agent (a folder, a dangling link).
func readAgent(path, stem string, source Source, root string, trusted bool) (a Agent, ok bool) {
	a = Agent{Name: stem, Path: path, Source: source}
	real, err := mdfile.Contain(path, root)
	switch {
	case errors.Is(err, mdfile.ErrOutside):
		a.Ignored = "the file " + err.Error()
		return a, true
	case err != nil:
		return a, false
	}
	if fi, err := os.Stat(real); err != nil || fi.IsDir() {
		return a, false
	}
	if !trusted {
		a.Ignored = fmt.Sprintf("the workspace folder %s is not trusted, so its agents are not used", root)
		a.Untrusted = true
		return a, true
	}
	data, err := mdfile.Read(real)
	if err != nil {
		a.Ignored = fmt.Sprintf("the file cannot be read: %v", err)
		return a, true
	}
	doc, err := mdfile.Parse(data)
	if err != nil {
		a.Ignored = "bad front matter: " + err.Error()
		return a, true
	}
	if why := a.fromDoc(doc); why != "" {
		a.Ignored = "bad front matter: " + why
	}
	return a, true
}

// fromDoc fills a from its file's front matter and body; it returns why the front matter
// makes the agent unusable ("" when it does not).
func (a *Agent) fromDoc(doc *mdfile.Doc) string {
	if v, err := doc.String("name"); err != nil {
		return err.Error()
	} else if v != "" {
		a.Name = v
	}
	var err error
	if a.Description, err = doc.String("description"); err != nil {
		return err.Error()
	}
	a.Description = strings.TrimSpace(a.Description)
	switch {
	case !nameRE.MatchString(a.Name):
		return fmt.Sprintf("the name %q is not an agent name (letters, digits, - and _, at most 64)", mdfile.OneLine(a.Name, 80))
	case isBuiltin(a.Name):
		return fmt.Sprintf("%q is the name of one of task's own agents (%s)", a.Name, strings.Join(Builtin, ", "))
	case a.Description == "":
		return `no "description" (task's description tells the model what each agent is for)`
	}
	if flags, order, ok := doc.Flags("tools"); ok {
		for _, k := range order {
			if !flags[k] {
				a.ToolsOff = append(a.ToolsOff, k)
			}
		}
	} else {
		tools, set, err := doc.List("tools")
		if err != nil {
			return err.Error()
		}
		if set {
			a.Tools = tools
		}
	}
	for _, t := range a.Tools {
		if strings.Contains(t, "(") {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the tool %q is left out: pid cannot give an agent a tool for some calls only", mdfile.OneLine(t, 80)))
		} else if strings.EqualFold(t, "Task") {
			a.Warnings = append(a.Warnings, `the tool "Task" is left out: a subagent cannot start subagents`)
		}
	}
	if a.Model, err = doc.String("model"); err != nil {
		return err.Error()
	}
	a.Model = strings.TrimSpace(a.Model)
	iso, err := doc.String("isolation")
	if err != nil {
		return err.Error()
	}
	switch strings.TrimSpace(iso) {
	case IsolationWorktree:
		a.Isolation = IsolationWorktree
	case "", "none":
	default:
		a.Warnings = append(a.Warnings, fmt.Sprintf(`"isolation: %s" is ignored: pid knows "worktree"`, mdfile.OneLine(iso, 40)))
	}
	a.Prompt = strings.TrimSpace(doc.Body)
	for _, k := range doc.Keys {
		switch k {
		case "name", "description", "tools", "model", "isolation":
		case "permissions", "permission", "permissionMode":
			a.Warnings = append(a.Warnings, fmt.Sprintf("%q is ignored: an agent's permissions are the parent session's, narrowed by its tools", k))
		default:
			a.Warnings = append(a.Warnings, fmt.Sprintf("%q is ignored: pid does not use it", mdfile.OneLine(k, 64)))
		}
	}
	return ""
}

// isBuiltin reports whether name is one of task's own agents.
func isBuiltin(name string) bool {
	for _, b := range Builtin {
		if strings.EqualFold(b, name) {
			return true
		}
	}
	return false
}

// TrustItems returns, for the trust question of the workspace folder folder, one item per
// agent of it left out because it is not trusted: "agent: NAME (PATH)", PATH relative to
// the folder.
func TrustItems(list []Agent, folder string) []string {
	var out []string
	for _, a := range list {
		if rel, err := filepath.Rel(folder, a.Path); a.Untrusted && err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, fmt.Sprintf("agent: %s (%s)", a.Name, filepath.ToSlash(rel)))
		}
	}
	return out
}

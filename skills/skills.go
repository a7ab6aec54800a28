// Package skills finds the person's skills: SKILL.md files in the folders the 2026 coding
// agents share (agentskills.io), one per folder, with a YAML front matter naming the skill
// and saying what it is for, and a body of instructions the model loads when it uses it.
//
// The entry point is Find, which lists every skill found (those left out too, with why);
// PromptBlock, ToolText and CommandText make the texts the session gives the model; Tool is
// the skill tool that gives one, and Commands the skills' /NAME commands.
package skills

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

// Source says whose a skill is: "workspace" or "user".
type Source = mdfile.Source

// The sources.
const (
	SourceWorkspace = mdfile.SourceWorkspace
	SourceUser      = mdfile.SourceUser
)

// FileName is a skill's file in its folder.
const FileName = "SKILL.md"

// MaxBytes caps SKILL.md: a longer one is left out.
const MaxBytes = mdfile.MaxBytes

// WorkspaceDirs are where a workspace folder's skills are, in the order that decides
// between two of one name.
var WorkspaceDirs = []string{".agents/skills", ".claude/skills", ".opencode/skills"}

// nameRE is what a skill's name may be: a command name (/NAME), so no path separators,
// dots or spaces, at most 64 characters.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Skill is one skill found, in skills/list's shape.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Path is the SKILL.md file, as found under its folder (links not resolved).
	Path   string `json:"path"`
	Source Source `json:"source"`
	// Ignored says why the skill is left out; "" for a skill in use.
	Ignored string `json:"ignored,omitempty"`
	// Warnings name what pid ignores in a skill in use (allowed-tools).
	Warnings []string `json:"warnings,omitempty"`

	// Dir is the skill's folder with its links resolved: the folder whose files the model
	// may read for this skill. "" for a skill left out before it was resolved.
	Dir string `json:"-"`
	// Body is SKILL.md after its front matter: the skill's instructions.
	Body string `json:"-"`
	// Untrusted is set for a skill left out because its workspace folder is not trusted
	// (TrustItems names those).
	Untrusted bool `json:"-"`
}

// Used reports whether the skill is in use (not left out).
func (s Skill) Used() bool { return s.Ignored == "" }

// UserDirs returns the person's skill folders, in the order that decides between two of
// one name: ~/.agents/skills, ~/.claude/skills, $XDG_CONFIG_HOME/pid/skills (see package
// xdg). One that cannot be named (no home folder) is left out.
func UserDirs() []string {
	var out []string
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".agents", "skills"), filepath.Join(home, ".claude", "skills"))
	}
	if dir, err := xdg.ConfigDir(); err == nil {
		out = append(out, filepath.Join(dir, "skills"))
	}
	return out
}

// Find returns the skills of the workspace folders (in their order; .agents/skills,
// .claude/skills, .opencode/skills of each) and of the person's folders userDirs (in their
// order: UserDirs), every one found: those in use, and those left out with Ignored saying
// why (an untrusted workspace folder's, so that the trust question can name them; a
// front matter that cannot be read or has no description; a file over MaxBytes; a skill
// folder or SKILL.md that is a link leading outside its workspace folder; a name another
// skill has first). Of two skills of one name the first in that order is used: the
// workspace's over the person's. notes are problems with whole folders (one that cannot
// be read, one with more than mdfile.MaxEntries entries, one leading outside its
// workspace folder), for the caller to report.
//
// Contract: safe for concurrent use; it reads the folders now (the caller calls it
// whenever it needs the list: a file added or changed counts at once). An untrusted
// folder's files are listed, never read. The person's own folders may be links to
// anywhere: they are the person's.
func Find(folders []Folder, userDirs []string) (list []Skill, notes []string) {
	for _, f := range folders {
		root := mdfile.RealRoot(f.Path)
		for _, d := range WorkspaceDirs {
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
		s := &list[i]
		if !s.Used() {
			continue
		}
		if j, ok := first[s.Name]; ok {
			s.Ignored = fmt.Sprintf("the %s skill %q of %s is used instead (it comes first)", list[j].Source, s.Name, list[j].Path)
			continue
		}
		first[s.Name] = i
	}
	return list, notes
}

// findIn returns the skills of one folder: each subfolder holding a SKILL.md (a folder
// whose name starts with a dot is none). root is the
// real workspace folder a workspace's skills must stay in ("" for the person's).
func findIn(dir string, source Source, root string, trusted bool) (list []Skill, notes []string) {
	real := dir
	if root != "" {
		r, err := mdfile.Contain(dir, root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, []string{fmt.Sprintf("skills: %s: %v; its skills are left out", dir, err)}
		}
		real = r
	}
	names, more, err := mdfile.Entries(real)
	if err != nil {
		return nil, []string{fmt.Sprintf("skills: %s cannot be read: %v", dir, err)}
	}
	if more {
		notes = append(notes, fmt.Sprintf("skills: %s holds more than %d entries; the others are left out", dir, mdfile.MaxEntries))
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		if s, ok := readSkill(filepath.Join(dir, name), name, source, root, trusted); ok {
			list = append(list, s)
		}
	}
	return list, notes
}

// readSkill reads the skill in folder (named name in its parent); ok is false when folder
// is no skill (not a folder, or no SKILL.md in it).
func readSkill(folder, name string, source Source, root string, trusted bool) (s Skill, ok bool) {
	s = Skill{Name: name, Path: filepath.Join(folder, FileName), Source: source}
	fi, err := os.Lstat(folder)
	if err != nil || !(fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
		return s, false
	}
	realDir, err := mdfile.Contain(folder, root)
	if errors.Is(err, mdfile.ErrOutside) {
		s.Ignored = "the skill's folder " + err.Error()
		return s, true
	}
	if err != nil {
		return s, false // a dangling link: no skill
	}
	if di, err := os.Stat(realDir); err != nil || !di.IsDir() {
		return s, false
	}
	if _, err := os.Lstat(filepath.Join(realDir, FileName)); err != nil {
		return s, false
	}
	file, err := mdfile.Contain(filepath.Join(realDir, FileName), root)
	switch {
	case errors.Is(err, mdfile.ErrOutside):
		s.Ignored = FileName + " " + err.Error()
		return s, true
	case err != nil:
		s.Ignored = fmt.Sprintf("%s cannot be read: %v", FileName, err)
		return s, true
	case !trusted:
		s.Ignored = fmt.Sprintf("the workspace folder %s is not trusted, so its skills are not used", root)
		s.Untrusted = true
		return s, true
	}
	s.Dir = realDir
	data, err := mdfile.Read(file)
	if err != nil {
		s.Ignored = fmt.Sprintf("%s cannot be read: %v", FileName, err)
		return s, true
	}
	doc, err := mdfile.Parse(data)
	if err != nil {
		s.Ignored = "bad front matter: " + err.Error()
		return s, true
	}
	if v, err := doc.String("name"); err != nil {
		s.Ignored = "bad front matter: " + err.Error()
		return s, true
	} else if v != "" {
		s.Name = v
	}
	if s.Description, err = doc.String("description"); err != nil {
		s.Ignored = "bad front matter: " + err.Error()
		return s, true
	}
	s.Description = strings.TrimSpace(s.Description)
	switch {
	case !nameRE.MatchString(s.Name):
		s.Ignored = fmt.Sprintf("bad front matter: the name %q is not a skill name (letters, digits, - and _, at most 64, as in /NAME)", mdfile.OneLine(s.Name, 80))
		return s, true
	case s.Description == "":
		s.Ignored = `bad front matter: no "description" (the model chooses a skill by its description)`
		return s, true
	}
	s.Body = strings.TrimSpace(doc.Body)
	for _, k := range doc.Keys {
		switch k {
		case "name", "description":
		case "allowed-tools":
			s.Warnings = append(s.Warnings, `"allowed-tools" is ignored: a skill never widens permissions (they come only from your settings)`)
		default:
			s.Warnings = append(s.Warnings, fmt.Sprintf("%q is ignored: pid does not use it", mdfile.OneLine(k, 64)))
		}
	}
	return s, true
}

// Lookup returns the skill in use named name.
func Lookup(list []Skill, name string) (Skill, bool) {
	for _, s := range list {
		if s.Used() && s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}

// TrustItems returns, for the trust question of the workspace folder folder, one item per
// skill of it left out because it is not trusted: "skill: NAME (PATH)", PATH relative to
// the folder.
func TrustItems(list []Skill, folder string) []string {
	var out []string
	for _, s := range list {
		if rel, err := filepath.Rel(folder, s.Path); s.Untrusted && err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, fmt.Sprintf("skill: %s (%s)", s.Name, filepath.ToSlash(rel)))
		}
	}
	return out
}

// This file makes the texts the model gets of skills: the system prompt's list, the skill
// tool's answer (the body and the files beside it), and a /NAME command's prompt.

package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/mdfile"
)

// Limits of the texts.
const (
	// MaxPromptSkills is how many skills the system prompt lists, each on a line; the
	// others are named by count.
	MaxPromptSkills = 50
	// maxPromptDescription caps a description on its line, in characters (agentskills.io
	// allows 1024).
	maxPromptDescription = 1024
	// MaxListedFiles is how many files beside SKILL.md the skill tool lists; the others
	// are named by count.
	MaxListedFiles = 200
	// MaxWalked is how many entries of a skill's folder (subfolders included) are looked
	// at for that list: past it the list stops, and says so.
	MaxWalked = 2000
)

// PromptBlock returns the system prompt's lines for the skills in use (the first
// MaxPromptSkills of list, in its order, one line each: name and description; the others
// named by count); "" when none is in use.
func PromptBlock(list []Skill) string {
	var b strings.Builder
	n, rest := 0, 0
	for _, s := range list {
		if !s.Used() {
			continue
		}
		if n == MaxPromptSkills {
			rest++
			continue
		}
		if n == 0 {
			b.WriteString("Skills: instructions for particular tasks, kept by the user. When a task matches a skill's description, call the skill tool with its name first and follow what it returns.\n")
		}
		n++
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, mdfile.OneLine(s.Description, maxPromptDescription))
	}
	if rest == 1 {
		b.WriteString("- and 1 more skill, not listed here.\n")
	} else if rest > 1 {
		fmt.Fprintf(&b, "- and %d more skills, not listed here.\n", rest)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Files returns the files in the skill's folder and its subfolders, SKILL.md excepted, as
// paths relative to the folder in name order, at most MaxListedFiles of them; more is how
// many others there are, and cut is set when the folder has more than MaxWalked entries
// (so that more does not count them all). Links are listed only when they lead to a file
// inside the skill's folder (the only files the model may read for it); .git folders are
// not looked into.
//
// Contract: safe for concurrent use; reads the folder now. A folder that cannot be read is
// an error.
func Files(s Skill) (files []string, more int, cut bool, err error) {
	if s.Dir == "" {
		return nil, 0, false, fmt.Errorf("the skill %q is not in use", s.Name)
	}
	walked := 0
	err = filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.Dir {
				return err
			}
			return nil // an unreadable subfolder lists nothing
		}
		if p == s.Dir {
			return nil
		}
		walked++
		if walked > MaxWalked {
			cut = true
			return fs.SkipAll
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(s.Dir, p)
		if rel == FileName {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			real, err := mdfile.Contain(p, s.Dir)
			if err != nil {
				return nil
			}
			if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		if len(files) == MaxListedFiles {
			more++
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, more, cut, err
}

// ToolText returns the skill tool's answer for a skill: its body, then its folder and the
// files beside SKILL.md (which the model reads with read).
//
// Contract: safe for concurrent use. It reads the skill's folder now (the body is the one
// Find read); a folder that cannot be listed still gives the body, saying so.
func ToolText(s Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<skill name=%q>\n%s\n</skill>\n\n", s.Name, s.Body)
	files, more, cut, err := Files(s)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "The skill's folder %s cannot be listed: %v", s.Dir, err)
	case len(files) == 0:
		fmt.Fprintf(&b, "The skill's folder %s holds no other files.", s.Dir)
	default:
		fmt.Fprintf(&b, "The skill's folder is %s. Its other files, which you can read with read when the instructions call for them (paths relative to that folder):\n", s.Dir)
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		switch {
		case cut:
			fmt.Fprintf(&b, "(The folder holds more than %d entries: the list stops there.)", MaxWalked)
		case more > 0:
			fmt.Fprintf(&b, "(and %d more files, not listed)", more)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CommandText returns the prompt of the /NAME command of a skill: its body, then the
// person's text after the command (a blank line between; the body alone when there is
// none).
func CommandText(s Skill, text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return s.Body
	}
	return s.Body + "\n\n" + text
}

// Package commands is pid's catalogue of slash commands: a prompt whose text starts with
// /NAME, NAME one of them, runs the command instead of being an ordinary prompt. Some are
// built in (Builtins: the session layer runs them); the others are the person's own prompt
// templates, Markdown files in $XDG_CONFIG_HOME/pid/commands/ and, once the workspace
// folder is trusted, in its .pid/commands/ (Folders). The package reads and checks those
// files, finds the command a prompt names, expands a template, and tells when the folders
// change (Watcher).
//
// The entry point is List.
//
// This file holds the catalogue: the commands, where their files live, and how they are read.
package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
)

// Info is one command as commands/list (and ACP's available_commands_update) shows it.
type Info struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Input, when set, says that the command takes text after its name, and what.
	Input *Input `json:"input,omitempty"`
}

// Input is a command's input: the text after its name.
type Input struct {
	Hint string `json:"hint"`
}

// Where a command comes from.
const (
	Builtin   = "builtin"
	User      = "user"
	Workspace = "workspace"
	// Skill is a skill's command (/NAME of a SKILL.md): the session layer adds those.
	Skill = "skill"
)

// Limits of the person's own commands.
const (
	// maxBytes caps a command file: a longer one is left out (and reported).
	maxBytes = 64 << 10
	// maxPerFolder caps how many files of one folder are read.
	maxPerFolder = 200
)

// nameRE is what a command's name may be: no path separators, no dots (so no traversal), no
// spaces; at most 64 characters.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Command is a command of the catalogue, with what running it needs.
type Command struct {
	Info
	// Source is Builtin, User, Workspace or Skill.
	Source string
	// Template is a prompt template's text (after its front matter); "" for a built-in one.
	Template string
	// Path is the template's file ("" for a built-in one).
	Path string
}

// Builtins are the built-in commands, in the order help lists them.
var Builtins = []Info{
	{Name: "compact", Description: "Summarize the conversation so far, to free the model's context", Input: &Input{Hint: "what the summary should focus on (optional)"}},
	{Name: "init", Description: "Have the model write AGENTS.md for this repository"},
	{Name: "review", Description: "Have the model review the uncommitted changes, or those since a base", Input: &Input{Hint: "base branch or commit (optional)"}},
	{Name: "plan", Description: "Show the current plan"},
	{Name: "mode", Description: "Show the mode, or switch to another", Input: &Input{Hint: "mode: default, acceptEdits, plan, auto"}},
	{Name: "model", Description: "Show the models, or switch to one", Input: &Input{Hint: "PROVIDER/ID"}},
	{Name: "mcp", Description: "Show the MCP servers and their status"},
	{Name: "rewind", Description: "Take files and conversation back to before the previous prompt"},
	{Name: "jobs", Description: "List the background jobs and whether they still run"},
	{Name: "help", Description: "List the commands"},
}

// UserFolder returns the folder of the person's own commands, $XDG_CONFIG_HOME/pid/commands
// (see xdg.ConfigDir); an error when no config folder is known.
func UserFolder() (string, error) {
	dir, err := xdg.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "commands"), nil
}

// WorkspaceFolder returns the folder of a workspace folder's own commands: ROOT/.pid/commands.
// Pure.
func WorkspaceFolder(root string) string { return filepath.Join(root, ".pid", "commands") }

// Reporter is told, once per key, about a command folder or file that is left out and why
// (the key is the folder or the file; the caller reports each key once). Contract: called
// synchronously by List; must not block for long.
type Reporter func(key, msg string)

// List returns the commands: the built-in ones, then the person's own in name order, read
// from disk now (so a file added or changed counts at once): the user's, and those of the
// workspace folder root when it is not "" (the caller passes it only once the folder is
// trusted). A file named like a built-in command is left out; a workspace's command
// replaces the user's of the same name. A workspace's commands must be regular files inside
// root, never symbolic links: a repository cannot make pid send the model a file from
// elsewhere. Bad names are skipped; folders that lead elsewhere, files over 64 KiB and files
// that cannot be read are skipped and reported.
//
// Contract: safe for concurrent use; it reads the command folders.
func List(root string, report Reporter) []Command {
	out := make([]Command, 0, len(Builtins)+8)
	for _, b := range Builtins {
		out = append(out, Command{Info: b, Source: Builtin})
	}
	own := map[string]Command{}
	if dir, err := UserFolder(); err == nil {
		for _, c := range read(dir, User, "", report) {
			own[c.Name] = c
		}
	}
	if root != "" {
		for _, c := range read(WorkspaceFolder(root), Workspace, root, report) {
			own[c.Name] = c
		}
	}
	names := make([]string, 0, len(own))
	for name := range own {
		if !slices.ContainsFunc(Builtins, func(b Info) bool { return b.Name == name }) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, own[name])
	}
	return out
}

// Infos returns the commands as a client sees them.
func Infos(list []Command) []Info {
	out := make([]Info, len(list))
	for i, c := range list {
		out[i] = c.Info
	}
	return out
}

// read reads the prompt templates NAME.md of dir (see List); root is the workspace folder
// they must stay in, "" for the user's.
func read(dir, source, root string, report Reporter) []Command {
	if root != "" {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil
		}
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil || (real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator))) {
			report(dir, fmt.Sprintf("commands: %s leads outside the workspace folder %s; its commands are left out", dir, root))
			return nil
		}
		dir = real
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			report(dir, fmt.Sprintf("commands: %s cannot be read: %v", dir, err))
		}
		return nil
	}
	var out []Command
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !nameRE.MatchString(name) {
			continue
		}
		if len(out) == maxPerFolder {
			report(dir, fmt.Sprintf("commands: %s holds more than %d commands; the others are left out", dir, maxPerFolder))
			break
		}
		path := filepath.Join(dir, e.Name())
		text, err := readFile(path, root != "")
		if err != nil {
			report(path, fmt.Sprintf("commands: %s is left out: %v", path, err))
			continue
		}
		c := Parse(name, text)
		c.Source, c.Path = source, path
		out = append(out, c)
	}
	return out
}

// errNotFile is readFile's error for a file that is not a regular file.
var errNotFile = errors.New("not a regular file")

// readFile reads a command file of at most maxBytes, without blocking (a FIFO is no
// file); noLinks refuses a symbolic link (a workspace's command).
func readFile(path string, noLinks bool) (string, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noLinks {
		flags |= safefile.NoFollow
	}
	f, err := os.OpenFile(path, flags, 0)
	if err == nil && noLinks {
		err = safefile.CheckNotLink(f, path)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", errors.New("a symbolic link (a workspace's commands must be files of its own)")
		}
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errNotFile
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxBytes {
		return "", fmt.Errorf("it is longer than %d KiB", maxBytes>>10)
	}
	return string(b), nil
}

// Parse reads a prompt template named name: an optional front matter between two "---"
// lines (description:, argument-hint:), then the template. Without a description, the
// template's first line is one (cut to 100 characters); a template that uses $ARGUMENTS
// takes input. Pure.
func Parse(name, text string) Command {
	c := Command{Info: Info{Name: name}}
	text = strings.TrimPrefix(text, "\ufeff")
	body := text
	if rest, ok := strings.CutPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "---\n"); ok {
		if front, after, found := strings.Cut(rest, "\n---"); found {
			if nl := strings.IndexByte(after, '\n'); nl >= 0 {
				after = after[nl+1:]
			} else {
				after = ""
			}
			body = after
			c.readFront(front)
		}
	}
	c.Template = strings.TrimSpace(body)
	if c.Description == "" {
		c.Description = firstLine(c.Template)
	}
	if c.Description == "" {
		c.Description = "/" + name
	}
	if c.Input == nil && strings.Contains(c.Template, "$ARGUMENTS") {
		c.Input = &Input{Hint: "arguments"}
	}
	return c
}

// readFront reads a front matter's description: and argument-hint: lines into c.
func (c *Command) readFront(front string) {
	sc := bufio.NewScanner(strings.NewReader(front))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		value = unquote(strings.TrimSpace(value))
		switch strings.TrimSpace(key) {
		case "description":
			c.Description = value
		case "argument-hint":
			if value != "" {
				c.Input = &Input{Hint: value}
			}
		}
	}
}

// firstLine is a template's first line of text, as a description: headings' marks taken off,
// cut to 100 characters; "" for a template without text.
func firstLine(template string) string {
	for _, line := range strings.Split(template, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, "# "))
		if strings.Trim(line, "-") == "" {
			continue // blank, or a front matter's fence
		}
		if r := []rune(line); len(r) > 100 {
			line = string(r[:100]) + "…"
		}
		return line
	}
	return ""
}

// unquote removes the quotes around a front-matter value.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// Same reports whether two command lists are the same (names, descriptions, inputs), for a
// face that tells its client when the list changed. Pure.
func Same(a, b []Info) bool {
	return slices.EqualFunc(a, b, func(x, y Info) bool {
		return x.Name == y.Name && x.Description == y.Description && (x.Input == nil) == (y.Input == nil) && (x.Input == nil || x.Input.Hint == y.Input.Hint)
	})
}

// Package protected is pid's one definition of the workspace paths from which other programs
// load commands: git, the editors, direnv, MCP clients, pid and other agents. A file there is
// code the person's own tools may run outside pid's sandbox, later and unasked, so the
// sandbox keeps these paths unchangeable, the modes ask before a write there (acceptEdits and
// auto included), and the check after each sandboxed command puts them back.
//
// The entry point is Match, which says whether a path, relative to a workspace folder, lies in
// one of them. Names matches the entries and says why each is there.
package protected

import (
	"path/filepath"
	"strings"
)

// Entry is one name of the list.
type Entry struct {
	// Name is the file or folder's name. It is matched as any component of a path (a
	// nested repository's .git, a subfolder's .vscode: a person may open that subfolder
	// later, and direnv loads the .envrc of any folder one enters).
	Name string
	// Dir says the entry is a folder: everything beneath it is protected too.
	Dir bool
	// Why says which program runs code from it.
	Why string
}

// Names are the entries, in the order docs/permissions.md lists them.
var Names = []Entry{
	{".git", true, "git runs commands named in config (core.fsmonitor, core.hooksPath, filters, aliases), in hooks/, and follows commondir, modules/ and worktrees/ to other repositories' configuration"},
	{".pid", true, "pid's own settings: hooks and language servers run from there once the folder is trusted, and commands and permissions come from there"},
	{".vscode", true, "VS Code runs tasks.json tasks (some on folder open) and launch.json, and settings.json names programs extensions start"},
	{".idea", true, "JetBrains IDEs run configurations and startup tasks from there"},
	{".zed", true, "Zed runs tasks.json tasks, and settings.json names the language servers it starts"},
	{".claude", true, "Claude Code runs the hooks of settings.json, and reads commands, skills and agents there"},
	{".agents", true, "agents that share it (Codex, opencode, Gemini CLI, Zed, pid) load skills from .agents/skills and agent definitions, with the tools and permissions they grant, from .agents/agents"},
	{".opencode", true, "opencode loads its agents (with their permissions), commands, skills and plugins (code it runs) from there"},
	{".devcontainer", true, "devcontainer.json's initializeCommand runs on the host when the folder is opened in a container"},
	{".envrc", false, "direnv runs it in the person's shell on entering the folder (once allowed)"},
	{".mcp.json", false, "MCP clients (Claude Code, other agents) start the servers it lists"},
}

// Match reports whether rel, a path relative to a workspace folder, lies
// in one of Names: one of its components is an entry's name (compared without regard to case,
// as a case-insensitive file system would: .GIT/config is .git/config there, and asking once
// too often on a case-sensitive one is harmless), and, for a file entry, it is the last
// component. It returns the entry matched first from the left.
func Match(rel string) (Entry, bool) {
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		if c == "" || c == "." {
			continue
		}
		for _, e := range Names {
			if !strings.EqualFold(c, e.Name) {
				continue
			}
			if e.Dir || i == len(parts)-1 {
				return e, true
			}
		}
	}
	return Entry{}, false
}

// IsName reports whether name, one path component, is an entry's name (any case).
func IsName(name string) bool {
	for _, e := range Names {
		if strings.EqualFold(name, e.Name) {
			return true
		}
	}
	return false
}

// List returns the entries' names joined with ", ", for messages.
func List() string {
	var b strings.Builder
	for i, e := range Names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Name)
		if e.Dir {
			b.WriteString("/")
		}
	}
	return b.String()
}

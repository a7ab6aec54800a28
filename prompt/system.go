// Package prompt makes what a session's model reads besides the conversation itself: pid's
// system prompt (its text is system.md, or subagent.md for a subagent, with the sections both
// share in shared.md) filled in with the session's facts, the instruction files (AGENTS.md)
// of the person and of the workspace, between marker lines no file can print, the notes that
// tell the model of a mode change, and the user message a person's text and content blocks
// make.
//
// The entry point is System.
//
// This file builds the system prompt. It is built once when the session is made or loaded,
// so every model call sends the same bytes and the provider's prompt cache holds; the
// instruction files are added at each model call (Instructions), the same bytes while they
// do not change; a mode change reaches the model as a note (ModeNote), not in the prompt.
package prompt

import (
	"embed"
	"os/exec"
	"runtime"
	"strings"
	"text/template"
	"time"
)

//go:embed shared.md system.md subagent.md
var files embed.FS

// templates are the prompt files parsed: "system.md" and "subagent.md", which use the
// sections shared.md defines. A template that does not parse fails every test of the
// package.
var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(files, "shared.md", "system.md", "subagent.md"))

// Facts are what pid's own system prompt, or a subagent's, says about where the session runs.
type Facts struct {
	// Cwd is the working folder, the root of relative paths.
	Cwd string
	// Folders are the workspace folders, listed only when they are more than the working
	// folder alone.
	Folders []string
	// OS is runtime.GOOS; Shell what the bash tool runs ("bash", else "sh").
	OS, Shell string
	// Date is the day the session started, in the local time zone: a date only, so the
	// prompt stays the same for the session's whole life.
	Date string
	// ToolSearch reports whether the session's MCP servers may have deferred tools, which
	// tool_search finds.
	ToolSearch bool
	// Nonce is the marker code (MarkerCode): the lines around instruction files carry it.
	Nonce string
	// CanChange reports whether the session has write and edit (an explore subagent has
	// not).
	CanChange bool
	// Mode and ModeSection are, for a subagent that can change files, its mode and what the
	// mode means (ModeText); the subagent's prompt says them, since its mode never changes.
	Mode, ModeSection string
}

// FactsFor returns the facts of a session in cwd with the workspace folders roots, started
// at started, whose MCP servers may have deferred tools when toolSearch is set; nonce is the
// marker code.
func FactsFor(nonce, cwd string, roots []string, started time.Time, toolSearch bool) Facts {
	f := Facts{Cwd: cwd, OS: runtime.GOOS, Shell: "sh", Date: started.Local().Format("Monday, 2 January 2006"), Nonce: nonce, CanChange: true, ToolSearch: toolSearch}
	if len(roots) > 1 || len(roots) == 1 && roots[0] != cwd {
		f.Folders = roots
	}
	if _, err := exec.LookPath("bash"); err == nil {
		f.Shell = "bash"
	}
	return f
}

// System returns a session's system prompt: replace when set, else pid's own filled in with
// f (the subagent's own when sub is set); then add, after a blank line, when set.
func System(replace, add string, f Facts, sub bool) string {
	p := replace
	if p == "" {
		name := "system.md"
		if sub {
			name = "subagent.md"
		}
		var b strings.Builder
		if err := templates.ExecuteTemplate(&b, name, f); err != nil {
			// The templates and Facts are all pid's: a field the text names and the struct
			// lacks is a bug every test catches.
			panic("prompt: " + name + ": " + err.Error())
		}
		p = strings.TrimRight(b.String(), "\n")
	}
	if strings.TrimSpace(add) != "" {
		p = strings.TrimRight(p, "\n") + "\n\n" + add
	}
	return p
}

// Join joins two parts of a prompt, each trimmed, with a blank line ("" parts left out).
func Join(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

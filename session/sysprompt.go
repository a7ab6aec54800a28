// This file builds the system prompt a session sends its model: pid's own (the text is
// prompt/system.md, filled in with the session's folders, OS, shell and start date), a
// subagent's own (prompt/subagent.md, which says that the parent, not a person, reads its
// last message), or the session's systemPrompt in their place, with appendSystemPrompt after
// any. It is built once when the session is made or loaded, so every model call of the
// session sends the same bytes and the provider's prompt cache holds. At each model call the
// session adds its instruction files (instructions.go: the same bytes while the files do not
// change). The mode is not in it: a mode change reaches the model as a note in the next
// message (modenote.go), so the prompt and the tools stay the same bytes across modes.

package session

import (
	"embed"
	"os/exec"
	"runtime"
	"strings"
	"text/template"
	"time"

	"github.com/pid-agent/pid/mcp"
)

//go:embed prompt/shared.md prompt/system.md prompt/subagent.md
var promptFiles embed.FS

// promptTemplates are prompt/*.md parsed: "system.md" and "subagent.md", which use the
// sections shared.md defines. A template that does not parse fails every test of the
// package.
var promptTemplates = template.Must(template.New("").Option("missingkey=error").ParseFS(promptFiles, "prompt/shared.md", "prompt/system.md", "prompt/subagent.md"))

// promptFacts is what pid's own system prompt, or a subagent's, says about where the session
// runs.
type promptFacts struct {
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
	// Nonce is the host's marker code (markers.go): the lines around instruction files
	// carry it.
	Nonce string
	// CanChange reports whether the session has write and edit (an explore subagent has
	// not).
	CanChange bool
	// Mode and ModeSection are, for a subagent that can change files, its mode and what the
	// mode means (modeText); the subagent's prompt says them, since its mode never changes.
	Mode, ModeSection string
}

// factsFor returns the facts of a session in cwd with the workspace folders roots, started
// at started, whose MCP servers are servers; nonce is the host's marker code.
func factsFor(nonce, cwd string, roots []string, started time.Time, servers map[string]mcp.ServerConfig) promptFacts {
	f := promptFacts{Cwd: cwd, OS: runtime.GOOS, Shell: "sh", Date: started.Local().Format("Monday, 2 January 2006"), Nonce: nonce, CanChange: true}
	if len(roots) > 1 || len(roots) == 1 && roots[0] != cwd {
		f.Folders = roots
	}
	if _, err := exec.LookPath("bash"); err == nil {
		f.Shell = "bash"
	}
	for _, c := range servers {
		if c.Load != mcp.LoadEager {
			f.ToolSearch = true
		}
	}
	return f
}

// systemPrompt returns the system prompt of a session configured by cfg: cfg.SystemPrompt
// when set, else pid's own filled in with f (the subagent's own when sub is set); then
// cfg.AppendSystemPrompt, after a blank line, when set.
func systemPrompt(cfg Config, f promptFacts, sub bool) string {
	p := cfg.SystemPrompt
	if p == "" {
		name := "system.md"
		if sub {
			name = "subagent.md"
		}
		var b strings.Builder
		if err := promptTemplates.ExecuteTemplate(&b, name, f); err != nil {
			// The templates and promptFacts are all pid's: a field the text names and the
			// struct lacks is a bug every test catches.
			panic("session: prompt/" + name + ": " + err.Error())
		}
		p = strings.TrimRight(b.String(), "\n")
	}
	if strings.TrimSpace(cfg.AppendSystemPrompt) != "" {
		p = strings.TrimRight(p, "\n") + "\n\n" + cfg.AppendSystemPrompt
	}
	return p
}

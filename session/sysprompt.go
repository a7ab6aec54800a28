// This file builds the system prompt a session sends its model: pid's own (the text is
// prompt/system.md, filled in with the session's folders, OS, shell and start date), or the
// session's systemPrompt in its place, with appendSystemPrompt after either. It is built
// once when the session is made or loaded, so every model call of the session sends the
// same bytes and the provider's prompt cache holds. At each model call the session adds its
// instruction files (instructions.go: the same bytes while the files do not change), then,
// last, the section of a mode other than default (modePrompt): a fixed text per mode, so
// the bytes change only when the mode does, and a mode change leaves what is before it.

package session

import (
	_ "embed"
	"os/exec"
	"runtime"
	"strings"
	"text/template"
	"time"

	"github.com/pid-agent/pid/mcp"
)

//go:embed prompt/system.md
var defaultPromptText string

// defaultPromptTemplate is prompt/system.md parsed; a template that does not parse fails
// every test of the package.
var defaultPromptTemplate = template.Must(template.New("system.md").Option("missingkey=error").Parse(defaultPromptText))

// promptFacts is what pid's own system prompt says about where the session runs. Later
// sections (the mode, bash's sandbox, the instruction files, the plan) add their facts here.
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
}

// factsFor returns the facts of a session in cwd with the workspace folders roots, started
// at started, whose MCP servers are servers.
func factsFor(cwd string, roots []string, started time.Time, servers map[string]mcp.ServerConfig) promptFacts {
	f := promptFacts{Cwd: cwd, OS: runtime.GOOS, Shell: "sh", Date: started.Local().Format("Monday, 2 January 2006")}
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
// when set, else pid's own filled in with f; then cfg.AppendSystemPrompt, after a blank
// line, when set.
func systemPrompt(cfg Config, f promptFacts) string {
	p := cfg.SystemPrompt
	if p == "" {
		var b strings.Builder
		if err := defaultPromptTemplate.Execute(&b, f); err != nil {
			// The template and promptFacts are both pid's: a field the text names and the
			// struct lacks is a bug every test catches.
			panic("session: prompt/system.md: " + err.Error())
		}
		p = b.String()
	}
	if strings.TrimSpace(cfg.AppendSystemPrompt) != "" {
		p = strings.TrimRight(p, "\n") + "\n\n" + cfg.AppendSystemPrompt
	}
	return p
}

// modePrompt returns the section a session's system prompt ends with in mode: "" for
// default, else a fixed text per mode (the same bytes at every call in one mode).
func modePrompt(mode string) string {
	switch mode {
	case ModePlan:
		return "\n\n# Mode: plan\nYou are in plan mode: write and edit are refused, and bash runs in a read-only sandbox. Explore and read, then call exit_plan_mode with your plan; the person approves it (and you can make the changes) or tells you what to change."
	case ModeAcceptEdits:
		return "\n\n# Mode: acceptEdits\nWrites and edits inside the workspace run without asking; bash commands ask the person first."
	case ModeAuto:
		return "\n\n# Mode: auto\nWrites and edits inside the workspace, and bash commands in the sandbox, run without asking. A command that needs more than the sandbox gives may be called again with unsandboxed: true and a justification: the person is asked."
	case ModeBypass:
		return "\n\n# Mode: bypassPermissions\nNothing asks the person first: be careful with commands that delete or overwrite things."
	}
	return ""
}

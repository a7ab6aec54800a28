// This file turns a prompt into the command it names, and a command into what it sends the
// model (PromptText): a template with its arguments, /init's and /review's prompts, and
// /help's list.

package commands

import (
	"fmt"
	"regexp"
	"strings"
)

// Call is a prompt that names one of the catalogue's commands.
type Call struct {
	// Name is the command's name; Args the text after it, trimmed.
	Name, Args string
	Command    Command
}

// Find returns the command a prompt whose text (its first block's) is text runs: it starts
// with /NAME, NAME one of list's commands, followed by the end of the text or white space.
// Any other text is an ordinary prompt ("/usr/bin is empty" names no command). Pure.
func Find(list []Command, text string) (Call, bool) {
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return Call{}, false
	}
	name, args := rest, ""
	if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
		name, args = rest[:i], strings.TrimSpace(rest[i:])
	}
	if !nameRE.MatchString(name) {
		return Call{}, false
	}
	for _, c := range list {
		if c.Name == name {
			return Call{Name: name, Args: args, Command: c}, true
		}
	}
	return Call{}, false
}

// Expand puts args in a template: in place of every $ARGUMENTS, or after the text (a blank
// line between) when it has none. Pure.
func Expand(template, args string) string {
	if strings.Contains(template, "$ARGUMENTS") {
		return strings.ReplaceAll(template, "$ARGUMENTS", args)
	}
	if args == "" {
		return template
	}
	return template + "\n\n" + args
}

// PromptText returns what a command sends the model when that is the command's own text: a
// person's command's template with the arguments put in (Expand), /init's and /review's
// prompts. false for the others: a skill's (its body is read as it is when it runs) and the
// built-in commands that answer by themselves. Pure.
func PromptText(call Call) (string, bool) {
	switch call.Command.Source {
	case User, Workspace:
		return Expand(call.Command.Template, call.Args), true
	case Skill:
		return "", false
	}
	switch call.Name {
	case "init":
		return InitPrompt, true
	case "review":
		return ReviewPrompt(call.Args), true
	}
	return "", false
}

// InitPrompt is what /init sends the model.
const InitPrompt = `Write an AGENTS.md file at the root of this repository: the instructions a coding agent needs to work here.

First look at the repository with your tools: its layout, build files, README, CI configuration, and any existing AGENTS.md, CLAUDE.md, .cursorrules or .github/copilot-instructions.md (keep what is still true in them). Then write AGENTS.md, short and concrete, with:
- what the project is, in two or three sentences;
- how to build, run, lint and test it (the exact commands, and how to run a single test);
- the layout: which folders hold what;
- the conventions the code follows (style, naming, error handling, tests) that are not obvious from a single file;
- anything that surprises newcomers (generated files, required environment, slow or flaky steps).

Do not invent commands: give only those you found in the repository. If AGENTS.md already exists, improve it rather than starting over.`

// ReviewPrompt is what /review sends the model: a review of the uncommitted changes, or of
// those since base. Pure.
func ReviewPrompt(base string) string {
	what := "the uncommitted changes of this repository: `git status`, `git diff HEAD` (staged and unstaged), and the files git does not track yet"
	if base != "" {
		what = fmt.Sprintf("the changes since %s: `git diff %s` (the committed ones since then and those not committed yet), `git log --oneline %s..HEAD`, and the files git does not track yet", quoteArg(base), quoteArg(base), quoteArg(base))
	}
	return "Review " + what + `.

Read the changed code, and enough of the code around it to judge it. Change nothing: this is a review. Report, most important first:
- bugs: wrong behaviour, unhandled errors or edge cases, races, leaks, security problems;
- missing or weak tests for what changed;
- anything else worth fixing (clarity, names, duplication), briefly.
For each point name the file and line, say what is wrong and how to fix it. If you find nothing that matters, say so.`
}

// plainArg is a base that needs no quoting.
var plainArg = regexp.MustCompile(`^[A-Za-z0-9._/@^~-]+$`)

// quoteArg quotes a base for a shell command when it holds anything but plain characters.
func quoteArg(s string) string {
	if plainArg.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Help is /help's text: the commands, with their input, description and source. Pure.
func Help(list []Command) string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range list {
		fmt.Fprintf(&b, "\n- `/%s`", c.Name)
		if c.Input != nil {
			fmt.Fprintf(&b, " [%s]", c.Input.Hint)
		}
		fmt.Fprintf(&b, ": %s", c.Description)
		switch c.Source {
		case User:
			b.WriteString(" (yours)")
		case Workspace:
			b.WriteString(" (this workspace)")
		case Skill:
			b.WriteString(" (skill)")
		}
	}
	return b.String()
}

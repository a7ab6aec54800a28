// This file holds the session's commands: a prompt whose text starts with /NAME, NAME one of
// the commands the session lists, runs that command instead of being an ordinary prompt.
// Some are built in (compact, init, review, plan, mode, model, mcp, rewind, help); the others
// are the person's own prompt templates, Markdown files in $XDG_CONFIG_HOME/pid/commands/
// and, once the workspace folder is trusted, in its .pid/commands/. Commands that do not
// call the model answer with a text for the person that never enters the model's context.

package session

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/store"
)

// CommandInfo is one command as commands/list (and ACP's available_commands_update) shows it.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Input, when set, says that the command takes text after its name, and what.
	Input *CommandInput `json:"input,omitempty"`
}

// CommandInput is a command's input: the text after its name.
type CommandInput struct {
	Hint string `json:"hint"`
}

// Where a command comes from.
const (
	commandBuiltin   = "builtin"
	commandUser      = "user"
	commandWorkspace = "workspace"
)

// Limits of the person's own commands.
const (
	// maxCommandBytes caps a command file: a longer one is left out (and reported).
	maxCommandBytes = 64 << 10
	// maxCommands caps how many files of one folder are read.
	maxCommands = 200
)

// commandNameRE is what a command's name may be: no path separators, no dots (so no
// traversal), no spaces; at most 64 characters.
var commandNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// command is a command the session has now.
type command struct {
	CommandInfo
	source string
	// template is a prompt template's text (after its front matter); "" for built-in ones.
	template string
	// path is the template's file.
	path string
}

// builtinCommands are the built-in commands, in the order help lists them.
var builtinCommands = []CommandInfo{
	{Name: "compact", Description: "Summarize the conversation so far, to free the model's context", Input: &CommandInput{Hint: "what the summary should focus on (optional)"}},
	{Name: "init", Description: "Have the model write AGENTS.md for this repository"},
	{Name: "review", Description: "Have the model review the uncommitted changes, or those since a base", Input: &CommandInput{Hint: "base branch or commit (optional)"}},
	{Name: "plan", Description: "Show the current plan"},
	{Name: "mode", Description: "Show the mode, or switch to another", Input: &CommandInput{Hint: "mode: default, acceptEdits, plan, auto"}},
	{Name: "model", Description: "Show the models, or switch to one", Input: &CommandInput{Hint: "PROVIDER/ID"}},
	{Name: "mcp", Description: "Show the MCP servers and their status"},
	{Name: "rewind", Description: "Take files and conversation back to before the previous prompt"},
	{Name: "help", Description: "List the commands"},
}

// Commands returns the session's commands: the built-in ones, then the person's own in
// name order (read from disk now, so a file added or changed counts at once). A file named
// like a built-in command is left out; a workspace's command replaces the user's of the same
// name.
//
// Contract: safe for concurrent use; it reads the command folders.
func (s *Session) Commands() []CommandInfo {
	all := s.commands()
	out := make([]CommandInfo, len(all))
	for i, c := range all {
		out[i] = c.CommandInfo
	}
	return out
}

// commands returns the session's commands with what running them needs.
func (s *Session) commands() []command {
	out := make([]command, 0, len(builtinCommands)+8)
	for _, b := range builtinCommands {
		out = append(out, command{CommandInfo: b, source: commandBuiltin})
	}
	own := map[string]command{}
	if dir, err := xdg.ConfigDir(); err == nil {
		for _, c := range s.readCommands(filepath.Join(dir, "commands"), commandUser, "") {
			own[c.Name] = c
		}
	}
	if root := s.root(); s.host.commandsTrusted(root) {
		for _, c := range s.readCommands(filepath.Join(root, ".pid", "commands"), commandWorkspace, root) {
			own[c.Name] = c
		}
	}
	names := make([]string, 0, len(own))
	for name := range own {
		if !slices.ContainsFunc(builtinCommands, func(b CommandInfo) bool { return b.Name == name }) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, own[name])
	}
	return out
}

// commandsTrusted reports whether a workspace folder's own commands may be used: it is one
// of the host's workspace folders and the person trusts it. A folder that is not one of them
// has no settings pid reads, and its commands are not read either.
func (h *Host) commandsTrusted(root string) bool {
	return h.loader != nil && slices.Contains(h.roots, root) && h.loader.Trusted(root)
}

// readCommands reads the prompt templates NAME.md of dir. A workspace's (root set) must be
// regular files inside root, never symbolic links: a repository cannot make pid send the
// model a file from elsewhere. Bad names are skipped; files over maxCommandBytes, and
// files that cannot be read, are skipped and reported once.
func (s *Session) readCommands(dir, source, root string) []command {
	if root != "" {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil
		}
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil || (real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator))) {
			s.host.reportOnce(dir, nil, fmt.Sprintf("commands: %s leads outside the workspace folder %s; its commands are left out", dir, root))
			return nil
		}
		dir = real
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.host.reportOnce(dir, nil, fmt.Sprintf("commands: %s cannot be read: %v", dir, err))
		}
		return nil
	}
	var out []command
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !commandNameRE.MatchString(name) {
			continue
		}
		if len(out) == maxCommands {
			s.host.reportOnce(dir, nil, fmt.Sprintf("commands: %s holds more than %d commands; the others are left out", dir, maxCommands))
			break
		}
		path := filepath.Join(dir, e.Name())
		text, err := readCommandFile(path, root != "")
		if err != nil {
			s.host.reportOnce(path, nil, fmt.Sprintf("commands: %s is left out: %v", path, err))
			continue
		}
		c := parseCommand(name, text)
		c.source, c.path = source, path
		out = append(out, c)
	}
	return out
}

// errCommandNotFile is readCommandFile's error for a file that is not a regular file.
var errCommandNotFile = errors.New("not a regular file")

// readCommandFile reads a command file of at most maxCommandBytes; noLinks refuses a
// symbolic link (a workspace's command).
func readCommandFile(path string, noLinks bool) (string, error) {
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
		return "", errCommandNotFile
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCommandBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxCommandBytes {
		return "", fmt.Errorf("it is longer than %d KiB", maxCommandBytes>>10)
	}
	return string(b), nil
}

// parseCommand reads a prompt template: an optional front matter between two "---" lines
// (description:, argument-hint:), then the template. Without a description, the template's
// first line is one (cut to 100 characters).
func parseCommand(name, text string) command {
	c := command{CommandInfo: CommandInfo{Name: name}}
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
						c.Input = &CommandInput{Hint: value}
					}
				}
			}
		}
	}
	c.template = strings.TrimSpace(body)
	if c.Description == "" {
		for _, line := range strings.Split(c.template, "\n") {
			line = strings.TrimSpace(strings.TrimLeft(line, "# "))
			if strings.Trim(line, "-") == "" {
				continue // blank, or a front matter's fence
			}
			if r := []rune(line); len(r) > 100 {
				line = string(r[:100]) + "…"
			}
			c.Description = line
			break
		}
	}
	if c.Description == "" {
		c.Description = "/" + name
	}
	if c.Input == nil && strings.Contains(c.template, "$ARGUMENTS") {
		c.Input = &CommandInput{Hint: "arguments"}
	}
	return c
}

// unquote removes the quotes around a front-matter value.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// CommandCall is a prompt that names one of the session's commands.
type CommandCall struct {
	// Name is the command's name; Args the text after it, trimmed.
	Name, Args string
	cmd        command
}

// FindCommand returns the command a prompt runs: its first content block is text that
// starts with /NAME, NAME one of the session's commands now, followed by the end of the
// text or white space. Any other prompt is ordinary ("/usr/bin is empty" names no command).
//
// Contract: safe for concurrent use; it reads the command folders.
func (s *Session) FindCommand(msg llm.Message) (CommandCall, bool) {
	if len(msg.Content) == 0 || msg.Content[0].Type != llm.ContentText {
		return CommandCall{}, false
	}
	rest, ok := strings.CutPrefix(msg.Content[0].Text, "/")
	if !ok {
		return CommandCall{}, false
	}
	name, args := rest, ""
	if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
		name, args = rest[:i], strings.TrimSpace(rest[i:])
	}
	if !commandNameRE.MatchString(name) {
		return CommandCall{}, false
	}
	for _, c := range s.commands() {
		if c.Name == name {
			return CommandCall{Name: name, Args: args, cmd: c}, true
		}
	}
	return CommandCall{}, false
}

// CommandResult is what running a command did.
type CommandResult struct {
	Name string
	// Output is the text for the person (commands that do not call the model, and
	// compact's outcome); it never enters the model's context. "" when the model ran.
	Output string
	// IsError is set when the command could not do what it was asked (Output says why).
	IsError bool
	// Prompted is set when the command sent the model a prompt: Result is that run's.
	Prompted bool
	Result   loop.Result
}

// RunCommand runs a command found by FindCommand; msg is the prompt that named it. init,
// review and the person's own commands send the model a prompt made from their template, as
// an ordinary prompt (its tools, approvals and checkpoint); the others answer with Output,
// and nothing of them enters the transcript. A command's failure is Output with IsError,
// not an error: err is only what Prompt itself returns (a session without a model, say).
//
// Contract: the session is claimed by Begin (the face's prompt), as for Prompt.
func (s *Session) RunCommand(ctx context.Context, call CommandCall, msg llm.Message) (CommandResult, error) {
	out := CommandResult{Name: call.Name}
	var text string
	switch call.cmd.source {
	case commandUser, commandWorkspace:
		text = expandTemplate(call.cmd.template, call.Args)
	default:
		switch call.Name {
		case "init":
			text = initPrompt
		case "review":
			text = reviewPrompt(call.Args)
		case "compact":
			out.Output, out.IsError = s.compactCommand(ctx, call.Args)
			return out, nil
		case "plan":
			out.Output = s.planCommand()
			return out, nil
		case "mode":
			out.Output, out.IsError = s.modeCommand(call.Args)
			return out, nil
		case "model":
			out.Output, out.IsError = s.modelCommand(call.Args)
			return out, nil
		case "mcp":
			out.Output = s.mcpCommand()
			return out, nil
		case "rewind":
			out.Output, out.IsError = s.rewindCommand(ctx)
			return out, nil
		default: // help
			out.Output = s.helpCommand()
			return out, nil
		}
	}
	m := msg
	m.Content = slices.Clone(msg.Content)
	m.Content[0] = llm.Text(text)
	res, err := s.Prompt(ctx, []llm.Message{m})
	out.Prompted, out.Result = true, res
	return out, err
}

// expandTemplate puts args in a template: in place of every $ARGUMENTS, or after the text
// (a blank line between) when it has none.
func expandTemplate(template, args string) string {
	if strings.Contains(template, "$ARGUMENTS") {
		return strings.ReplaceAll(template, "$ARGUMENTS", args)
	}
	if args == "" {
		return template
	}
	return template + "\n\n" + args
}

// initPrompt is what /init sends the model.
const initPrompt = `Write an AGENTS.md file at the root of this repository: the instructions a coding agent needs to work here.

First look at the repository with your tools: its layout, build files, README, CI configuration, and any existing AGENTS.md, CLAUDE.md, .cursorrules or .github/copilot-instructions.md (keep what is still true in them). Then write AGENTS.md, short and concrete, with:
- what the project is, in two or three sentences;
- how to build, run, lint and test it (the exact commands, and how to run a single test);
- the layout: which folders hold what;
- the conventions the code follows (style, naming, error handling, tests) that are not obvious from a single file;
- anything that surprises newcomers (generated files, required environment, slow or flaky steps).

Do not invent commands: give only those you found in the repository. If AGENTS.md already exists, improve it rather than starting over.`

// reviewPrompt is what /review sends the model: a review of the uncommitted changes, or of
// those since base.
func reviewPrompt(base string) string {
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

// compactCommand compacts the conversation now (as session/compact does), focused on
// focus; it says what became of it.
func (s *Session) compactCommand(ctx context.Context, focus string) (string, bool) {
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	res, err := s.compactNow(ctx, s.agent.Transcript(), ReasonManual, focus)
	if err != nil {
		return "The conversation was not compacted: " + err.Error(), true
	}
	return fmt.Sprintf("Compacted the conversation: it was about %d tokens; the model now sees a summary of the older messages and the recent ones as they were.", res.TokensBefore), false
}

// planCommand shows the plan (Plan: the last todo_write of the transcript that succeeded).
func (s *Session) planCommand() string {
	entries, ok := s.Plan()
	if !ok {
		return "No plan yet."
	}
	if len(entries) == 0 {
		return "The plan is empty."
	}
	var b strings.Builder
	b.WriteString("Plan:")
	for _, t := range entries {
		mark := "[ ]"
		switch t.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[~]"
		}
		fmt.Fprintf(&b, "\n- %s %s", mark, t.Content)
		if t.Priority == "high" || t.Priority == "low" {
			fmt.Fprintf(&b, " (%s priority)", t.Priority)
		}
	}
	return b.String()
}

// modeCommand shows the modes, or switches to the mode id.
func (s *Session) modeCommand(id string) (string, bool) {
	m := s.Modes()
	if id == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "Mode: %s. The modes (`/mode NAME` switches):\n", m.CurrentModeID)
		for _, a := range m.AvailableModes {
			current := ""
			if a.ID == m.CurrentModeID {
				current = " (current)"
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", a.ID, current, a.Description)
		}
		return strings.TrimSuffix(b.String(), "\n"), false
	}
	if err := s.SetMode(id); err != nil {
		ids := make([]string, len(m.AvailableModes))
		for i, a := range m.AvailableModes {
			ids[i] = a.ID
		}
		return fmt.Sprintf("No mode %q: the session is offered %s.", id, strings.Join(ids, ", ")), true
	}
	for _, a := range m.AvailableModes {
		if a.ID == id {
			return fmt.Sprintf("Mode: %s. %s", id, a.Description), false
		}
	}
	return "Mode: " + id + ".", false
}

// modelCommand shows the models, or switches to PROVIDER/ID, one of them.
func (s *Session) modelCommand(arg string) (string, bool) {
	list, err := s.host.ModelList(s.id, nil)
	if err != nil {
		return "The models cannot be listed: " + err.Error(), true
	}
	value := func(m ModelInfo) string { return m.Provider + "/" + m.ID }
	if arg == "" {
		var b strings.Builder
		if list.Current != nil {
			fmt.Fprintf(&b, "Model: %s.", value(*list.Current))
		} else {
			b.WriteString("The session has no model.")
		}
		if len(list.Models) == 0 {
			b.WriteString(` No other model is listed: add them to "models" in the settings.`)
			return b.String(), false
		}
		b.WriteString(" The models (`/model PROVIDER/ID` switches):")
		for _, m := range list.Models {
			fmt.Fprintf(&b, "\n- %s", value(m))
			if m.Name != "" {
				fmt.Fprintf(&b, " (%s)", m.Name)
			}
			if list.Current != nil && value(m) == value(*list.Current) {
				b.WriteString(", current")
			}
		}
		return b.String(), false
	}
	known := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		known = append(known, value(m))
		if value(m) != arg {
			continue
		}
		raw, _ := json.Marshal(map[string]string{"provider": m.Provider, "id": m.ID})
		if err := s.SetModel(raw); err != nil {
			return fmt.Sprintf("The model stays as it was: %v", err), true
		}
		name := arg
		if m.Name != "" {
			name += " (" + m.Name + ")"
		}
		return "Model: " + name + ", from the next model call on.", false
	}
	if len(known) == 0 {
		return fmt.Sprintf(`No model %q: the settings list no models (add them to "models" in the settings).`, arg), true
	}
	return fmt.Sprintf("No model %q among the settings' models: %s.", arg, strings.Join(known, ", ")), true
}

// mcpCommand shows the session's MCP servers and their status.
func (s *Session) mcpCommand() string {
	servers := s.MCPServers()
	if len(servers) == 0 {
		return "The session has no MCP servers."
	}
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, srv := range servers {
		fmt.Fprintf(&b, "\n- %s: %s", srv.Name, srv.Status)
		if srv.Status == "ready" {
			fmt.Fprintf(&b, ", %d tools", srv.Tools)
		}
		if srv.Error != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(srv.Error))
		}
	}
	return b.String()
}

// helpCommand lists the commands.
func (s *Session) helpCommand() string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range s.commands() {
		fmt.Fprintf(&b, "\n- `/%s`", c.Name)
		if c.Input != nil {
			fmt.Fprintf(&b, " [%s]", c.Input.Hint)
		}
		fmt.Fprintf(&b, ": %s", c.Description)
		switch c.source {
		case commandUser:
			b.WriteString(" (yours)")
		case commandWorkspace:
			b.WriteString(" (this workspace)")
		}
	}
	return b.String()
}

// rewindCommand takes files and conversation back to before the previous prompt: a rewind
// ("both") to the checkpoint of the last prompt of the conversation as it is now.
func (s *Session) rewindCommand(ctx context.Context) (string, bool) {
	rec := s.checkpts.rec
	if rec == nil {
		return "Nothing can be rewound: " + strings.TrimPrefix(errNoCheckpoints.Error(), ErrUnavailable.Error()+": "), true
	}
	if s.host.files == nil {
		return "Nothing can be rewound: the session is not saved, so its conversation cannot go back.", true
	}
	loaded, err := s.host.files.Read(s.id)
	if errors.Is(err, store.ErrNotFound) {
		return "Nothing to rewind: no prompt has run in this conversation yet.", false
	}
	if err != nil {
		return "Nothing was rewound: the session file cannot be read: " + err.Error(), true
	}
	id, prompt := lastPromptCheckpoint(loaded.Branch)
	if id == "" || !rec.Has(id) {
		return "Nothing to rewind: no prompt of this conversation has a checkpoint.", false
	}
	s.checkpts.mu.Lock()
	mark := s.checkpts.marks[id]
	s.checkpts.mu.Unlock()
	if mark == "" {
		return "Nothing was rewound: the session file does not have the previous prompt's place.", true
	}
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	res, err := s.rewind(ctx, rec, id, mark, "both", false)
	if err != nil {
		return "The rewind failed: " + err.Error(), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound to before the prompt %q: the conversation goes on from there", oneLine(prompt))
	switch n := len(res.Restored) + len(res.Removed); n {
	case 0:
		b.WriteString("; no file needed restoring.")
	case 1:
		b.WriteString("; 1 file restored.")
	default:
		fmt.Fprintf(&b, "; %d files restored.", n)
	}
	for _, p := range res.Removed {
		fmt.Fprintf(&b, "\n- removed %s", p)
	}
	for _, p := range res.Restored {
		fmt.Fprintf(&b, "\n- restored %s", p)
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(&b, "\n- left as it is: %s (%s)", sk.Path, sk.Reason)
	}
	if len(res.Skipped) > 0 {
		b.WriteString("\nFiles left as they are can be restored with session/rewind and force.")
	}
	fmt.Fprintf(&b, "\nTo undo this rewind, rewind to checkpoint %s.", res.SafetyCheckpointID)
	return b.String(), false
}

// lastPromptCheckpoint returns the checkpoint of the last prompt on a session file's
// branch: the last checkpoint mark (not a rewind's own) that a user message follows on the
// branch. A mark a rewind went back to is on the branch with no message after it.
func lastPromptCheckpoint(branch []store.Entry) (id, prompt string) {
	var cand *store.Checkpoint
	for _, e := range branch {
		switch {
		case e.Kind == store.KindCheckpoint && e.Checkpoint != nil && e.Checkpoint.Safety == "":
			cand = e.Checkpoint
		case e.Kind == store.KindMessage && e.Message != nil && e.Message.Role == llm.RoleUser && cand != nil:
			id, prompt = cand.ID, cand.Prompt
			cand = nil
		}
	}
	return id, prompt
}

// SameCommands reports whether two command lists are the same (names, descriptions,
// inputs), for a face that tells its client when the list changed.
func SameCommands(a, b []CommandInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Description != y.Description || (x.Input == nil) != (y.Input == nil) || (x.Input != nil && x.Input.Hint != y.Input.Hint) {
			return false
		}
	}
	return true
}

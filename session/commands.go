// This file runs the session's commands (package commands holds the catalogue): a prompt
// whose text starts with /NAME, NAME one of the commands the session lists, runs that
// command instead of being an ordinary prompt. The built-in ones that call the model (init,
// review) and the person's own prompt templates send it a prompt; the others answer with a
// text for the person that never enters the model's context.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pid-agent/pid/commands"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/skills"
	"github.com/pid-agent/pid/store"
)

// CommandInfo is one command as commands/list (and ACP's available_commands_update) shows it.
type CommandInfo = commands.Info

// CommandCall is a prompt that names one of the session's commands (FindCommand): its Name
// and Args.
type CommandCall = commands.Call

// Commands returns the session's commands: the built-in ones, then the person's own in
// name order (read from disk now, so a file added or changed counts at once; see
// commands.List), its workspace folder's once that folder is trusted.
//
// Contract: safe for concurrent use; it reads the command folders.
func (s *Session) Commands() []CommandInfo { return commands.Infos(s.commands()) }

// commands returns the session's commands with what running them needs.
func (s *Session) commands() []commands.Command {
	root := s.root()
	if !s.host.commandsTrusted(root) {
		root = ""
	}
	list := commands.List(root, func(key, msg string) { s.host.reportOnce(key, nil, msg) })
	if s.builtin[SkillName] {
		// Each skill in use is a command too, after the person's own (which win).
		list = append(list, skills.Commands(s.Skills(), list)...)
	}
	return list
}

// commandsTrusted reports whether a workspace folder's own commands may be used: it is one
// of the host's workspace folders and the person trusts it. A folder that is not one of them
// has no settings pid reads, and its commands are not read either.
func (h *Host) commandsTrusted(root string) bool {
	return h.loader != nil && slices.Contains(h.folders(), root) && h.loader.Trusted(root)
}

// FindCommand returns the command a prompt runs: its first content block is text that
// starts with /NAME, NAME one of the session's commands now (see commands.Find).
//
// Contract: safe for concurrent use; it reads the command folders.
func (s *Session) FindCommand(msg llm.Message) (CommandCall, bool) {
	if len(msg.Content) == 0 || msg.Content[0].Type != llm.ContentText || !strings.HasPrefix(msg.Content[0].Text, "/") {
		return CommandCall{}, false
	}
	return commands.Find(s.commands(), msg.Content[0].Text)
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
	Result   PromptResult
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
	text, ok := commands.PromptText(call)
	switch {
	case ok:
	case call.Command.Source == commands.Skill:
		// The skill's body as it is now, then the person's text.
		t, ok := s.skillCommandText(call.Name, call.Args)
		if !ok {
			out.Output, out.IsError = fmt.Sprintf("The skill %s is no longer in use (%s).", call.Name, call.Command.Path), true
			return out, nil
		}
		text = t
	default:
		switch call.Name {
		case "compact":
			out.Output, out.IsError = s.compactCommand(ctx, call.Args)
		case "plan":
			out.Output = s.planCommand()
		case "mode":
			out.Output, out.IsError = s.modeCommand(call.Args)
		case "model":
			out.Output, out.IsError = s.modelCommand(call.Args)
		case "mcp":
			out.Output = s.mcpCommand()
		case "rewind":
			out.Output, out.IsError = s.rewindCommand(ctx)
		case "jobs":
			out.Output = s.jobsCommand()
		default: // help
			out.Output = commands.Help(s.commands())
		}
		return out, nil
	}
	m := msg
	m.Content = slices.Clone(msg.Content)
	m.Content[0] = llm.Text(text)
	res, err := s.Prompt(ctx, []llm.Message{m})
	out.Prompted, out.Result = true, res
	return out, err
}

// compactCommand compacts the conversation now (as session/compact does), focused on
// focus; it says what became of it (commands.Compacted).
func (s *Session) compactCommand(ctx context.Context, focus string) (string, bool) {
	res, err := s.compactManual(ctx, focus)
	return commands.Compacted(res.TokensBefore, err)
}

// planCommand shows the plan (Plan: the last todo_write of the transcript that succeeded).
func (s *Session) planCommand() string { return commands.PlanText(s.Plan()) }

// modeCommand shows the modes, or switches to the mode id.
func (s *Session) modeCommand(id string) (string, bool) {
	m := s.Modes()
	modes := make([]commands.Mode, len(m.AvailableModes))
	for i, a := range m.AvailableModes {
		modes[i] = commands.Mode{ID: a.ID, Description: a.Description}
	}
	switch {
	case id == "":
		return commands.ModesText(m.CurrentModeID, modes), false
	case s.SetMode(id) != nil:
		return commands.NoMode(id, modes), true
	}
	return commands.ModeSwitched(id, modes), false
}

// modelCommand shows the models, or switches to PROVIDER/ID, one of them.
func (s *Session) modelCommand(arg string) (string, bool) {
	list, err := s.host.ModelList(s.id, nil)
	if err != nil {
		return "The models cannot be listed: " + err.Error(), true
	}
	models := make([]commands.Model, len(list.Models))
	for i, m := range list.Models {
		models[i] = commands.Model(m)
	}
	if arg == "" {
		return commands.ModelsText((*commands.Model)(list.Current), models), false
	}
	m, ok := commands.PickModel(arg, models)
	if !ok {
		return commands.NoModel(arg, models), true
	}
	raw, _ := json.Marshal(map[string]string{"provider": m.Provider, "id": m.ID})
	if err := s.SetModel(raw); err != nil {
		return fmt.Sprintf("The model stays as it was: %v", err), true
	}
	return commands.ModelSwitched(m), false
}

// mcpCommand shows the session's MCP servers and their status.
func (s *Session) mcpCommand() string {
	var servers []commands.Server
	for _, srv := range s.MCPServers() {
		servers = append(servers, commands.Server(srv))
	}
	return commands.ServersText(servers)
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
	id, prompt := store.LastPromptCheckpoint(loaded.Branch)
	if id == "" || !rec.Has(id) {
		return "Nothing to rewind: no prompt of this conversation has a checkpoint.", false
	}
	mark := s.checkpts.marks.Of(id)
	if mark == "" {
		return "Nothing was rewound: the session file does not have the previous prompt's place.", true
	}
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	res, err := s.rewind(ctx, rec, id, mark, "both", false)
	if err != nil {
		return "The rewind failed: " + err.Error(), true
	}
	r := commands.Rewind{Prompt: prompt, Restored: res.Restored, Removed: res.Removed, Safety: res.SafetyCheckpointID}
	for _, sk := range res.Skipped {
		r.Skipped = append(r.Skipped, sk.Path+" ("+sk.Reason+")")
	}
	return commands.RewindText(r), false
}

// SameCommands reports whether two command lists are the same (names, descriptions,
// inputs), for a face that tells its client when the list changed.
func SameCommands(a, b []CommandInfo) bool { return commands.Same(a, b) }

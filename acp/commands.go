// This file holds the commands on the ACP face: available_commands_update after
// session/new (once its answer is out), session/load and session/resume, and again at a
// prompt when the list changed (a command file added, a folder trusted since); a prompt
// whose text starts with /NAME runs the command, and what a command shows the person comes
// as an agent_message_chunk, with _meta.pid.command in the prompt's answer
// (docs/acp.md, "Commands").

package acp

import (
	"context"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// availableCommandsUpdate is ACP's available_commands_update: session.CommandInfo has
// AvailableCommand's shape (name, description, input {hint}).
type availableCommandsUpdate struct {
	SessionUpdate     string                `json:"sessionUpdate"`
	AvailableCommands []session.CommandInfo `json:"availableCommands"`
}

// sendCommands sends available_commands_update with the session's commands (read again
// from disk) when always is set or they changed since the last one sent (the session layer
// watches their folders from the session's start). Contract: st.mu is held; called at a
// prompt's start, after session/new's answer, in session/load and resume, and on a change of
// the folders (an update outside a turn, as a mode change's).
func (st *sessionState) sendCommands(always bool) {
	cmds := st.ss.Commands()
	prev, ok := st.srv.commandsSent.Load(st.ss.ID())
	if !always && ok && session.SameCommands(prev.([]session.CommandInfo), cmds) {
		return
	}
	st.srv.commandsSent.Store(st.ss.ID(), cmds)
	st.update(availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds})
}

// commandsChanged is the session layer's CommandsChanged: a command folder changed, so every
// live session whose list changed is told (clients learn of a command file added without
// waiting for the next prompt). Contract: called from the host's watch goroutine.
func (s *server) commandsChanged() {
	s.mu.Lock()
	live := make([]*sessionState, 0, len(s.sessions))
	for _, st := range s.sessions {
		live = append(live, st)
	}
	s.mu.Unlock()
	for _, st := range live {
		if _, told := s.commandsSent.Load(st.ss.ID()); !told {
			continue // session/new's answer is not out yet: it sends them
		}
		st.mu.Lock()
		if !st.closing {
			st.sendCommands(false)
		}
		st.mu.Unlock()
	}
}

// commandsAfter returns what sends session/new's available_commands_update, to run right
// after its answer (rpcconn.Then): the client knows the session only once it has the answer.
func commandsAfter(st *sessionState) func() {
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.sendCommands(true)
	}
}

// commandDone is _meta.pid.command of a prompt's answer that ran a command.
type commandDone struct {
	Name string `json:"name"`
	// Output is what the person was shown; absent when the command prompted the model.
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// promptOrCommand runs a prompt's turn: first the commands are read again (and the client
// told when they changed); then a prompt naming a command runs it, and any other prompt
// runs the model. A command that answers by itself shows its output as an
// agent_message_chunk and enters nothing in the transcript; after /model the client gets
// the options with the new model (config_option_update). cmd is set when a command ran.
// Contract: the turn is open (st.open), on the prompt's goroutine.
func (st *sessionState) promptOrCommand(ctx context.Context, user llm.Message) (res session.PromptResult, cmd *commandDone, err error) {
	st.mu.Lock()
	st.sendCommands(false)
	st.mu.Unlock()
	call, ok := st.ss.FindCommand(user)
	if !ok {
		res, err = st.ss.Prompt(ctx, []llm.Message{user})
		return res, nil, err
	}
	out, err := st.ss.RunCommand(ctx, call, user)
	if err != nil {
		return out.Result, nil, err
	}
	cmd = &commandDone{Name: out.Name, Output: out.Output, IsError: out.IsError}
	if out.Prompted {
		return out.Result, cmd, nil
	}
	st.mu.Lock()
	if out.Output != "" {
		st.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: textBlock(out.Output)})
	}
	if out.Name == "model" && call.Args != "" && !out.IsError {
		st.update(configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: configOptions(st.srv.host, st.ss)})
	}
	st.mu.Unlock()
	return session.PromptResult{StopReason: llm.StopEnd}, cmd, nil
}

// commandAnswer is a prompt's answer that ran a command.
type commandAnswer struct {
	*promptResult
	Meta struct {
		PID struct {
			Command *commandDone `json:"command"`
		} `json:"pid"`
	} `json:"_meta"`
}

// withCommand returns the prompt's answer r, with _meta.pid.command when a command ran.
func withCommand(r *promptResult, cmd *commandDone) any {
	if cmd == nil {
		return r
	}
	a := &commandAnswer{promptResult: r}
	a.Meta.PID.Command = cmd
	return a
}

// This file holds the commands on pid's own face: commands/list, and session/prompt when its
// text names a command (/NAME): commandOutput for what a command shows the person, and the
// prompt result's command (docs/protocol.md, "Commands").

package rpc

import (
	"context"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// commandsList answers commands/list {sessionId}: the session's commands, read again from
// disk (a command file added since counts at once). It reads files, so it runs on a
// goroutine of its own.
func (s *Server) commandsList(p *sessionParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		return &struct {
			Commands []session.CommandInfo `json:"commands"`
		}{ss.Commands()}, nil
	}, nil
}

// commandOutputParams are commandOutput's params: what a command shows the person.
type commandOutputParams struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	Text      string `json:"text"`
	IsError   bool   `json:"isError,omitempty"`
}

// commandDone is the command member of a session/prompt result that ran a command.
type commandDone struct {
	Name string `json:"name"`
	// Output is what the person was shown (commandOutput's text); absent when the command
	// sent the model a prompt.
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// commandResult is session/prompt's result for a command: the prompt's fields (the run of a
// command that prompts the model; none of a command that does not) and command.
type commandResult struct {
	*promptResult
	Command commandDone `json:"command"`
}

// runCommand runs the command a prompt named, holding the session (Begin): a command that
// answers by itself sends commandOutput before the result, which has no messages (nothing
// entered the transcript); one that prompts the model answers as a prompt does, with
// command naming it.
func (s *Server) runCommand(ctx context.Context, ss *session.Session, call session.CommandCall, msg llm.Message) (any, error) {
	res, err := ss.RunCommand(ctx, call, msg)
	if err != nil {
		return nil, err
	}
	out := &commandResult{Command: commandDone{Name: res.Name, Output: res.Output, IsError: res.IsError}}
	if !res.Prompted {
		s.notify("commandOutput", &commandOutputParams{SessionID: ss.ID(), Name: res.Name, Text: res.Output, IsError: res.IsError})
		out.promptResult = &promptResult{StopReason: llm.StopEnd, Messages: []llm.Message{}}
		return out, nil
	}
	r := res.Result
	out.promptResult = &promptResult{StopReason: r.StopReason, Messages: r.Messages, Terminated: r.Terminated}
	if out.Messages == nil {
		out.Messages = []llm.Message{}
	}
	return out, nil
}

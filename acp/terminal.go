// This file holds the client's terminals: terminal/create, terminal/output,
// terminal/wait_for_exit, terminal/kill and terminal/release, through which bash runs its
// foreground commands when the client declared clientCapabilities.terminal (and the user's
// settings do not say "acp": {"terminals": false}). The command line the client runs puts
// the command in pid's sandbox (package tools says how); the tool call shows the terminal.

package acp

import (
	"context"
	"errors"
	"strings"

	"github.com/pid-agent/pid/session"
)

// clientTerminals are one session's terminals in the client; they implement
// session.Terminals.
type clientTerminals struct {
	s         *server
	sessionID string
}

// editorTerminals returns the session's terminals in the client, nil when the client did
// not declare them or the settings turn them off.
func (s *server) editorTerminals(sessionID string) session.Terminals {
	s.mu.Lock()
	declared := s.caps.Terminal
	s.mu.Unlock()
	if !declared || !s.host.UsesEditorTerminals() {
		return nil
	}
	return clientTerminals{s: s, sessionID: sessionID}
}

type envVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type createTerminalParams struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args"`
	Env             []envVariable `json:"env"`
	Cwd             string        `json:"cwd,omitempty"`
	OutputByteLimit int           `json:"outputByteLimit,omitempty"`
}

type terminalParams struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

// exitStatus is ACP's TerminalExitStatus.
type exitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

func (x exitStatus) exit() session.TerminalExit {
	out := session.TerminalExit{Code: x.ExitCode}
	if x.Signal != nil {
		out.Signal = *x.Signal
	}
	return out
}

// Create implements session.Terminals: terminal/create.
func (t clientTerminals) Create(ctx context.Context, command string, args []string, cwd string, env []string, limit int) (string, error) {
	p := createTerminalParams{SessionID: t.sessionID, Command: command, Args: args, Env: []envVariable{}, Cwd: cwd, OutputByteLimit: limit}
	if p.Args == nil {
		p.Args = []string{}
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		p.Env = append(p.Env, envVariable{Name: name, Value: value})
	}
	var res struct {
		TerminalID string `json:"terminalId"`
	}
	if err := t.s.conn.call(ctx, "terminal/create", p, &res); err != nil {
		return "", err
	}
	if res.TerminalID == "" {
		return "", errors.New("the client's answer to terminal/create has no terminalId")
	}
	return res.TerminalID, nil
}

// Output implements session.Terminals: terminal/output.
func (t clientTerminals) Output(ctx context.Context, id string) (session.TerminalOutput, error) {
	var res struct {
		Output     string      `json:"output"`
		Truncated  bool        `json:"truncated"`
		ExitStatus *exitStatus `json:"exitStatus"`
	}
	if err := t.s.conn.call(ctx, "terminal/output", terminalParams{t.sessionID, id}, &res); err != nil {
		return session.TerminalOutput{}, err
	}
	out := session.TerminalOutput{Output: res.Output, Truncated: res.Truncated}
	if res.ExitStatus != nil {
		x := res.ExitStatus.exit()
		out.Exit = &x
	}
	return out, nil
}

// WaitForExit implements session.Terminals: terminal/wait_for_exit.
func (t clientTerminals) WaitForExit(ctx context.Context, id string) (session.TerminalExit, error) {
	var res exitStatus
	if err := t.s.conn.call(ctx, "terminal/wait_for_exit", terminalParams{t.sessionID, id}, &res); err != nil {
		return session.TerminalExit{}, err
	}
	return res.exit(), nil
}

// Kill implements session.Terminals: terminal/kill.
func (t clientTerminals) Kill(ctx context.Context, id string) error {
	return t.s.conn.call(ctx, "terminal/kill", terminalParams{t.sessionID, id}, nil)
}

// Release implements session.Terminals: terminal/release.
func (t clientTerminals) Release(ctx context.Context, id string) error {
	return t.s.conn.call(ctx, "terminal/release", terminalParams{t.sessionID, id}, nil)
}

// This file holds Face, what a session needs from the protocol face that serves it, and the
// values the two exchange: approval questions and answers, MCP servers' questions, the
// editor's say on results and its view of files, and what a prompt or a batch did. They are
// the session layer's own names, so that a face imports nothing below it.

package session

import (
	"context"
	"encoding/json"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/gate"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/tools"
)

// Face is what a session needs from the protocol face that serves it.
type Face interface {
	// Emit receives the events of the session's runs, in the loop's order (see package
	// event); event.Warning is for the client's log; event.JobUpdate comes from a job's
	// goroutine at any time, outside runs too. Contract: called synchronously, never
	// concurrently within one run (a batch run while a prompt runs may interleave with
	// it); must not block for long and must not call back into the session.
	Emit(s *Session, ev event.Event)
	// Ask asks the person whether a call may run and returns their answer. Contract: called
	// during a batch's prepare pass, one call at a time per batch; may wait as long as the
	// person takes, but must return promptly once ctx ends. An error (no answer) denies the
	// call: its text is logged, and if it has a Reason() string method that sentence is
	// what the model reads. The face must show q.Always (what an "always" answer covers)
	// wherever it offers one, and offer none when q.Always is nil.
	Ask(ctx context.Context, s *Session, q Approval) (Answer, error)
	// Warn tells the client something about this session (a failure that did not stop it).
	// Contract: any goroutine; it may be called while the session holds the lock of its
	// file (saving failed), so it must not block for long and must not call back into the
	// session except for its ID.
	Warn(s *Session, msg string)
	// Elicit puts an MCP server's question (elicitation/create), asked during one of the
	// session's tool calls, to the person, and returns their answer. Contract: called from
	// the MCP client's goroutines, possibly concurrently; must return promptly once ctx ends.
	// An error, or a face that cannot ask, declines.
	Elicit(ctx context.Context, s *Session, q Elicitation) (ElicitAnswer, error)
}

// Approval is the question put to the person about one call (gate.Question: the call, what
// an "always" answer covers, an MCP tool's hints, a request to leave the sandbox, a plan).
type Approval = gate.Question

// PlanApproval is the plan an Approval puts to the person.
type PlanApproval = gate.Plan

// Always is the scope of an "always" answer, in the shape of beforeToolCall's
// params.always.
type Always = gate.Scope

// Answer is a person's answer to an approval question (gate.Answer: a decision, the reason of
// a denial, the mode a plan's approval names).
type Answer = gate.Answer

// Elicitation is an MCP server's question to the person (MCP's elicitation/create), asked
// during one of the session's tool calls (mcp.Elicitation).
type Elicitation = mcp.Elicitation

// ElicitAnswer is the person's answer to an Elicitation (mcp.ElicitAnswer).
type ElicitAnswer = mcp.ElicitAnswer

// AfterInput is what the face's afterToolCall (Options.After) sees of a call that ran: the
// call, and its result as it stands.
type AfterInput struct {
	Call    llm.ToolCall
	Content []llm.Content
	Details any
	IsError bool
}

// Override is the face's say on a result: each field that is set replaces that part of the
// result whole (R11); nil fields keep it.
type Override struct {
	Content   []llm.Content
	Details   any
	IsError   *bool
	Terminate *bool
}

// EditorFiles is the editor's own view of files (its buffers, unsaved changes included), for
// a face whose client offers one: read, write and edit then go through it. A nil func leaves
// that side to the disk. Contract: see tools.EditorFiles.
type EditorFiles = tools.EditorFiles

// Terminals are the editor's terminals. Contract: see tools.Terminals.
type Terminals = tools.Terminals

// TerminalExit is how a terminal's command exited (tools.TerminalExit).
type TerminalExit = tools.TerminalExit

// TerminalOutput is a terminal's output so far (tools.TerminalOutput).
type TerminalOutput = tools.TerminalOutput

// PromptResult is what a prompt's run did.
type PromptResult struct {
	// Messages are the messages the run added, in transcript order.
	Messages []llm.Message
	// StopReason is the last assistant message's, "aborted" after a cancel.
	StopReason llm.StopReason
	// Terminated is set when a terminating batch (R16) ended the run.
	Terminated bool
}

// BatchResult is what a batch run by Execute did.
type BatchResult struct {
	// Messages are one tool-result message per call, in source order (R14).
	Messages []llm.Message
	// Terminate is set when every result of a non-empty batch asked to end the run (R16).
	Terminate bool
	// Aborted is set when the batch was cancelled before it finished (R17).
	Aborted bool
}

// Options are what New needs besides the settings.
type Options struct {
	Face Face
	// After, if set, is the face's own afterToolCall (the editor's), run first in the chain.
	// Contract: as toolexec.AfterHook; nil Override, nil error: the result as it is.
	After func(ctx context.Context, s *Session, in AfterInput) (*Override, error)
	// ID, if set, is the session's id; otherwise a new unique one (NewID).
	ID string
	// Files, if set, is the editor's view of files: the file tools read and write through
	// it.
	Files *EditorFiles
	// Terminals, if set, are the editor's terminals (an ACP client's terminal/*): bash runs
	// its foreground commands in them, in the sandbox still (the command line runs pid's
	// binary, see tools.Workspace.UseTerminals). The session's subagents run theirs
	// themselves. If the editor fails to create one, the face's Warn hears it once and
	// the session's commands run as pid's own children from then on.
	Terminals Terminals
	// MCPServers, if not nil, are a loaded or forked session's own MCP servers (the
	// settings' shape), in place of those saved with it: the editor gives them again, with
	// the secrets the file does not keep (see Config.Header).
	MCPServers json.RawMessage
	// Folders, with HostOptions.OwnFolders, are workspace folders of the session besides its
	// cwd (ACP's additionalDirectories): absolute paths of existing folders. The file tools
	// and the sandbox reach them as they reach the cwd, and each one's .pid/settings.json
	// is read as a workspace folder's, counting only once that folder is trusted (trust is
	// per folder). Without OwnFolders they are ignored: the editor's folders are the host's.
	Folders []string
	// child, set by a task call, makes the session that call's subagent (subagent.go).
	child *childSpec
	// ws, set for a child working in its own worktree, is its workspace (else the host
	// makes one on its cwd and the host's folders).
	ws *tools.Workspace
	// ModeChanged, if set, hears of every change of the session's mode (SetMode, an
	// approved exit_plan_mode), after it took effect. Contract: called from the goroutine
	// that changed it (a face's request, or a batch's prepare pass), holding no lock of the
	// session; must not block for long, and may read the session (ID, Mode, Modes,
	// Thinking, its host's ModelList) but not change it.
	ModeChanged func(s *Session, mode string)
}

// Package tools holds pid's built-in coding tools (read, write, edit, bash, grep, find, ls)
// on the toolexec contract, and the Workspace they act in: package workspace's (path
// confinement to the workspace folders, every file access through an os.Root open on the
// folder, and the stale-edit guard) with what the tools keep beside it (the editor's files
// and terminals, the background jobs). grep, find and ls stand on the search engine
// (package search), with the Workspace as its Fence; bash starts its commands through
// package workspace/launch (the kernel sandbox). docs/tools.md describes them for users.
//
// The entry points are NewWorkspace, which a session calls once with its cwd and workspace
// folders, and New, which returns the tools acting in that workspace. ReadOnly tells the
// permission layer which tools only look.
//
// This file holds New, ReadOnly and what the tools share.
package tools

import (
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/toolexec"
)

// The tool names.
const (
	NameRead  = "read"
	NameWrite = "write"
	NameEdit  = "edit"
	NameBash  = "bash"
	NameGrep  = "grep"
	NameFind  = "find"
	NameLs    = "ls"
	// NameJobOutput and NameJobKill are the background jobs' tools (jobtools.go).
	NameJobOutput = "job_output"
	NameJobKill   = "job_kill"
	// NameDiagnostics is the session's tool reporting the language servers' problems
	// (package session), read-only like the tools above.
	NameDiagnostics = "diagnostics"
)

// New returns the built-in tools acting in ws, in this order: read, write, edit, bash, grep,
// find, ls, job_output, job_kill.
//
// Contract: called once per session, after NewWorkspace; the tools may then run concurrently
// (read, write and edit declare the real path they touch as their resource, so calls on one
// file run in source order). They keep ws; the caller closes ws after the last call.
func New(ws *Workspace) []toolexec.Tool {
	return withViews([]toolexec.Tool{
		readTool(ws),
		writeTool(ws),
		editTool(ws),
		bashTool(ws),
		grepTool(ws),
		findTool(ws),
		lsTool(ws),
		jobOutputTool(ws),
		jobKillTool(ws),
	}, ws.Cwd())
}

// ReadOnly reports whether the built-in tool named name only looks at the workspace (read,
// grep, find, ls, job_output) rather than changing it (write, edit, bash, job_kill).
// Unknown names (MCP tools, say) are not read-only. The permission layer calls it to allow
// read-only tools by default (plan mode included); it is pure and safe for concurrent use.
func ReadOnly(name string) bool {
	switch name {
	case NameRead, NameGrep, NameFind, NameLs, NameDiagnostics, NameJobOutput:
		return true
	}
	return false
}

// RunsWithoutAsking reports whether the built-in tool named name acts only on what the
// session itself started, so that the permission layer lets it run without asking, in
// every mode: job_output (reading a job's output) and job_kill (stopping a job). Pure and
// safe for concurrent use.
func RunsWithoutAsking(name string) bool {
	return name == NameJobOutput || name == NameJobKill
}

// failure is a tool's error written as prose for the model and the person: whole sentences,
// punctuation and line breaks included, unlike Go's terse error strings.
type failure struct {
	text    string
	details any // kept on the error result (toolexec, R10); nil for none
}

func (f *failure) Error() string { return f.text }

// ResultDetails returns the details the error result keeps (toolexec's R10).
func (f *failure) ResultDetails() any { return f.details }

// failf returns a failure with a formatted text.
func failf(format string, args ...any) error { return &failure{text: fmt.Sprintf(format, args...)} }

// decodeArgs decodes a call's validated arguments into v, naming the tool on failure (which
// the schema should have prevented).
func decodeArgs(call toolexec.Call, v any) error {
	if err := call.Decode(v); err != nil {
		return fmt.Errorf("%s: arguments: %v", call.Name, err)
	}
	return nil
}

// intArg returns *f as an int, or def when f is nil. The schema has checked that it is a
// whole number in range; JSON Schema counts 5.0 as an integer, so it arrives as a float.
func intArg(f *float64, def int) int {
	if f == nil {
		return def
	}
	return int(*f)
}

// pathResources is Resources for tools whose "path" argument names the one file they touch:
// the real path, so two spellings of one file are one resource (C3).
//
// Contract: toolexec's prepare pass calls it, serially, after validation. It only reads the
// file system (one Lstat per path component) and never changes it. It cannot fail: a path
// that does not resolve declares nothing, and its call then fails on its own in Execute.
func pathResources(ws *Workspace) func(toolexec.Call) []string {
	return func(call toolexec.Call) []string {
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(call.Args, &a) != nil {
			return nil
		}
		real, err := ws.Resolve(a.Path)
		if err != nil {
			return nil
		}
		return []string{real}
	}
}

// schema returns a tool's JSON Schema; the toolbox compiles and checks it.
func schema(s string) json.RawMessage { return json.RawMessage(s) }

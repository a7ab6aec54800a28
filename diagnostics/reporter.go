// Package diagnostics gives the model the problems the language servers see (issue 26):
// after a batch's edit and write calls, the errors of the files they changed are added to
// their results (toolexec's settle step, R18), and the diagnostics tool reports the problems
// of a file or of the workspace. Its entry point is Reporter, which a session makes over
// its source of problems (the editor's editor/diagnostics, or pid's own language servers,
// package lsp): Reporter.Settle is edit's and write's settle step, Reporter.Tool the tool.
// It knows no session, face nor settings file: the source and the paths come through the
// Reporter's callbacks.
//
// This file holds the Reporter, the shapes a source answers with, and the settle step.
package diagnostics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/lsp"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// Wait is how long a client may take to report (editor/diagnostics' waitMs and
// firstWaitMs).
type Wait struct {
	// Change is the wait for a report on a file's new text.
	Change time.Duration
	// First is the wait for a language's first report in the editor (its server may be
	// starting).
	First time.Duration
}

// Problems is what a source of problems says: the problems, and the files whose language
// server was still starting (their problems may come later).
type Problems struct {
	Diagnostics []problems.Diagnostic
	Starting    []string
}

// Settings are a session's "diagnostics" settings.
type Settings struct {
	// WaitMs is how long the client may take to report on a change (editor/diagnostics'
	// waitMs; pid's own servers get as long); pid gives up a second after it. 0: 1500.
	WaitMs int `json:"waitMs,omitempty"`
	// FirstWaitMs is how long the editor may wait for a language's first report
	// (editor/diagnostics' firstWaitMs); pid gives up a second after the longer wait. 0: 8000.
	FirstWaitMs int `json:"firstWaitMs,omitempty"`
	// Off, when true, adds no problems to results and offers no diagnostics tool.
	Off bool `json:"off,omitempty"`
}

// DefaultWait is the wait when the settings name none.
const DefaultWait = 1500 * time.Millisecond

// DefaultFirstWait is the wait for a language's first report when the settings name none:
// a language server starting (TypeScript's) takes seconds.
const DefaultFirstWait = 8 * time.Second

// AnswerSlack is how much longer than the wait pid waits for the editor's answer.
const AnswerSlack = time.Second

// Waits returns the waits settings s (nil: none) give: the defaults where they name none.
func (s *Settings) Waits() Wait {
	w := Wait{Change: DefaultWait, First: DefaultFirstWait}
	if s == nil {
		return w
	}
	if s.WaitMs > 0 {
		w.Change = time.Duration(s.WaitMs) * time.Millisecond
	}
	if s.FirstWaitMs > 0 {
		w.First = time.Duration(s.FirstWaitMs) * time.Millisecond
	}
	return w
}

// Reporter reports a session's problems to the model. Its fields are set before its first
// use and not changed after; Settle and Tool's calls may run concurrently.
type Reporter struct {
	// Source says who reports, as the texts name it: "the editor", "the language server".
	Source string
	// Ask asks the source for the problems of paths (absolute; none: every file it knows
	// problems of). Contract: called from a batch's goroutines, possibly concurrently; it
	// waits for the source's report as long as the session's settings say, and returns
	// once ctx ends; an error means no answer, but an *lsp.Error (pid's own servers) names
	// the files its servers failed on: the problems of the other files stand.
	Ask func(ctx context.Context, paths []string) (Problems, error)
	// Serves, when not nil, returns the test of whether a source is set up for the file at
	// a path (pid's own servers, by the file's extension): the other files are neither asked
	// about nor reported clean. nil: the source answers for every file (the editor). It is
	// called once per settle step or diagnostics call (the settings it reads are read once
	// for all the batch's files). Contract: quick, safe for concurrent use.
	Serves func() func(path string) bool
	// Resolve returns the absolute path of a path a tool call names (relative to the cwd),
	// or why it cannot be used (the workspace's Resolve). Contract: safe for concurrent use.
	Resolve func(path string) (string, error)
	// Fail reports that the source did not answer after a change (the message says which
	// files and why): the editor's failures to the person, pid's own servers' to the log.
	// Contract: called from a batch's goroutine; it must not block.
	Fail func(msg string)
	// Cwd is the session's cwd: the texts show paths inside it relative to it.
	Cwd string
}

// StartingText is what the model reads about a file (as shown) whose language server was
// still starting when the source answered: its problems may come later.
func StartingText(shown string) string {
	return fmt.Sprintf("The language server for %s was still starting: problems may come later; call diagnostics before you finish.", shown)
}

// Settle is edit's and write's settle step (R18): one question for every file the batch's
// successful edits and writes changed; each result gets its file's errors after the tool's
// own text, and details.diagnostics the file's whole list. No answer (an error, the wait
// passed, a cancel) changes nothing; the failure goes to Fail.
func (r *Reporter) Settle(ctx context.Context, in []toolexec.SettleInput) []*toolexec.Override {
	paths := make([]string, len(in))
	var ask []string
	var serves func(string) bool
	if r.Serves != nil {
		serves = r.Serves()
	}
	for i, c := range in {
		var a struct {
			Path string `json:"path"`
		}
		if c.Call.Decode(&a) != nil {
			continue
		}
		p, err := r.Resolve(a.Path)
		if err != nil || serves != nil && !serves(p) {
			continue // the others would seem checked and clean
		}
		paths[i] = p
		if !slices.Contains(ask, p) {
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	got, err := r.Ask(ctx, ask)
	ds := got.Diagnostics
	if err != nil {
		if ctx.Err() != nil {
			return nil // the run was cancelled: nothing to report
		}
		r.Fail(fmt.Sprintf("the problems of %s after this change are not known: %v", strings.Join(ask, ", "), err))
		var le *lsp.Error
		if !errors.As(err, &le) {
			return nil
		}
		// Some of pid's servers answered: what they said on the other files stands; the
		// files they failed on get nothing (not an empty list, which would say "clean").
		for i, p := range paths {
			if slices.Contains(le.Paths, p) {
				paths[i] = ""
			}
		}
	}
	out := make([]*toolexec.Override, len(in))
	for i, c := range in {
		if p := paths[i]; p != "" {
			out[i] = r.override(c.Result, p, ds, slices.Contains(got.Starting, p))
		}
	}
	return out
}

// override is the change to the result res of an edit or a write of the file at p, given
// the problems ds (of every file asked about); starting when its server was starting.
func (r *Reporter) override(res toolexec.Result, p string, ds []problems.Diagnostic, starting bool) *toolexec.Override {
	mine := problems.Filter(ds, p, 4)
	if mine == nil {
		mine = []problems.Diagnostic{}
	}
	details, shown := withDiagnostics(res.Details, mine)
	if shown == "" {
		shown = p
	}
	ov := &toolexec.Override{Details: details}
	if text := problems.Report(r.Source, []string{p}, mine, func(string) string { return shown }); text != "" {
		ov.Content = append(slices.Clone(res.Content), llm.Text(text))
	}
	if starting {
		if ov.Content == nil {
			ov.Content = slices.Clone(res.Content)
		}
		ov.Content = append(ov.Content, llm.Text(StartingText(shown)))
	}
	return ov
}

// withDiagnostics returns edit's or write's details with the file's problems, and the path
// they show; details unchanged (and "") for another kind.
func withDiagnostics(details any, ds []problems.Diagnostic) (any, string) {
	switch d := details.(type) {
	case tools.EditDetails:
		d.Diagnostics = ds
		return d, d.Path
	case tools.WriteDetails:
		d.Diagnostics = ds
		return d, d.Path
	}
	return details, ""
}

// schema is the diagnostics tool's parameters.
const schema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to report on, relative to the cwd or absolute; leave out for every file with problems."},
    "severity": {"type": "integer", "enum": [1, 2], "description": "1: errors only; 2 (default): errors and warnings."}
  },
  "additionalProperties": false
}`

// raw returns the tool's parameters.
func raw() json.RawMessage { return json.RawMessage(schema) }

// This file wraps the built-in tools that change files so that what they change is kept in
// the open checkpoint first, which is what a rewind takes back (Recorder.Wrap).

package rewind

import (
	"context"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// Recorder is what Wrap needs of the session whose tools it wraps. Every function is called
// while a wrapped tool runs, concurrently for parallel calls, and must be safe for that.
type Recorder struct {
	// Rec returns the checkpoints the session records into; nil when it has none.
	Rec func() *checkpoint.Session
	// Child reports whether the session is a subagent's: its changes are the task's
	// (changes.Changer), and another child may be changing the same file (Conflict).
	Child func() bool
	// Resolve returns the absolute path a path argument names inside the workspace, or why
	// not (the tool then says why itself).
	Resolve func(path string) (string, error)
	// Conflict returns the refusal of a change to path (absolute) that another subagent of
	// the same parent is changing; nil when none.
	Conflict func(path string) error
	// Running marks a change as running (a file's path, or "" for a bash call) until the
	// function it returns is called.
	Running func(path string) (done func())
	// NoteBash keeps the files a bash call changed (rec.AfterBash's list) for its ToolEnd.
	NoteBash func(rec *checkpoint.Session, callID string, changed []checkpoint.Changed)
}

// Wrap returns t wrapped so that its changes are kept in the open checkpoint: write and edit
// keep their file before they change it (and a subagent's are refused while another child
// changes the file), bash has the workspace snapshotted before and after it runs. Other tools
// are returned as they are.
func (r Recorder) Wrap(t toolexec.Tool) toolexec.Tool {
	inner := t.Execute
	switch t.Name {
	case tools.NameWrite, tools.NameEdit:
		t.Execute = func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			rec := r.Rec()
			var a struct {
				Path string `json:"path"`
			}
			if rec == nil && !r.Child() || call.Decode(&a) != nil || a.Path == "" {
				return inner(ctx, call, onUpdate)
			}
			p, err := r.Resolve(a.Path)
			if err != nil {
				return inner(ctx, call, onUpdate) // the tool says why
			}
			if err := r.Conflict(p); err != nil {
				return toolexec.Result{}, err // another subagent is changing it
			}
			if rec == nil {
				return inner(ctx, call, onUpdate)
			}
			defer r.Running(p)()
			done := rec.WritingBy(p, changes.Changer(t.Name, r.Child()))
			defer done()
			return inner(ctx, call, onUpdate)
		}
	case tools.NameBash:
		t.Execute = func(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
			rec := r.Rec()
			if rec == nil {
				return inner(ctx, call, onUpdate)
			}
			defer r.Running("")()
			snap := rec.BeforeBashBy(ctx, changes.Changer(t.Name, r.Child()))
			defer func() { r.NoteBash(rec, call.ID, rec.AfterBash(ctx, snap)) }()
			return inner(ctx, call, onUpdate)
		}
	}
	return t
}

// This file puts a writing subagent in a git worktree of its own (package worktree makes
// and merges it), so that parallel writing children no longer stop each other: with
// "subagents": {"isolation": "worktree"}, or "auto" (the default) when two or more writing
// task calls run in one batch, or an agent file's isolation: worktree, the child works in
// $XDG_STATE_HOME/pid/worktrees/<session>/<child>, made from the parent's HEAD plus its
// uncommitted changes; when it ends its changes are merged into the main tree file by file
// (three-way), recorded in the parent's checkpoint. Outside a git repository, or with
// "none", the second writer of a file is refused as before (task.Claims).

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/worktree"
)

// The subagents.isolation values.
const (
	IsolationAuto     = task.IsolationAuto
	IsolationWorktree = task.IsolationWorktree
	IsolationNone     = task.IsolationNone
)

// writingTools are the tools that make a child a writing one.
var writingTools = []string{tools.NameWrite, tools.NameEdit, tools.NameBash}

// writes reports whether a child of the agent named agent changes files: general does,
// explore never, a defined agent when its tools hold write, edit or bash.
func (s *Session) writes(agent string) bool {
	switch agent {
	case "", "explore":
		return false
	case "general":
		return true
	}
	def, ok := agents.Lookup(s.Agents(), agent)
	if !ok {
		return false
	}
	set, _ := def.ToolSet(s.activeToolNames())
	return slices.ContainsFunc(set, func(n string) bool { return slices.Contains(writingTools, n) })
}

// noteWriters notes, for runTask, a task call whose assistant message holds two or more
// writing task calls (isolation "auto"). Called by the Before hook for every call.
func (s *Session) noteWriters(in toolexec.BeforeInput) {
	if in.Call.Name != TaskName || !s.builtin[TaskName] || in.Assistant == nil || s.isolation() != IsolationAuto {
		return
	}
	n, mine := 0, false
	for _, c := range in.Assistant.Content {
		if c.Type != llm.ContentToolCall || c.Name != TaskName {
			continue
		}
		var a task.Args
		if json.Unmarshal(c.Arguments, &a) != nil || !s.writes(a.Agent) {
			continue
		}
		n++
		mine = mine || c.ID == in.Call.ID
	}
	if n < 2 || !mine {
		return
	}
	s.sub.mu.Lock()
	defer s.sub.mu.Unlock()
	if s.sub.parallel == nil {
		s.sub.parallel = map[string]bool{}
	}
	s.sub.parallel[in.Call.ID] = true
}

// isolation returns the session's subagents.isolation ("auto" when unset).
func (s *Session) isolation() string {
	switch i := s.sub.cfg.Subagents.Isolation; i {
	case IsolationWorktree, IsolationNone:
		return i
	}
	return IsolationAuto
}

// isolate reports whether the task call callID's child works in a worktree: it writes,
// isolation is not "none", and isolation is "worktree", or its agent file asks for one, or
// (auto) its batch has two or more writing children.
func (s *Session) isolate(callID string, spec childSpec) bool {
	s.sub.mu.Lock()
	parallel := s.sub.parallel[callID]
	delete(s.sub.parallel, callID)
	s.sub.mu.Unlock()
	iso := s.isolation()
	if iso == IsolationNone || spec.agent == "explore" {
		return false
	}
	if spec.def != nil && !slices.ContainsFunc(spec.tools, func(n string) bool { return slices.Contains(writingTools, n) }) {
		return false
	}
	return iso == IsolationWorktree || parallel || spec.def != nil && spec.def.Isolation == agents.IsolationWorktree
}

// worktreeDir is the folder of the worktrees of the session id.
func worktreeDir(id string) (string, error) {
	dir, err := xdg.StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "worktrees", id), nil
}

// makeWorktree makes the worktree of the child childID; nil outside a git repository
// (silently) or when it cannot be made (why says so): the child then works in the main
// tree as before.
func (s *Session) makeWorktree(ctx context.Context, childID string) (*worktree.Tree, string) {
	dir, err := worktreeDir(s.id)
	if err != nil {
		return nil, fmt.Sprintf("The subagent works in the main tree: its worktree cannot be made (%v).", err)
	}
	t, err := worktree.Create(ctx, worktree.Options{Folder: s.ws.Cwd(), Dir: filepath.Join(dir, childID), ID: childID})
	switch {
	case errors.Is(err, worktree.ErrNotRepo):
		s.host.log.Debug("no worktree for the subagent", "err", err)
		return nil, ""
	case err != nil:
		s.host.log.Warn("no worktree for the subagent", "err", err)
		return nil, fmt.Sprintf("The subagent works in the main tree: its worktree cannot be made (%v).", err)
	}
	return t, ""
}

// mergeWorktree applies the child's worktree to the main tree, recording each file in the
// parent's checkpoint (a cancelled call's worktree is discarded); it returns the result
// (task's details.worktree) and its text for the model.
func (s *Session) mergeWorktree(ctx context.Context, t *worktree.Tree) (*worktree.Result, string) {
	if ctx.Err() != nil {
		if err := t.Discard(context.WithoutCancel(ctx)); err != nil {
			s.host.log.Warn("the subagent's worktree was not removed", "path", t.Path, "err", err)
		}
		return nil, ""
	}
	var w func(string) func()
	if rec := s.checkpts.rec; rec != nil {
		w = rec.Writing
	}
	res, err := t.Merge(context.WithoutCancel(ctx), worktree.MergeOptions{Writing: w})
	text := res.Text()
	if err != nil {
		s.host.log.Warn("the subagent's worktree", "path", t.Path, "err", err)
		text += fmt.Sprintf("\n(The worktree: %v.)", err)
	}
	if !res.Kept {
		_ = os.Remove(filepath.Dir(t.Path)) // the session's folder, once empty
	}
	return &res, text
}

// policyCwd is the folder whose settings decide the session's calls: its cwd, or for a
// child in a worktree its parent's (the worktree has no settings of its own).
func (s *Session) policyCwd() string {
	if c := s.sub.child; c != nil && c.worktree != nil {
		return c.parent.ws.Cwd()
	}
	return s.ws.Cwd()
}

// deleteWorktrees removes the worktrees a deleted session's children kept (a conflict left
// them for the person), with their branches, and the session's folder of them.
func (h *Host) deleteWorktrees(id string) {
	dir, err := worktreeDir(id)
	if err != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := worktree.DiscardDir(context.Background(), filepath.Join(dir, e.Name())); err != nil {
			h.log.Warn("a kept worktree of the deleted session was not removed", "path", filepath.Join(dir, e.Name()), "err", err)
		}
	}
	_ = os.Remove(dir)
}

// sweepWorktrees removes, at the daemon's start, the kept worktrees of sessions whose file
// is gone (deleted while no pid ran, or never saved). Called by SetUp once the store is
// open.
func (h *Host) sweepWorktrees() {
	dir, err := xdg.StateDir()
	if err != nil {
		return
	}
	entries, err := os.ReadDir(filepath.Join(dir, "worktrees"))
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := h.files.ReadHeader(e.Name()); errors.Is(err, store.ErrNotFound) {
			h.deleteWorktrees(e.Name())
		}
	}
}

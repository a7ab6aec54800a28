// This file composes the review of a prompt's changes (issue 35; docs/protocol.md,
// "Reviewing a prompt's changes") into the session: package review's Tracker does
// changes/list, changes/undo and changes/keep over the session's checkpoints, sends
// changesUpdate after each tool call that changed files and keeps the note of what was
// undone for the next prompt; this file gives it the session's face, file and paths.

package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/review"
	"github.com/pid-agent/pid/store"
)

// ChangedFile is one file of changes/list: {path, change, binary?, reviewed, hunks, by}.
type ChangedFile = changes.File

// SkippedHunk is a hunk an undo left as it is, and why.
type SkippedHunk = changes.Skip

// Changes is changes/list's answer.
type Changes = review.Changes

// ChangesParams are changes/list's params (native, and _pid/changes/list on ACP).
type ChangesParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
}

// UndoParams are changes/undo's params.
type UndoParams struct {
	SessionID    string   `json:"sessionId"`
	CheckpointID string   `json:"checkpointId"`
	Path         string   `json:"path"`
	HunkIDs      []string `json:"hunkIds"`
	Force        bool     `json:"force"`
}

// UndoResult is changes/undo's answer.
type UndoResult = review.UndoResult

// KeepParams are changes/keep's params.
type KeepParams struct {
	SessionID    string   `json:"sessionId"`
	CheckpointID string   `json:"checkpointId"`
	Path         string   `json:"path"`
	HunkIDs      []string `json:"hunkIds"`
}

// KeepResult is changes/keep's answer.
type KeepResult = review.KeepResult

// openChanges sets up the session's review: a subagent's is its parent's; a loaded session's
// comes back from its file's review entries (r.reviews). Called by build, after
// openCheckpoints.
func (s *Session) openChanges(r *restoring) {
	if c := s.sub.child; c != nil {
		s.changes = c.parent.changes
		return
	}
	cfg := review.Config{ID: s.id, Rec: s.checkpts.rec,
		Emit: func(ev event.ChangesUpdate) { s.face.Emit(s, ev) },
		Save: s.appendReview, Mark: s.markCheckpoint, Write: s.checkpts.write}
	if r == nil {
		s.changes = review.New(cfg, nil, nil)
		return
	}
	s.changes = review.New(cfg, r.reviews, r.undone)
}

// startChanges notes the checkpoint of a prompt that begins, and takes the changes undone
// since the last one: the model's note (changes.Note), "" when none. Called by Prompt.
func (s *Session) startChanges(cp string) string {
	if s.changes == nil || s.sub.child != nil {
		return ""
	}
	return s.changes.Start(cp)
}

// changesAfterTool sends changesUpdate when the checkpoints recorded a change since the last
// one. Called by afterEvent on a ToolEnd of a prompt's run (a subagent's included).
func (s *Session) changesAfterTool() {
	if s.changes == nil || s.checkpts.rec == nil {
		return
	}
	s.changes.AfterTool()
}

// reviewError maps the review's errors to the session's: invalid params, or a failed
// request.
func reviewError(err error) error {
	var e *review.Error
	switch {
	case !errors.As(err, &e):
		return err
	case e.Invalid:
		return invalid("%s", e.Msg)
	}
	return fmt.Errorf("%w: %s", ErrFailed, e.Msg)
}

// ListChanges runs changes/list: the changes of checkpoint cp ("" for the latest prompt's).
func (s *Session) ListChanges(cp string) (Changes, error) {
	if s.checkpts.rec == nil {
		return Changes{}, errNoCheckpoints
	}
	out, err := s.changes.List(cp)
	return out, reviewError(err)
}

// resolveReview returns the checkpoint (cp, or the default) and the absolute path a request
// names.
func (s *Session) resolveReview(cp, path string) (string, string, error) {
	cp, err := s.changes.Checkpoint(cp)
	if err != nil {
		return "", "", reviewError(err)
	}
	if path != "" {
		p, err := s.ws.Resolve(path)
		if err != nil {
			return "", "", invalid("path %q: %v", path, err)
		}
		path = p
	}
	return cp, path, nil
}

// UndoChanges runs changes/undo: the hunks p.HunkIDs (all of the file's when none) of p.Path
// go back to their state before checkpoint p.CheckpointID's prompt, in a safety checkpoint
// of their own. It fails with ErrFailed (-32803) while a running tool may be changing the
// file, with ErrInvalid for an unknown checkpoint or a path it did not change.
func (s *Session) UndoChanges(ctx context.Context, p UndoParams) (UndoResult, error) {
	if s.checkpts.rec == nil {
		return UndoResult{}, errNoCheckpoints
	}
	if p.Path == "" {
		return UndoResult{}, invalid("path is required")
	}
	cp, path, err := s.resolveReview(p.CheckpointID, p.Path)
	if err != nil {
		return UndoResult{}, err
	}
	out, err := s.changes.Undo(ctx, cp, path, p.HunkIDs, p.Force)
	return out, reviewError(err)
}

// KeepChanges runs changes/keep: the hunks p.HunkIDs of p.Path (all of the file's when none;
// every file's when no path) are marked kept. Nothing on disk changes.
func (s *Session) KeepChanges(p KeepParams) (KeepResult, error) {
	if s.checkpts.rec == nil {
		return KeepResult{}, errNoCheckpoints
	}
	cp, path, err := s.resolveReview(p.CheckpointID, p.Path)
	if err != nil {
		return KeepResult{}, err
	}
	out, err := s.changes.Keep(cp, path, p.HunkIDs)
	return out, reviewError(err)
}

// appendReview appends a review entry to the session file, at the conversation's end.
func (s *Session) appendReview(r store.Review) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	f := s.writableLocked()
	if f == nil {
		return
	}
	if _, err := f.Append(store.Entry{Kind: store.KindReview, Timestamp: time.Now().UTC(), Review: &r}); err != nil {
		s.saveFailedLocked(err)
	}
}

// noteBashFiles keeps the files bash call id changed, for its ToolEnd (and, in a subagent,
// for its parent's task call's end too: its key is the parent's, call ids being a
// session's own).
func (s *Session) noteBashFiles(rec *checkpoint.Session, id string, changed []checkpoint.Changed) {
	also := ""
	if sub := s.sub.child; sub != nil {
		also = review.CallKey(sub.parent.id, sub.toolCallID)
	}
	s.changes.NoteBash(rec, review.CallKey(s.id, id), also, changed)
}

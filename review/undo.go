// This file takes chosen hunks back (changes/undo), in a safety checkpoint of their own,
// and marks hunks reviewed (changes/keep).

package review

import (
	"context"
	"fmt"
	"slices"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/store"
)

// UndoResult is changes/undo's answer.
type UndoResult struct {
	Path               string         `json:"path"`
	Undone             []string       `json:"undone"`
	Skipped            []changes.Skip `json:"skipped"`
	SafetyCheckpointID string         `json:"safetyCheckpointId"`
}

// KeepResult is changes/keep's answer.
type KeepResult struct {
	Kept []string `json:"kept"`
}

// Checkpoint returns the checkpoint a request names (cp, or Default when ""); an invalid
// Error when there is no such checkpoint.
func (t *Tracker) Checkpoint(cp string) (string, error) {
	if cp == "" {
		cp = Default(t.cfg.Rec)
	}
	if cp == "" || !t.cfg.Rec.Has(cp) {
		return "", invalid(fmt.Sprintf("session %s has no checkpoint %q", t.cfg.ID, cp))
	}
	return cp, nil
}

// Undo answers changes/undo: the hunks ids (all of the file's when none) of the file at
// path (absolute) go back to their state before checkpoint cp's prompt (cp as Checkpoint
// returned it), in a safety checkpoint of their own, which Config.Mark marks; the undone
// lines are saved (Config.Save) for the next prompt's note, and changesUpdate is sent. It
// fails (an Error) while a running tool may be changing the file, and is invalid for a path
// cp did not change. A hunk it cannot undo is in Skipped, with why.
func (t *Tracker) Undo(ctx context.Context, cp, path string, ids []string, force bool) (UndoResult, error) {
	rec := t.cfg.Rec
	if err := t.busy(path); err != nil {
		return UndoResult{}, err
	}
	list, err := t.list(cp)
	if err != nil {
		return UndoResult{}, err
	}
	out := UndoResult{Path: path, Undone: []string{}, Skipped: []changes.Skip{}}
	i := slices.IndexFunc(list, func(l listed) bool { return l.file.Path == path })
	if i < 0 {
		befores, _ := rec.Befores(cp)
		if !slices.ContainsFunc(befores, func(b checkpoint.Before) bool { return b.Path == path }) {
			return UndoResult{}, invalid(fmt.Sprintf("checkpoint %s did not change %s", cp, path))
		}
		for _, id := range ids {
			out.Skipped = append(out.Skipped, changes.Skip{HunkID: id, Reason: changes.ReasonUnchanged})
		}
		return out, nil
	}
	l := list[i]
	if l.skip != "" {
		if len(ids) == 0 {
			ids = []string{l.file.Hunks[0].ID}
		}
		for _, id := range ids {
			out.Skipped = append(out.Skipped, changes.Skip{HunkID: id, Reason: l.skip})
		}
		return out, nil
	}
	res := changes.Undo(path, l.before, l.now, ids, force)
	out.Skipped = res.Skipped
	if len(res.Undone) == 0 {
		return out, nil
	}
	safety := store.NewID()
	reason, err := rec.Undo(safety, cp, path, l.now.Data, checkpoint.UndoSpec{
		Write: res.Write, Create: res.Create, Data: res.Data, Remove: res.Remove, Mode: res.Mode}, t.writer(ctx))
	if err != nil {
		return out, failed(err.Error())
	}
	if rec.Has(safety) {
		prompt := ""
		for _, c := range rec.List() {
			if c.ID == safety {
				prompt = c.Prompt
			}
		}
		t.cfg.Mark(safety, prompt, cp)
		out.SafetyCheckpointID = safety
	}
	if reason != "" {
		for _, id := range res.Undone {
			out.Skipped = append(out.Skipped, changes.Skip{HunkID: id, Reason: reason})
		}
		return out, nil
	}
	out.Undone = res.Undone
	// What was kept of the file and is no longer a hunk of it is dropped; the undone lines
	// wait for the next prompt's note, in memory and in the file.
	e := changes.Entry{CheckpointID: cp, Path: path, Kept: []string{}}
	if after, err := t.list(cp); err == nil {
		f := changes.File{Path: path}
		if j := slices.IndexFunc(after, func(l listed) bool { return l.file.Path == path }); j >= 0 {
			f = after[j].file
		}
		t.mu.Lock()
		e, _ = t.review.Settle(cp, &f)
		t.mu.Unlock()
	}
	t.mu.Lock()
	t.undone = append(t.undone, res.Lines...)
	t.mu.Unlock()
	t.cfg.Save(store.Review{Entry: e, Undone: res.Lines})
	t.sendNow(cp)
	return out, nil
}

// writer returns how an undo run under ctx writes a text file: nil (to disk) without
// Config.Write.
func (t *Tracker) writer(ctx context.Context) checkpoint.Writer {
	if t.cfg.Write == nil {
		return nil
	}
	return func(path, text string) error { return t.cfg.Write(ctx, path, text) }
}

// Keep answers changes/keep: the hunks ids of the file at path (all of the file's when
// none; every file's when path is "") of checkpoint cp (as Checkpoint returned it) are
// marked kept, saved (Config.Save) and changesUpdate sent. Nothing on disk changes.
func (t *Tracker) Keep(cp, path string, ids []string) (KeepResult, error) {
	list, err := t.list(cp)
	if err != nil {
		return KeepResult{}, err
	}
	out := KeepResult{Kept: []string{}}
	for _, l := range list {
		if path != "" && l.file.Path != path {
			continue
		}
		f := l.file
		t.mu.Lock()
		kept, e, write := t.review.Keep(cp, &f, ids)
		t.mu.Unlock()
		out.Kept = append(out.Kept, kept...)
		if write {
			t.cfg.Save(store.Review{Entry: e})
		}
	}
	t.sendNow(cp)
	return out, nil
}

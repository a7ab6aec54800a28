// This file lists a checkpoint's changes (changes/list): each file its run (and the runs
// after it) changed that differs now from before, cut into hunks, marked with what the
// person kept.

package review

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
)

// Changes is changes/list's answer.
type Changes struct {
	CheckpointID string         `json:"checkpointId"`
	Files        []changes.File `json:"files"`
}

// listed is one file of a checkpoint's changes, with the sides it was compared from.
type listed struct {
	file   changes.File
	before changes.Side
	now    changes.Side
	// skip says why no hunk of it can be undone ("" when they can).
	skip string
}

// Default returns the checkpoint changes/list takes by default: the latest one of rec that
// is not a rewind's or an undo's own ("" when there is none).
func Default(rec *checkpoint.Session) string {
	list := rec.List()
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Safety == "" {
			return list[i].ID
		}
	}
	return ""
}

// List answers changes/list: the changes of checkpoint cp ("" for the latest prompt's).
// An unknown checkpoint is an invalid Error.
func (t *Tracker) List(cp string) (Changes, error) {
	if cp == "" {
		cp = Default(t.cfg.Rec)
		if cp == "" {
			return Changes{Files: []changes.File{}}, nil
		}
	}
	list, err := t.list(cp)
	if err != nil {
		return Changes{}, err
	}
	out := Changes{CheckpointID: cp, Files: make([]changes.File, 0, len(list))}
	for _, l := range list {
		out.Files = append(out.Files, l.file)
	}
	return out, nil
}

// list returns the files checkpoint cp's run (and the runs after it) changed that differ
// now from before, cut into hunks, their states marked, sorted by path.
func (t *Tracker) list(cp string) ([]listed, error) {
	rec := t.cfg.Rec
	befores, err := rec.Befores(cp)
	if errors.Is(err, checkpoint.ErrUnknown) {
		return nil, invalid(fmt.Sprintf("session %s has no checkpoint %q", t.cfg.ID, cp))
	}
	if err != nil {
		return nil, failed(err.Error())
	}
	out := []listed{}
	for _, b := range befores {
		l, ok := compareOne(rec, b)
		if !ok {
			continue
		}
		l.file.By = changes.By(b.By...)
		t.mu.Lock()
		t.review.Mark(cp, &l.file)
		t.mu.Unlock()
		out = append(out, l)
	}
	// By path: the order the files were first changed in depends on which of a batch's
	// parallel calls got there first.
	slices.SortFunc(out, func(a, b listed) int { return strings.Compare(a.file.Path, b.file.Path) })
	return out, nil
}

// compareOne compares one file's state before with the file now; ok is false when it is as
// it was.
func compareOne(rec *checkpoint.Session, b checkpoint.Before) (listed, bool) {
	now, nerr := rec.Now(b.Path)
	whole := func(change, id, header, skip string) (listed, bool) {
		f := changes.File{Path: b.Path, Change: change, Binary: true, By: []string{},
			Hunks: []changes.Hunk{{ID: id, Header: header, State: changes.Pending}}}
		return listed{file: f, skip: skip}, true
	}
	change := "modified"
	switch {
	case b.Kind == "none":
		change = "added"
	case nerr == nil && now.Kind == "none":
		change = "deleted"
	}
	switch {
	case nerr != nil:
		why := "it cannot be read now: " + nerr.Error()
		return whole(change, "unreadable", why, why)
	case b.Err != nil:
		why := "its content before the prompt was not kept: " + b.Err.Error()
		return whole(change, "unkept", why, why)
	case b.Kind == "link" || b.Kind == "other" || now.Kind == "link" || now.Kind == "other":
		if b.Kind == now.Kind && b.Link == now.Link && b.Kind != "other" {
			return listed{}, false
		}
		why := "a symbolic link (or not a regular file) on one side: take it back with session/rewind"
		return whole(change, "link", "a symbolic link or a special file changed", why)
	}
	l := listed{before: changes.Side{Data: b.Data, Mode: b.Mode}, now: changes.Side{Data: now.Data, Mode: now.Mode}}
	if b.Kind == "none" {
		l.before = changes.Side{}
	}
	if now.Kind == "none" {
		l.now = changes.Side{}
	}
	l.file = changes.Compare(b.Path, l.before, l.now)
	return l, l.file.Changed()
}

// This file keeps the files each call changed, for its ToolEnd (event.ToolEnd.Files): a
// bash call's, and a task call's (its subagent's bash calls').

package review

import (
	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
)

// Bounds of the files a call's end carries (event.ToolEnd.Files): the text of at most
// MaxCallTexts files of at most MaxCallText bytes a side; past those, paths only, at most
// MaxCallFiles of them.
const (
	MaxCallText  = 64 << 10
	MaxCallTexts = 64
	MaxCallFiles = 1000
)

// CallKey is the key of call id of session sid among a Tracker's calls (a call id is its
// session's own; a subagent shares its parent's Tracker).
func CallKey(sid, id string) string { return sid + "/" + id }

// NoteBash keeps the files a bash call changed (rec.AfterBash's list), for the ToolEnd of
// the call keyed key, and of the call keyed also too when also is not "" (a subagent's
// parent's task call), up to MaxCallFiles for it.
func (t *Tracker) NoteBash(rec *checkpoint.Session, key, also string, changed []checkpoint.Changed) {
	if len(changed) == 0 {
		return
	}
	out := make([]event.FileText, 0, min(len(changed), MaxCallFiles))
	texts := 0
	for _, ch := range changed {
		if len(out) == MaxCallFiles {
			break
		}
		f := event.FileText{Path: ch.Path}
		if texts < MaxCallTexts {
			old, okOld := textOf(rec, ch.Before)
			now, okNew := textOf(rec, ch.After)
			if okOld && okNew {
				f.Old, f.New, f.Known = old, now, true
				texts++
			}
		}
		out = append(out, f)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.callFiles[key] = append(t.callFiles[key], out...)
	if also != "" && len(t.callFiles[also]) < MaxCallFiles {
		t.callFiles[also] = append(t.callFiles[also], out...)
	}
}

// textOf returns a state's text for a diff: nil for no file; ok is false when it is not
// text within MaxCallText, or its content was not kept.
func textOf(rec *checkpoint.Session, st checkpoint.State) (*string, bool) {
	switch st.Kind {
	case "none":
		return nil, true
	case "file":
		if st.Size > MaxCallText {
			return nil, false
		}
		data, ok := rec.Content(st)
		if !ok || len(data) > MaxCallText || !changes.IsText(data) {
			return nil, false
		}
		text := string(data)
		return &text, true
	}
	return nil, false
}

// TakeCallFiles returns (and forgets) the files the call keyed key changed, for its ToolEnd;
// nil when none.
func (t *Tracker) TakeCallFiles(key string) []event.FileText {
	t.mu.Lock()
	defer t.mu.Unlock()
	fs := t.callFiles[key]
	delete(t.callFiles, key)
	return fs
}

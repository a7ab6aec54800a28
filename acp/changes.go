// This file holds the review of a prompt's changes on the ACP face (docs/acp.md, "Reviewing
// a prompt's changes"): pid's extension methods _pid/changes/list, _pid/changes/undo and
// _pid/changes/keep, with the native methods' params and results, and the diff content of
// the files a bash call (or a task call's subagent) changed, on the call's last
// tool_call_update, so that an editor's own review of the agent's edits shows them too.

package acp

import (
	"context"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
)

// changesList answers _pid/changes/list; it reads files, so it runs on a goroutine of its own.
func (s *server) changesList(p *session.ChangesParams) (rpcconn.Work, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, reply func(any, error)) {
		out, err := st.ss.ListChanges(p.CheckpointID)
		if err != nil {
			reply(nil, err)
			return
		}
		reply(&out, nil)
	}, nil
}

// changesUndo answers _pid/changes/undo.
func (s *server) changesUndo(p *session.UndoParams) (rpcconn.Work, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, reply func(any, error)) {
		out, err := st.ss.UndoChanges(ctx, *p)
		if err != nil {
			reply(nil, err)
			return
		}
		reply(&out, nil)
	}, nil
}

// changesKeep answers _pid/changes/keep.
func (s *server) changesKeep(p *session.KeepParams) (rpcconn.Work, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, reply func(any, error)) {
		out, err := st.ss.KeepChanges(*p)
		if err != nil {
			reply(nil, err)
			return
		}
		reply(&out, nil)
	}, nil
}

// withFileTexts appends to a call's last update the files the call changed that its result
// does not describe (event.ToolEnd.Files): a diff block {path, oldText, newText} for each
// whose text is known (oldText null for a file the call made, newText "" for one it
// deleted), a location for each of the others.
func withFileTexts(u toolCallUpdate, files []event.FileText) toolCallUpdate {
	for _, f := range files {
		if !f.Known {
			u.Locations = append(u.Locations, location{Path: f.Path})
			continue
		}
		d := diffContent{Type: "diff", Path: f.Path, OldText: f.Old}
		if f.New != nil {
			d.NewText = *f.New
		}
		u.Content = append(u.Content, d)
	}
	return u
}

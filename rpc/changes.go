// This file holds the review methods: changes/list, changes/undo and changes/keep, and the
// changesUpdate notification (docs/protocol.md, "Reviewing a prompt's changes").

package rpc

import (
	"context"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/session"
)

// changesParams are changesUpdate's params.
type changesParams struct {
	SessionID    string              `json:"sessionId"`
	CheckpointID string              `json:"checkpointId"`
	Files        []event.ChangedFile `json:"files"`
}

// sendChanges sends changesUpdate.
func (s *Server) sendChanges(id string, e event.ChangesUpdate) {
	files := e.Files
	if files == nil {
		files = []event.ChangedFile{}
	}
	s.notify("changesUpdate", &changesParams{SessionID: id, CheckpointID: e.CheckpointID, Files: files})
}

// changesList runs changes/list (it reads and diffs files: a goroutine of its own).
func (s *Server) changesList(p *session.ChangesParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		out, err := ss.ListChanges(p.CheckpointID)
		if err != nil {
			return nil, err
		}
		return &out, nil
	}, nil
}

// changesUndo runs changes/undo.
func (s *Server) changesUndo(p *session.UndoParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		out, err := ss.UndoChanges(ctx, *p)
		if err != nil {
			return nil, err
		}
		return &out, nil
	}, nil
}

// changesKeep runs changes/keep.
func (s *Server) changesKeep(p *session.KeepParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		out, err := ss.KeepChanges(*p)
		if err != nil {
			return nil, err
		}
		return &out, nil
	}, nil
}

// This file holds the checkpoint methods: checkpoints/list, checkpoints/diff and
// session/rewind (docs/protocol.md, "Checkpoints and rewind").

package rpc

import (
	"context"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
)

// checkpointsList runs checkpoints/list: the session's checkpoints, oldest first.
func (s *Server) checkpointsList(p *sessionParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	list, err := ss.Checkpoints()
	if err != nil {
		return nil, err
	}
	return &struct {
		Checkpoints []session.CheckpointInfo `json:"checkpoints"`
	}{list}, nil
}

// checkpointsDiff runs checkpoints/diff: the diffs from before a checkpoint's prompt to the
// files as they are now (it reads the files, so it runs on a goroutine of its own).
func (s *Server) checkpointsDiff(p *session.CheckpointParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		files, err := ss.CheckpointDiff(p.CheckpointID)
		if err != nil {
			return nil, err
		}
		return &struct {
			Files []session.FileDiff `json:"files"`
		}{files}, nil
	}, nil
}

// sessionRewind runs session/rewind. The session is claimed on the read goroutine, so a
// prompt sent after it is refused as busy rather than raced.
func (s *Server) sessionRewind(p *session.RewindParams) (work, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	work, err := ss.StartRewind(p.CheckpointID, p.Restore, p.Force)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		before, _ := ss.Plan()
		res, err := work(ctx)
		if err != nil {
			return nil, err
		}
		return rpcconn.Then(&res, s.planChanged(ss, before)), nil // the plan, if the rewind changed it
	}, nil
}

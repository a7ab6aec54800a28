// This file holds pid's checkpoint extension methods on the ACP face: _pid/checkpoints/list,
// _pid/checkpoints/diff and _pid/session/rewind, with the native methods' params and
// results (docs/acp.md, "Checkpoints and rewind").

package acp

import (
	"context"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
)

// checkpointsList answers _pid/checkpoints/list: a live session's checkpoints, oldest first.
func (s *server) checkpointsList(p *session.CheckpointParams) (any, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	list, err := st.ss.Checkpoints()
	if err != nil {
		return nil, err
	}
	return &struct {
		Checkpoints []session.CheckpointInfo `json:"checkpoints"`
	}{list}, nil
}

// checkpointsDiff answers _pid/checkpoints/diff; it reads files, so it runs on a goroutine
// of its own.
func (s *server) checkpointsDiff(p *session.CheckpointParams) (rpcconn.Work, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, reply func(any, error)) {
		files, err := st.ss.CheckpointDiff(p.CheckpointID)
		if err != nil {
			reply(nil, err)
			return
		}
		reply(&struct {
			Files []session.FileDiff `json:"files"`
		}{files}, nil)
	}, nil
}

// sessionRewind answers _pid/session/rewind. The session is claimed on the read loop, so a
// prompt sent after it is refused rather than raced.
func (s *server) sessionRewind(p *session.RewindParams) (rpcconn.Work, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	work, err := st.ss.StartRewind(p.CheckpointID, p.Restore, p.Force)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, reply func(any, error)) {
		before, _ := st.ss.Plan()
		res, err := work(ctx)
		if err != nil {
			reply(nil, err)
			return
		}
		reply(&res, nil)
		st.planChanged(before) // a rewound conversation has the plan of its point (plan.go)
	}, nil
}

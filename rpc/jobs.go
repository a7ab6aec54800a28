// This file holds the background jobs' methods and notification: jobs/list, jobs/output,
// jobs/kill and jobUpdate (docs/protocol.md, "Background jobs").

package rpc

import (
	"context"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/session"
)

// jobsList runs jobs/list: the session's jobs, running and ended, in the order they started.
func (s *Server) jobsList(p *sessionParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return &struct {
		Jobs []session.JobInfo `json:"jobs"`
	}{ss.Jobs()}, nil
}

// jobKillParams are jobs/kill's params.
type jobKillParams struct {
	SessionID string `json:"sessionId"`
	JobID     string `json:"jobId"`
}

// jobsKill runs jobs/kill: it stops a job (SIGTERM, SIGKILL 2 s later) and answers once it
// ended, with the job as jobs/list shows it (on a goroutine of its own: it waits).
func (s *Server) jobsKill(p *jobKillParams) (work, error) {
	if p.JobID == "" {
		return nil, invalidParams("jobId is required")
	}
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		info, err := ss.KillJob(p.JobID)
		if err != nil {
			return nil, err
		}
		return &struct {
			Job session.JobInfo `json:"job"`
		}{info}, nil
	}, nil
}

// jobsOutputParams are jobs/output's params.
type jobsOutputParams struct {
	SessionID string `json:"sessionId"`
	JobID     string `json:"jobId"`
	Tail      int    `json:"tail"`
}

// jobsOutput runs jobs/output: what a job printed (the last 2000 lines and 50 KB kept,
// secrets redacted) for the person, and the job.
func (s *Server) jobsOutput(p *jobsOutputParams) (any, error) {
	ss, err := s.host.Get(p.SessionID)
	if err != nil {
		return nil, err
	}
	text, info, err := ss.JobOutput(p.JobID, p.Tail)
	if err != nil {
		return nil, err
	}
	return &struct {
		Output string          `json:"output"`
		Job    session.JobInfo `json:"job"`
	}{text, info}, nil
}

// jobParams are jobUpdate's params.
type jobParams struct {
	SessionID string `json:"sessionId"`
	JobID     string `json:"jobId"`
	Running   bool   `json:"running"`
	ExitCode  *int   `json:"exitCode,omitempty"`
}

// sendJob sends jobUpdate.
func (s *Server) sendJob(ss *session.Session, e event.JobUpdate) {
	s.notify("jobUpdate", &jobParams{SessionID: ss.ID(), JobID: e.JobID, Running: e.Running, ExitCode: e.ExitCode})
}

// This file wires the workspace's background jobs (tools.Jobs) into the session: their
// starts and ends become event.JobUpdate for the face, what they change is recorded in the
// checkpoints (at job_output, job_kill and each prompt's end), and Jobs, KillJob and the
// /jobs command show and stop them.

package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/tools"
)

// JobInfo is a background job as jobs/list shows it.
type JobInfo = tools.JobInfo

// wireJobs makes the jobs tell the face when one starts or ends, and record what they
// change into the session's checkpoints. Called once, while the session is made.
func (s *Session) wireJobs() {
	j := s.ws.Jobs()
	j.OnUpdate(func(u tools.JobUpdate) {
		s.face.Emit(s, event.JobUpdate{JobID: u.JobID, Running: u.Running, ExitCode: u.ExitCode})
	})
	if rec := s.checkpts.rec; rec != nil {
		j.UseCheckpoints(jobCheckpoints{rec})
	}
}

// jobCheckpoints records the jobs' changes with the session's checkpoints: the snapshot
// before a job is a bash call's (checkpoint.Session.BeforeBash), and each look records what
// changed since into the checkpoint open then (JobSince).
type jobCheckpoints struct{ rec *checkpoint.Session }

func (c jobCheckpoints) JobBefore(ctx context.Context) tools.JobState {
	if snap := c.rec.BeforeBash(ctx); snap != nil {
		return snap
	}
	return nil
}

func (c jobCheckpoints) JobSeen(ctx context.Context, since tools.JobState) tools.JobState {
	snap, _ := since.(*checkpoint.Snapshot)
	if next := c.rec.JobSince(ctx, snap); next != nil {
		return next
	}
	return nil
}

// Jobs returns the session's background jobs, running and ended, in the order they
// started. Safe for concurrent use.
func (s *Session) Jobs() []JobInfo { return s.ws.Jobs().List() }

// KillJob stops the session's job id (SIGTERM to its process group, SIGKILL 2 s later) and
// returns it as it is then; a job that has ended is left as it is. An unknown id is an
// invalid-params error naming the session's jobs. Safe for concurrent use; it waits for the
// job's end.
func (s *Session) KillJob(id string) (JobInfo, error) {
	info, err := s.ws.Jobs().Kill(id)
	if err != nil {
		return JobInfo{}, invalid("%s", strings.TrimSpace(err.Error()))
	}
	s.ws.Jobs().Observe(context.Background())
	return info, nil
}

// JobOutput returns what the job id printed, as jobs/output shows it to the person (the last
// 2000 lines and 50 KB that are kept, secrets redacted), and the job; tail > 0 keeps only
// its last tail lines (an editor's glance at a running job), cut after the redaction so
// that no part of a secret is left at the cut. An unknown id, or a tail out of 0..2000, is
// an invalid-params error. Safe for concurrent use.
func (s *Session) JobOutput(id string, tail int) (string, JobInfo, error) {
	if tail < 0 || tail > 2000 {
		return "", JobInfo{}, invalid("tail must be a number of lines from 1 to 2000, not %d", tail)
	}
	text, info, err := s.ws.Jobs().Output(id)
	if err != nil {
		return "", JobInfo{}, invalid("%s", strings.TrimSpace(err.Error()))
	}
	if r := s.host.redactor; r != nil {
		text, _ = r.Redact(text)
	}
	if tail > 0 {
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		if len(lines) > tail {
			lines = lines[len(lines)-tail:]
		}
		text = strings.Join(lines, "\n")
	}
	return text, info, nil
}

// jobsCommand is /jobs: the session's jobs, one a line.
func (s *Session) jobsCommand() string {
	list := s.Jobs()
	if len(list) == 0 {
		return "No background jobs in this session (bash with background: true starts one)."
	}
	var b strings.Builder
	b.WriteString("Background jobs:\n")
	now := time.Now()
	for _, j := range list {
		state := "running"
		if t, err := time.Parse(time.RFC3339, j.StartedAt); err == nil && j.Running {
			state = "running for " + now.Sub(t).Round(time.Second).String()
		}
		if !j.Running && j.ExitCode != nil {
			state = fmt.Sprintf("exited with code %d", *j.ExitCode)
			if *j.ExitCode > 128 {
				state = fmt.Sprintf("killed by signal %d", *j.ExitCode-128)
			}
		}
		fmt.Fprintf(&b, "- %s: %s (%s, %d bytes of output)\n", j.JobID, j.Command, state, j.OutputBytes)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

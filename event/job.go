// This file holds the event about a session's background jobs: one started or ended
// (JobUpdate). It comes from the session layer, from the job's own goroutines, at any time
// (outside a run too: a job outlives the prompt that started it), never concurrently for
// one job; the faces send it on at once.

package event

// JobUpdate says a background job of the session started (Running) or ended (ExitCode:
// its code, or 128+N when signal N ended it).
type JobUpdate struct {
	JobID    string
	Running  bool
	ExitCode *int
}

func (JobUpdate) isEvent() {}

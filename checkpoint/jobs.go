// This file records what background jobs change: a job runs across calls and prompts, so
// its changes are recorded when pid looks (JobSince), into the checkpoint open then.

package checkpoint

import (
	"context"
	"fmt"
)

// JobSince records, in the checkpoint open now, every file that differs between the
// snapshot before and the workspace now, with its state in before, except the files pid's
// own tools last changed to what they are now (recorded already, in their checkpoints); it
// returns the snapshot to compare with next time. With no checkpoint open it records
// nothing and returns before, so that nothing is lost; nil does nothing and returns nil.
// Contract: called from a job tool's goroutine or at a prompt's end, never concurrently
// with itself for the same before; it never fails (what cannot be recorded makes the
// checkpoint incomplete).
func (s *Session) JobSince(ctx context.Context, before *Snapshot) *Snapshot {
	if before == nil {
		return nil
	}
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c == nil {
		return before
	}
	s.writing.Lock()
	after, err := s.snapshot(context.WithoutCancel(ctx))
	s.writing.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.incompleteLocked(c, fmt.Sprintf("the snapshot after a background job's changes failed (%v): what it changed is not recorded", err))
		return before
	}
	if !sameFiles(after, before.files) {
		mine := func(path string, now State) bool {
			l := s.last[path]
			return l != nil && same(*l, now)
		}
		for path, a := range after {
			b, had := before.files[path]
			switch {
			case had && same(b.st, a.st):
				continue
			case mine(path, a.st):
				continue
			case !had:
				s.noteLocked(c, path, Absent)
			default:
				s.noteLocked(c, path, b.st)
			}
			s.afterLocked(c, path, a.st, "bash")
		}
		for path, b := range before.files {
			if _, still := after[path]; !still && !mine(path, Absent) {
				s.noteLocked(c, path, b.st)
				s.afterLocked(c, path, Absent, "bash")
			}
		}
	}
	if before.snap != 0 && before.c != nil {
		done := record{T: "bashdone", CP: before.c.id, Snap: before.snap}
		if s.writeLocked(done) == nil {
			s.j.apply(&done, s.byID)
		}
	}
	return &Snapshot{c: c, files: after}
}

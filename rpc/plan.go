// This file sends the notifications about a session as a whole: planUpdate (the plan the
// model keeps with todo_write, also after session/load and session/fork), usageUpdate (the
// context meter and the cost, after each model call)
// and compactionEnd's kept part.

package rpc

import (
	"slices"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/session"
)

// planParams are planUpdate's params.
type planParams struct {
	SessionID string            `json:"sessionId"`
	Entries   []event.PlanEntry `json:"entries"`
}

// usageParams are usageUpdate's params.
type usageParams struct {
	SessionID string      `json:"sessionId"`
	Used      int         `json:"used"`
	Size      int         `json:"size"`
	Cost      *event.Cost `json:"cost,omitempty"`
}

// emitSession sends the notification of a session-wide event, and reports whether ev was
// one.
func (s *Server) emitSession(ss *session.Session, ev event.Event) bool {
	switch e := ev.(type) {
	case event.PlanUpdate:
		s.sendPlan(ss.ID(), e.Entries)
	case event.UsageUpdate:
		s.notify("usageUpdate", &usageParams{SessionID: ss.ID(), Used: e.Used, Size: e.Size, Cost: e.Cost})
	case event.ChangesUpdate:
		s.sendChanges(ss.ID(), e)
	case event.JobUpdate:
		s.sendJob(ss, e)
	default:
		return false
	}
	return true
}

func (s *Server) sendPlan(id string, entries []event.PlanEntry) {
	if entries == nil {
		entries = []event.PlanEntry{}
	}
	s.notify("planUpdate", &planParams{SessionID: id, Entries: entries})
}

// planAfter returns what sends a loaded session's plan after the answer: nothing when it
// has none.
func (s *Server) planAfter(ss *session.Session) func() {
	entries, ok := ss.Plan()
	if !ok {
		return nil
	}
	return func() { s.sendPlan(ss.ID(), entries) }
}

// planChanged returns what sends the session's plan when it is no longer before (a rewind of
// the conversation took it back): the plan now, or an empty one when it has none now.
func (s *Server) planChanged(ss *session.Session, before []event.PlanEntry) func() {
	now, _ := ss.Plan()
	if slices.Equal(now, before) {
		return nil
	}
	return func() { s.sendPlan(ss.ID(), now) }
}

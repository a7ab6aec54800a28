// This file holds the session/update kinds about a session as a whole: plan (the plan the
// model keeps with todo_write, sent whole each time it changes and after session/load's
// replay), usage_update (the context meter and the cost, after each model call) and what a
// compaction kept (compaction_update's _meta.pid.kept).

package acp

import (
	"slices"

	"github.com/pid-agent/pid/event"
)

// planUpdate is the plan update: every entry, each with content, priority and status.
type planUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	Entries       []event.PlanEntry `json:"entries"`
}

func planOf(entries []event.PlanEntry) planUpdate {
	if entries == nil {
		entries = []event.PlanEntry{}
	}
	return planUpdate{SessionUpdate: "plan", Entries: entries}
}

// usageUpdate is the usage_update update.
type usageUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Used          int         `json:"used"`
	Size          int         `json:"size"`
	Cost          *event.Cost `json:"cost,omitempty"`
}

func usageOf(e event.UsageUpdate) usageUpdate {
	return usageUpdate{SessionUpdate: "usage_update", Used: e.Used, Size: e.Size, Cost: e.Cost}
}

// keptMeta is compaction_update's _meta for what a compaction kept word for word besides
// its summary: {pid: {kept: {userMessage, planEntries, files}}}; nil when it is not known.
func keptMeta(k *event.CompactionKept) any {
	if k == nil {
		return nil
	}
	return map[string]any{"pid": map[string]any{"kept": k}}
}

// sendPlan sends the session's plan, when it has one, after session/load's replay.
// Contract: st.mu is held.
func (st *sessionState) sendPlan() {
	if entries, ok := st.ss.Plan(); ok {
		st.update(planOf(entries))
	}
}

// planChanged sends the session's plan when it is no longer before (a rewind of the
// conversation took it back): the plan now, or an empty one when it has none now.
func (st *sessionState) planChanged(before []event.PlanEntry) {
	now, _ := st.ss.Plan()
	if slices.Equal(now, before) {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.update(planOf(now))
}

// This file composes the context meter and the cost (package cost) into the session: after
// each model call the face is told how much of the model's context the next call will fill
// and, when the model has a price, what the session has cost so far (event.UsageUpdate).

package session

import (
	"github.com/pid-agent/pid/cost"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/store"
)

// Price is a model's price in USD per million tokens (provider.Price).
type Price = provider.Price

// priceAt returns the price of the model that made transcript message i: the session's
// model then (its first, or the last model change at or before i).
func (s *Session) priceAt(i int) *Price {
	s.saved.mu.Lock()
	first, changes := s.saved.header.Model, s.saved.modelChanges
	s.saved.mu.Unlock()
	return cost.PriceAt(first, changes, i)
}

// addCost adds a model call's usage at price p to the session's cost (cost.Meter.Add: a
// fork's past calls and its subagents' counted once) and returns the total. Touched by the
// run holding the session (the loop's goroutine after each model call, Compact's after a
// summary).
func (s *Session) addCost(before []llm.Message, u *llm.Usage, p *Price) float64 {
	return s.usage.Add(before, u, p, TaskName, s.priceAt)
}

// countSaved sets a loaded session's cost to what its file says it paid (cost.Meter.Restore).
//
// Contract: called once, by Load, before the session runs.
func (s *Session) countSaved(l *store.Loaded) {
	s.usage.Restore(l, TaskName)
}

// emitUsage tells the face, after the assistant message m of a model call, how full the
// context of the next call is (cost.ContextUsed: m's reported usage, else the estimate of
// the context sent plus m's) and what the session has cost.
//
// Contract: called on the loop's goroutine, right after m's MessageEnd.
func (s *Session) emitUsage(m *llm.Message) {
	before := s.compacting.lastTranscript
	s.emitCost(before, m.Usage, cost.ContextUsed(m, func() int { return s.contextTokens(before) }))
}

// emitUsageAfterCompaction tells the face the context after a compaction (the view of
// transcript now), counting the summary call's usage u in the cost.
//
// Contract: called by the run holding the session, right after CompactionEnd.
func (s *Session) emitUsageAfterCompaction(transcript []llm.Message, u *llm.Usage) {
	s.emitCost(transcript, u, s.contextTokens(transcript))
}

// emitCost adds a call's usage u (before: the transcript it was sent) to the session's cost,
// and tells the face the context's used tokens and the cost so far.
func (s *Session) emitCost(before []llm.Message, u *llm.Usage, used int) {
	model := s.currentModel()
	total := s.addCost(before, u, model.Price())
	s.face.Emit(s, cost.Event(used, model.Window, model.Price(), total))
}

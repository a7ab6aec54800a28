// This file composes the context meter and the cost (package cost) into the session: after
// each model call the face is told how much of the model's context the next call will fill
// and, when the model has a price, what the session has cost so far (event.UsageUpdate).

package session

import (
	"github.com/pid-agent/pid/compact"
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
// context of the next call is (m's reported usage, which counts the context sent and m;
// without one, the estimate of the context sent plus m's) and what the session has cost.
//
// Contract: called on the loop's goroutine, right after m's MessageEnd.
func (s *Session) emitUsage(m *llm.Message) {
	model := s.currentModel()
	before := s.compacting.lastTranscript
	used := 0
	if m.Usage != nil && m.StopReason != llm.StopError && m.StopReason != llm.StopAborted {
		used = cost.ReportedTokens(m.Usage)
	}
	if used == 0 {
		used = s.contextTokens(before) + compact.EstimateTokens(m)
	}
	price := model.Price()
	total := s.addCost(before, m.Usage, price)
	s.face.Emit(s, cost.Event(used, model.Window, price, total))
}

// emitUsageAfterCompaction tells the face the context after a compaction (the view of
// transcript now), counting the summary call's usage u in the cost.
//
// Contract: called by the run holding the session, right after CompactionEnd.
func (s *Session) emitUsageAfterCompaction(transcript []llm.Message, u *llm.Usage) {
	model := s.currentModel()
	price := model.Price()
	total := s.addCost(transcript, u, price)
	s.face.Emit(s, cost.Event(s.contextTokens(transcript), model.Window, price, total))
}

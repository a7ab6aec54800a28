// This file holds the context meter and the cost: after each model call the face is told how
// much of the model's context the next call will fill and, when the model has a price, what
// the session has cost so far (event.UsageUpdate).

package session

import (
	"encoding/json"
	"sync"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
)

// Price is a model's price in USD per million tokens (provider.Price).
type Price = provider.Price

// usageState is the session's cost so far. Touched by the run holding the session (the
// loop's goroutine after each model call, Compact's after a summary); mu makes it safe
// for a face reading it too.
type usageState struct {
	// mu guards cost and counted.
	mu sync.Mutex
	// cost is the total in USD of the model calls counted.
	cost float64
	// counted is set once the assistant messages the session started with (a loaded one's)
	// are in cost.
	counted bool
}

// priceAt returns the price of the model that made transcript message i: the session's
// model then (its first, or the last model change at or before i).
func (s *Session) priceAt(i int) *Price {
	s.saved.mu.Lock()
	raw := s.saved.header.Model
	for _, c := range s.saved.modelChanges {
		if c.at <= i {
			raw = c.cfg
		}
	}
	s.saved.mu.Unlock()
	var cfg ModelConfig
	if len(raw) == 0 || json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return cfg.Price
}

// addCost adds a model call's usage at price p to the session's cost, first counting the
// assistant messages of before (the transcript before this call) when that was not done
// yet: a loaded session's cost goes on from what its saved messages cost.
func (s *Session) addCost(before []llm.Message, u *llm.Usage, p *Price) float64 {
	s.usage.mu.Lock()
	counted := s.usage.counted
	s.usage.mu.Unlock()
	past := 0.0
	if !counted {
		for i := range before {
			if m := &before[i]; m.Role == llm.RoleAssistant && m.Usage != nil {
				past += s.priceAt(i).Cost(m.Usage)
			}
		}
	}
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	if !s.usage.counted {
		s.usage.cost += past
		s.usage.counted = true
	}
	s.usage.cost += p.Cost(u)
	return s.usage.cost
}

// reportedTokens is the context size a usage report stands for (compact's measure): the
// four counts, or the total when they are all 0.
func reportedTokens(u *llm.Usage) int {
	if sum := u.Input + u.Output + u.CacheRead + u.CacheWrite; sum > 0 {
		return sum
	}
	return u.Total
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
		used = reportedTokens(m.Usage)
	}
	if used == 0 {
		used = s.contextTokens(before) + compact.EstimateTokens(m)
	}
	var price *Price
	if model.cfg != nil {
		price = model.cfg.Price
	}
	total := s.addCost(before, m.Usage, price)
	s.face.Emit(s, s.usageEvent(used, model.window, price, total))
}

// usageEvent is the UsageUpdate of a context of used tokens in a window of size, with the
// session's total cost when the model has a price.
func (s *Session) usageEvent(used, size int, price *Price, total float64) event.UsageUpdate {
	ev := event.UsageUpdate{Used: used, Size: size}
	if price != nil {
		ev.Cost = &event.Cost{Amount: total, Currency: "USD"}
	}
	return ev
}

// emitUsageAfterCompaction tells the face the context after a compaction (the view of
// transcript now), counting the summary call's usage u in the cost.
//
// Contract: called by the run holding the session, right after CompactionEnd.
func (s *Session) emitUsageAfterCompaction(transcript []llm.Message, u *llm.Usage) {
	model := s.currentModel()
	var price *Price
	if model.cfg != nil {
		price = model.cfg.Price
	}
	total := s.addCost(transcript, u, price)
	s.face.Emit(s, s.usageEvent(s.contextTokens(transcript), model.window, price, total))
}

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
	"github.com/pid-agent/pid/store"
)

// Price is a model's price in USD per million tokens (provider.Price).
type Price = provider.Price

// usageState is the session's cost so far. Touched by the run holding the session (the
// loop's goroutine after each model call, Compact's after a summary); mu makes it safe
// for a face reading it too.
type usageState struct {
	// mu guards the fields below it.
	mu sync.Mutex
	// cost is the total in USD of the model calls counted, its subagents' included.
	cost float64
	// counted is set once the assistant messages the session started with (a loaded one's:
	// every one of its file, a rewound branch's too) are in cost.
	counted bool
	// tasks are the task calls whose subagent's usage is in cost, by tool call id.
	tasks map[string]bool
}

// priceAt returns the price of the model that made transcript message i: the session's
// model then (its first, or the last model change at or before i).
func (s *Session) priceAt(i int) *Price {
	s.saved.mu.Lock()
	raw := s.saved.header.Model
	for _, c := range s.saved.modelChanges {
		if c.At <= i {
			raw = c.Config
		}
	}
	s.saved.mu.Unlock()
	return priceOf(raw)
}

// addCost adds a model call's usage at price p to the session's cost, first counting the
// assistant messages of before (the transcript before this call) when that was not done
// yet (a fork's), and the subagents of before's task results not counted yet (at p: a
// child runs the session's model).
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
	for i := range before {
		if id, tu := taskUsage(&before[i]); tu != nil && !s.usage.tasks[id] {
			if s.usage.tasks == nil {
				s.usage.tasks = map[string]bool{}
			}
			s.usage.tasks[id] = true
			s.usage.cost += p.Cost(tu)
		}
	}
	return s.usage.cost
}

// taskUsage returns, for a task call's result, its id and what its subagent's model calls
// used (the result's details.usage); nil for another message.
func taskUsage(m *llm.Message) (string, *llm.Usage) {
	if m.Role != llm.RoleToolResult || m.ToolName != TaskName || m.Details == nil {
		return "", nil
	}
	var d struct {
		Usage *llm.Usage `json:"usage"`
	}
	raw, err := json.Marshal(m.Details)
	if err != nil || json.Unmarshal(raw, &d) != nil || d.Usage == nil {
		return "", nil
	}
	return m.ToolCallID, d.Usage
}

// countSaved sets a loaded session's cost to what its file says it paid: every assistant
// message of it, those of a branch a rewind left included, each at the price of the model
// then, and its subagents (task results' usage). The summary calls of its compactions are in
// no message, and not counted.
//
// Contract: called once, by Load, before the session runs.
func (s *Session) countSaved(l *store.Loaded) {
	price := priceOf(l.Header.Model)
	total := 0.0
	tasks := map[string]bool{}
	for _, e := range l.Entries {
		switch {
		case e.Kind == store.KindModel:
			price = priceOf(e.Model)
		case e.Kind == store.KindMessage && e.Message != nil:
			m := e.Message
			if m.Role == llm.RoleAssistant && m.Usage != nil {
				total += price.Cost(m.Usage)
			}
			if id, tu := taskUsage(m); tu != nil && !tasks[id] {
				tasks[id] = true
				total += price.Cost(tu)
			}
		}
	}
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	s.usage.cost, s.usage.counted, s.usage.tasks = total, true, tasks
}

// priceOf returns the price of a saved model configuration, nil without one.
func priceOf(raw json.RawMessage) *Price {
	var cfg ModelConfig
	if len(raw) == 0 || json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return cfg.Price
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

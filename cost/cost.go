// Package cost keeps what a session's model calls have cost: its entry point is Meter, which
// adds each call's usage at the model's price, counts a subagent's calls once (its task
// call's result carries their usage) and, for a loaded session, every call its file
// records. It also gives the context meter's measure of a usage report (ReportedTokens), how
// full the context is after a call (ContextUsed) and the usageUpdate event a face is sent (Event). It is pure: it knows no session, and reads
// no file.
package cost

import (
	"encoding/json"
	"sync"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/store"
)

// Meter is a session's cost so far. Its zero value is a session that has paid nothing yet;
// its methods are safe for concurrent use.
type Meter struct {
	// mu guards the fields below it.
	mu sync.Mutex
	// total is the total in USD of the model calls counted, its subagents' included.
	total float64
	// counted is set once the assistant messages the session started with (a loaded one's:
	// every one of its file, a rewound branch's too) are in total.
	counted bool
	// tasks are the task calls whose subagent's usage is in total, by tool call id.
	tasks map[string]bool
}

// Add adds a model call's usage u at price p (nil: free) to the cost and returns the total:
// first the assistant messages of before (the transcript before this call) when that was
// not done yet (a fork's), each at priceAt its index, and the subagents of before's results
// of the tool named task not counted yet (at p: a child runs the session's model).
func (m *Meter) Add(before []llm.Message, u *llm.Usage, p *provider.Price, task string, priceAt func(i int) *provider.Price) float64 {
	m.mu.Lock()
	counted := m.counted
	m.mu.Unlock()
	past := 0.0
	if !counted {
		for i := range before {
			if msg := &before[i]; msg.Role == llm.RoleAssistant && msg.Usage != nil {
				past += priceAt(i).Cost(msg.Usage)
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.counted {
		m.total += past
		m.counted = true
	}
	m.total += p.Cost(u)
	for i := range before {
		if id, tu := taskUsage(&before[i], task); tu != nil && !m.tasks[id] {
			if m.tasks == nil {
				m.tasks = map[string]bool{}
			}
			m.tasks[id] = true
			m.total += p.Cost(tu)
		}
	}
	return m.total
}

// Restore sets the cost of a loaded session to what its file says it paid: every assistant
// message of it, those of a branch a rewind left included, each at the price of the model
// then, and its subagents (the usage of the results of the tool named task). The summary
// calls of its compactions are in no message, and not counted.
//
// Contract: called once, before the session runs.
func (m *Meter) Restore(l *store.Loaded, task string) {
	price := priceOf(l.Header.Model)
	total := 0.0
	tasks := map[string]bool{}
	for _, e := range l.Entries {
		switch {
		case e.Kind == store.KindModel:
			price = priceOf(e.Model)
		case e.Kind == store.KindMessage && e.Message != nil:
			msg := e.Message
			if msg.Role == llm.RoleAssistant && msg.Usage != nil {
				total += price.Cost(msg.Usage)
			}
			if id, tu := taskUsage(msg, task); tu != nil && !tasks[id] {
				tasks[id] = true
				total += price.Cost(tu)
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total, m.counted, m.tasks = total, true, tasks
}

// taskUsage returns, for a result of the tool named task, its call's id and what its
// subagent's model calls used (the result's details.usage); nil for another message.
func taskUsage(m *llm.Message, task string) (string, *llm.Usage) {
	if m.Role != llm.RoleToolResult || m.ToolName != task || m.Details == nil {
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

// priceOf returns the price of a saved model configuration, nil without one.
func priceOf(raw json.RawMessage) *provider.Price {
	var cfg provider.Model
	if len(raw) == 0 || json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return cfg.Price
}

// PriceAt returns the price of the model that made transcript message i: first's (the
// session's first model, as saved), or that of the last of changes at or before i.
func PriceAt(first json.RawMessage, changes []history.ModelChange, i int) *provider.Price {
	raw := first
	for _, c := range changes {
		if c.At <= i {
			raw = c.Config
		}
	}
	return priceOf(raw)
}

// reportedTokens is the context size a usage report stands for (compact's measure): the
// four counts, or the total when they are all 0.
func reportedTokens(u *llm.Usage) int {
	if sum := u.Input + u.Output + u.CacheRead + u.CacheWrite; sum > 0 {
		return sum
	}
	return u.Total
}

// ContextUsed is how full the context of the next call is after the assistant message m of
// a model call: m's reported usage (ReportedTokens: it counts the context sent and m) when
// it has one and the call neither failed nor was aborted; else sent (the context sent,
// estimated; called only then) plus m's estimated tokens.
func ContextUsed(m *llm.Message, sent func() int) int {
	used := 0
	if m.Usage != nil && m.StopReason != llm.StopError && m.StopReason != llm.StopAborted {
		used = reportedTokens(m.Usage)
	}
	if used == 0 {
		used = sent() + compact.EstimateTokens(m)
	}
	return used
}

// Event is the UsageUpdate of a context of used tokens in a window of size, with the
// session's total cost when the model has a price.
func Event(used, size int, price *provider.Price, total float64) event.UsageUpdate {
	ev := event.UsageUpdate{Used: used, Size: size}
	if price != nil {
		ev.Cost = &event.Cost{Amount: total, Currency: "USD"}
	}
	return ev
}
